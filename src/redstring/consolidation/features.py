"""The evidence that two entities are one: names, properties, neighbours, vectors.

Pure. An entity is first turned into a `Profile` (its folded name and
aliases, its scalar properties folded, the names of its neighbours, its
vector if any); `compare` then measures one pair of profiles. What the
evidence is worth is `policy`'s business, not this module's.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from redstring.consolidation.names import (
    SHORT_NAME_LETTERS,
    NameForm,
    damerau_edits,
    fold,
    jaro_winkler,
    name_form,
    name_similarity,
    token_similarity,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

#: The property under which an entity lists its other names.
ALIASES_KEY: Final = "aliases"

#: Two differing string values at least this Jaro-Winkler-similar are near, not different.
NEAR_TEXT: Final = 0.9


#: Two measures this close (relative to the larger) agree; further apart, they count against.
MEASURE_TOLERANCE: Final = 0.05

#: A token of one name matched by no token of the other at least this similar is unmatched.
TOKEN_MATCH: Final = 0.85

#: A key ending so names an identifier (folded, so `geonames_id` and `countryCode` both do).
_IDENTIFIER_SUFFIXES: Final = ("_id", "code")

#: A value shaped like an identifier: a UUID, or one run of letters, digits, `-` and `_`
#: holding a digit and a letter ("Q42", "GB-LND", "a1b2").
_ID_SHAPE: Final = re.compile(r"(?=[^ ]*\d)(?=[^ ]*[a-z])[a-z0-9_-]{2,64}")

#: A key with at most this many distinct values per holder (and `_CATEGORY_HOLDERS` holders)
#: is a category.
_CATEGORY_SHARE: Final = 0.1
_CATEGORY_HOLDERS: Final = 20

#: Entities of a type whose names are one token more often than this have one-token full names.
_SINGLE_TOKEN_TYPE: Final = 0.5


class PropertyKind(StrEnum):
    """What a property is, which decides how two values of it count. A wire format.

    `IDENTIFIER`: equal is strong evidence for, different strong against,
    never near. `MEASURE`: a number; within `MEASURE_TOLERANCE` it agrees,
    further apart it counts against in proportion. `VALUE`: anything else;
    equal counts by its rarity, near (one digit edit, or Jaro-Winkler at
    least `NEAR_TEXT`) for, different against. See ADR 0071.
    """

    IDENTIFIER = "identifier"
    MEASURE = "measure"
    CATEGORY = "category"
    VALUE = "value"


class Agreement(StrEnum):
    """How two values of one property compare. The values are a wire format."""

    EQUAL = "equal"
    NEAR = "near"
    DIFFERENT = "different"


def _scalar(value: object) -> str | None:
    """A property value folded for comparison, or `None` when it is not a scalar."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        folded = fold(value)
        return folded or None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


@dataclass(frozen=True, slots=True)
class Profile:
    """One entity, prepared for comparison.

    `names` holds the name first, then each alias; `properties` the scalar
    values folded (lists, objects, booleans and `aliases` are left out);
    `numbers` the values of `properties` that were numbers, as numbers;
    `neighbours` the folded names of the entities it is related to.
    """

    entity_id: EntityId
    entity_type: str
    names: tuple[NameForm, ...]
    properties: dict[str, str]
    neighbours: frozenset[str] = frozenset()
    vector: tuple[float, ...] | None = None
    numbers: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> NameForm:
        """The entity's own name, folded."""
        return self.names[0]


def profile_of(
    entity: Entity,
    *,
    neighbours: Iterable[str] = (),
    vector: Sequence[float] | None = None,
) -> Profile:
    """The `Profile` of `entity`, with the given neighbour names and vector."""
    names = [name_form(entity.name)]
    aliases = entity.properties.get(ALIASES_KEY)
    if isinstance(aliases, list):
        seen = {names[0].text}
        for alias in aliases:
            if isinstance(alias, str):
                form = name_form(alias)
                if form.tokens and form.text not in seen:
                    seen.add(form.text)
                    names.append(form)
    properties = {}
    numbers: dict[str, float] = {}
    for key, value in entity.properties.items():
        folded = _scalar(value) if key != ALIASES_KEY else None
        if folded is not None:
            properties[key] = folded
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers[key] = float(value)
    folded_neighbours = frozenset(f for f in (name_form(n).sorted_text for n in neighbours) if f)
    return Profile(
        entity_id=entity.id,
        entity_type=fold(entity.entity_type),
        names=tuple(names),
        properties=properties,
        neighbours=folded_neighbours,
        vector=None if vector is None else tuple(vector),
        numbers=numbers,
    )


def kind_by_key(key: str) -> PropertyKind | None:
    """`IDENTIFIER` when the key's name says so (`id`, or ending `_id` or `code`), else `None`."""
    folded = key.casefold()
    if folded == "id" or folded.endswith(_IDENTIFIER_SUFFIXES):
        return PropertyKind.IDENTIFIER
    return None


def looks_like_id(value: str) -> bool:
    """Whether a folded value is shaped like an identifier ("q42", "gb-lnd"), not a word."""
    return _ID_SHAPE.fullmatch(value) is not None


@dataclass(slots=True)
class Population:
    """What one pass's profiles hold: value and token counts, and each property's kind.

    A shared rare value (a date of birth) is strong evidence; a shared common
    one (a large city) is weak. `frequency` is the share of profiles holding
    the value under the key, at least `1 / size`; `rarity` says the same of
    a name token on `0..1`. A property's kind is the declared one, else
    `IDENTIFIER` by its key's name, else `MEASURE` when every value is a
    number, else `IDENTIFIER` when every value is shaped like an id, else
    `CATEGORY` when its values are few for its holders (at most one in ten,
    twenty holders or more), else `VALUE` (ADR 0071).
    """

    size: int
    _counts: dict[tuple[str, str], int] = field(default_factory=dict)
    _kinds: dict[str, PropertyKind] = field(default_factory=dict)
    _tokens: dict[str, int] = field(default_factory=dict)
    _single_token_types: frozenset[str] = frozenset()
    _full_names: dict[tuple[str, str], int] = field(default_factory=dict)
    _measures: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, profiles: Iterable[Profile], *, kinds: Mapping[str, PropertyKind] | None = None
    ) -> Population:
        """Count the property values and name tokens of `profiles`; decide each key's kind."""
        tally = PopulationTally()
        for profile in profiles:
            tally.add(profile)
        return tally.population(kinds=kinds)

    def frequency(self, key: str, value: str) -> float:
        """The share of profiles holding `value` under `key`, on `(0, 1]`."""
        return max(self._counts.get((key, value), 1), 1) / self.size

    def within(self, key: str, value: float, tolerance: float) -> float:
        """The share of profiles whose measure `key` is within `tolerance` of `value`, on `(0, 1]`.

        What an agreeing measure is worth depends on how crowded its values
        are, not on how rare the exact figure is: a population rounded to
        "36000" is rare as a string, but one city in a hundred is within 5%
        of it. Relative to the larger of the two, as `compare` measures it.
        """
        values = self._measures.get(key, [])
        if value > 0:
            low, high = value * (1.0 - tolerance), value / (1.0 - tolerance)
        elif value < 0:
            low, high = value / (1.0 - tolerance), value * (1.0 - tolerance)
        else:
            low = high = 0.0
        held = bisect.bisect_right(values, high) - bisect.bisect_left(values, low)
        return max(held, 1) / self.size

    def kind(self, key: str) -> PropertyKind:
        """The kind of property `key` (`VALUE` for a key the pass never saw)."""
        return self._kinds.get(key, PropertyKind.VALUE)

    def rarity(self, token: str) -> float:
        """How rare a name token is in the pass, on `0..1`: `1.0` held by one profile."""
        if self.size < 2:
            return 1.0
        held = max(self._tokens.get(token, 1), 1)
        return max(0.0, 1.0 - math.log(held) / math.log(self.size))

    def full_names_with(self, entity_type: str, token: str) -> int:
        """How many distinct full names (two tokens or more, no initial) of a type hold `token`."""
        return self._full_names.get((entity_type, token), 0)

    def single_token_names(self, entity_type: str) -> bool:
        """Whether most names of `entity_type` are one token (places), so one token is whole."""
        return entity_type in self._single_token_types


def _drop(counter: Counter[Any], key: object) -> None:
    """Count one `key` less, forgetting it at zero."""
    held = counter[key] - 1
    if held:
        counter[key] = held
    else:
        del counter[key]


class PopulationTally:
    """What `Population.of` counts, kept as profiles arrive and leave a pass's rounds.

    `add` and `remove` a profile (the same object, or an equal one); a
    `population` is then exactly `Population.of` over the profiles held,
    without counting them again (a round of a pass over 74k profiles after
    a merge of a few: ADR 0109).
    """

    __slots__ = (
        "_counts",
        "_distinct",
        "_full",
        "_holders",
        "_holding",
        "_id_shaped",
        "_numbers",
        "_numeric",
        "_of_type",
        "_single",
        "_size",
        "_tokens",
    )

    def __init__(self) -> None:
        self._size = 0
        self._counts: Counter[tuple[str, str]] = Counter()
        self._distinct: Counter[str] = Counter()
        self._tokens: Counter[str] = Counter()
        self._holders: Counter[str] = Counter()
        self._numeric: Counter[str] = Counter()
        self._id_shaped: Counter[str] = Counter()
        self._of_type: Counter[str] = Counter()
        self._single: Counter[str] = Counter()
        self._full: Counter[tuple[str, str]] = Counter()
        self._holding: Counter[tuple[str, str]] = Counter()
        self._numbers: dict[str, Counter[float]] = {}

    @staticmethod
    def _full_names(profile: Profile) -> set[tuple[str, str]]:
        return {
            (profile.entity_type, form.sorted_text)
            for form in profile.names
            if len(form.tokens) > 1 and not form.is_abbreviated
        }

    def add(self, profile: Profile) -> None:
        """Count `profile` in."""
        self._size += 1
        for full in self._full_names(profile):
            if not self._full[full]:
                self._holding.update((full[0], token) for token in set(full[1].split()))
            self._full[full] += 1
        for item in profile.properties.items():
            if not self._counts[item]:
                self._distinct[item[0]] += 1
            self._counts[item] += 1
        self._tokens.update({token for form in profile.names for token in form.tokens})
        self._of_type[profile.entity_type] += 1
        if len(profile.name.tokens) == 1:
            self._single[profile.entity_type] += 1
        for key, value in profile.properties.items():
            self._holders[key] += 1
            if key in profile.numbers:
                self._numeric[key] += 1
                self._numbers.setdefault(key, Counter())[profile.numbers[key]] += 1
            elif looks_like_id(value):
                self._id_shaped[key] += 1

    def remove(self, profile: Profile) -> None:
        """Count `profile` out: it, or an equal profile, was counted in."""
        self._size -= 1
        for full in self._full_names(profile):
            _drop(self._full, full)
            if not self._full[full]:
                for token in set(full[1].split()):
                    _drop(self._holding, (full[0], token))
        for item in profile.properties.items():
            _drop(self._counts, item)
            if not self._counts[item]:
                _drop(self._distinct, item[0])
        for token in {token for form in profile.names for token in form.tokens}:
            _drop(self._tokens, token)
        _drop(self._of_type, profile.entity_type)
        if len(profile.name.tokens) == 1:
            _drop(self._single, profile.entity_type)
        for key, value in profile.properties.items():
            _drop(self._holders, key)
            if key in profile.numbers:
                _drop(self._numeric, key)
                numbers = self._numbers[key]
                _drop(numbers, profile.numbers[key])
                if not numbers:
                    del self._numbers[key]
            elif looks_like_id(value):
                _drop(self._id_shaped, key)

    def population(self, *, kinds: Mapping[str, PropertyKind] | None = None) -> Population:
        """The `Population` of the profiles counted in; `kinds` overrides decided kinds."""
        decided: dict[str, PropertyKind] = {}
        for key, held in self._holders.items():
            kind = kind_by_key(key)
            if kind is None and self._numeric[key] == held:
                kind = PropertyKind.MEASURE
            elif kind is None and self._id_shaped[key] == held:
                kind = PropertyKind.IDENTIFIER
            elif (
                kind is None
                and held >= _CATEGORY_HOLDERS
                and self._distinct[key] <= _CATEGORY_SHARE * held
            ):
                kind = PropertyKind.CATEGORY
            decided[key] = kind or PropertyKind.VALUE
        decided.update(kinds or {})
        return Population(
            size=max(self._size, 1),
            _counts=dict(self._counts),
            _kinds=decided,
            _tokens=dict(self._tokens),
            _single_token_types=frozenset(
                t for t, n in self._of_type.items() if self._single[t] > _SINGLE_TOKEN_TYPE * n
            ),
            _full_names=dict(self._holding),
            _measures={
                key: sorted(values.elements())
                for key, values in self._numbers.items()
                if decided[key] is PropertyKind.MEASURE
            },
        )


class PropertyComparison(NamedTuple):
    """One property both entities hold, and how their values compare.

    A named tuple, not a frozen dataclass: a pass builds one for every
    property of every pair it scores, and a tuple is built in a third of
    the time (ADR 0118).
    """

    key: str
    agreement: Agreement
    frequency: float
    kind: PropertyKind = PropertyKind.VALUE
    difference: float = 0.0
    values: tuple[str, str] = ("", "")


@dataclass(frozen=True, slots=True)
class PairFeatures:
    """What `compare` measured for one pair.

    `name` is the best `name_similarity` over every name and alias of each
    side, `weak_name` whether the names that scored it are weak on either
    side (short, or one token where the type's names mostly have more),
    `abbreviated` whether either has an initial, `unmatched` each token of
    those two names that no token of the other matches, with its rarity
    (only where the type's names are whole, mostly one token: a person's
    missing token is a partial mention, a place's is another place),
    `cosine` `None` unless both have vectors, `sole_full_name` whether one
    of those names is a bare token (a surname) that the other, a full name,
    holds and that no other full name of the pass holds (ADR 0088),
    `unconfirmed` whether both list other names (aliases) and neither's own
    name is among the other's (only where the type's names are whole: two
    records of one place that each list its names share one; ADR 0098).
    """

    name: float
    weak_name: bool
    abbreviated: bool
    properties: tuple[PropertyComparison, ...]
    shared_neighbours: int
    cosine: float | None
    unmatched: tuple[tuple[str, float], ...] = ()
    sole_full_name: bool = False
    unconfirmed: bool = False


def _values_agree(left: str, right: str) -> Agreement:
    if left == right:
        return Agreement.EQUAL
    if left.isdigit() and right.isdigit():
        near = damerau_edits(left, right) <= 1
    else:
        near = jaro_winkler(left, right) >= NEAR_TEXT
    return Agreement.NEAR if near else Agreement.DIFFERENT


def _cosine(left: tuple[float, ...], right: tuple[float, ...]) -> float | None:
    if len(left) != len(right):
        return None
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norm = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return None if norm == 0.0 else dot / norm


def _unmatched(left: NameForm, right: NameForm) -> list[str]:
    """The tokens (initials aside) of either name that no token of the other matches."""
    found = []
    for one, other in ((left, right), (right, left)):
        for token in one.tokens:
            if len(token) > 1:
                for candidate in other.tokens:  # loops, not all(): this runs for every pair
                    if token_similarity(token, candidate) >= TOKEN_MATCH:
                        break
                else:
                    found.append(token)
    return found


#: The similarity two whole one-token names (places) score at one and at two edits apart.
_ONE_EDIT: Final = 0.96
_TWO_EDITS: Final = 0.9
_MORE_EDITS: Final = 0.85


def _whole_token_similarity(left: NameForm, right: NameForm, similarity: float) -> float:
    """Two one-token whole names by their edits: Jaro-Winkler's prefix bonus rewards a stem.

    "Aleksandrov" and "Aleksandrovsk" are two towns though they share eleven
    letters; a respelling ("Johanesburg") is one or two edits away.
    """
    if similarity >= 1.0 or similarity <= _MORE_EDITS:
        return similarity  # no cap can lower it
    a, b = left.tokens[0], right.tokens[0]
    edits = damerau_edits(a, b)
    cap = _ONE_EDIT if edits <= 1 else _TWO_EDITS if edits == 2 else _MORE_EDITS
    return min(similarity, cap)


def _name_pairs(
    left: Sequence[NameForm], right: Sequence[NameForm]
) -> Iterable[tuple[NameForm, NameForm]]:
    """The name pairs worth scoring, in order: those with equal sorted tokens when any score 1.

    Only names with equal sorted tokens score `1.0`, so when one such pair
    does (no initial reordered) no other pair can beat it, and the rest of
    the grid of names and aliases is skipped.
    """
    pairs = [(a, b) for a in left for b in right]
    exact = [(a, b) for a, b in pairs if a.sorted_text == b.sorted_text]
    if any(name_similarity(a, b) >= 1.0 for a, b in exact):
        return exact
    return pairs


def _weak(form: NameForm, single_token_names: bool) -> bool:
    if form.letters < SHORT_NAME_LETTERS:
        return True
    return len(form.tokens) < 2 and not single_token_names


def _compare_property(
    key: str, left: Profile, right: Profile, population: Population, tolerance: float
) -> PropertyComparison:
    a, b = left.properties[key], right.properties[key]
    kind = population.kind(key)
    if kind is PropertyKind.IDENTIFIER or kind is PropertyKind.CATEGORY:
        agreement = Agreement.EQUAL if a == b else Agreement.DIFFERENT
        return PropertyComparison(key, agreement, population.frequency(key, a), kind, 0.0, (a, b))
    if kind is PropertyKind.MEASURE:
        x, y = left.numbers.get(key), right.numbers.get(key)
        if x is not None and y is not None:
            frequency = population.within(key, x, tolerance)
            if x == y:
                return PropertyComparison(key, Agreement.EQUAL, frequency, kind, 0.0, (a, b))
            difference = abs(x - y) / max(abs(x), abs(y))
            agreement = Agreement.NEAR if difference <= tolerance else Agreement.DIFFERENT
            return PropertyComparison(key, agreement, frequency, kind, difference, (a, b))
    frequency = population.frequency(key, a)
    return PropertyComparison(key, _values_agree(a, b), frequency, PropertyKind.VALUE, 0.0, (a, b))


#: What `compare` measured of a pair's names: best similarity, weak, abbreviated, unmatched,
#: and the bare token one name is of the other's full name (`""` when it is not).
_NameEvidence = tuple[float, bool, bool, tuple[str, ...], str]


def _name_evidence(left: Profile, right: Profile, single: bool) -> _NameEvidence:
    best, weak, abbreviated = -1.0, True, False
    best_pair = (left.name, right.name)
    for a, b in _name_pairs(left.names, right.names):
        if len(a.tokens) == 1 and len(b.tokens) == 1:
            # What `name_similarity` gives two one-token names, without its checks.
            similarity = token_similarity(a.text, b.text)
            if single:
                similarity = _whole_token_similarity(a, b, similarity)
        else:
            similarity = name_similarity(a, b)
        if similarity > best or (similarity == best and weak):
            pair_weak = _weak(a, single) or _weak(b, single)
            if similarity > best or not pair_weak:
                best = similarity
                weak = pair_weak
                abbreviated = a.is_abbreviated or b.is_abbreviated
                best_pair = (a, b)
    unmatched = tuple(_unmatched(*best_pair)) if single else ()
    return max(best, 0.0), weak, abbreviated, unmatched, "" if single else _bare(*best_pair)


def _bare(left: NameForm, right: NameForm) -> str:
    """The one token of either name that the other, a full name, holds ("Doe", "John Doe")."""
    for one, other in ((left, right), (right, left)):
        if (
            len(one.tokens) == 1
            and len(other.tokens) > 1
            and not other.is_abbreviated
            and one.tokens[0] in other.tokens
        ):
            return one.tokens[0]
    return ""


def unconfirmed_names(left: Profile, right: Profile) -> bool:
    """Whether both list other names and neither's own name is one of the other's."""
    if len(left.names) < 2 or len(right.names) < 2:
        return False
    listed = {form.sorted_text for form in right.names}
    if left.name.sorted_text in listed:
        return False
    return right.name.sorted_text not in {form.sorted_text for form in left.names}


class EvidenceMemo(Protocol):
    """What `compare` reads of a pass's memo (`PassMemo`): name evidence measured once."""

    def evidence(self, left: Profile, right: Profile, single: bool) -> _NameEvidence:
        """The name evidence of the pair, measured once."""
        ...


def compare_properties(
    left: Profile, right: Profile, population: Population, measure_tolerance: float
) -> tuple[PropertyComparison, ...]:
    """How each property both hold compares, sorted by key, as `compare` measures it."""
    return tuple(
        _compare_property(key, left, right, population, measure_tolerance)
        for key in sorted(left.properties.keys() & right.properties.keys())
    )


def compare(
    left: Profile,
    right: Profile,
    population: Population,
    *,
    measure_tolerance: float = MEASURE_TOLERANCE,
    memo: EvidenceMemo | None = None,
    properties: tuple[PropertyComparison, ...] | None = None,
) -> PairFeatures:
    """Measure the evidence that `left` and `right` are one thing.

    Deterministic and symmetric in everything but the order of `properties`
    (sorted by key) and of `unmatched`. Properties held by only one side are
    not evidence; each is compared as its kind in `population` says. With
    `memo`, name evidence measured before for the same two profiles is
    read, not measured again; `properties`, when given, is what
    `compare_properties` gave for the pair.
    """
    single = population.single_token_names(left.entity_type)
    if memo is None:
        name, weak, abbreviated, unmatched, bare = _name_evidence(left, right, single)
    else:
        name, weak, abbreviated, unmatched, bare = memo.evidence(left, right, single)
    if properties is None:
        properties = compare_properties(left, right, population, measure_tolerance)
    cosine = (
        None if left.vector is None or right.vector is None else _cosine(left.vector, right.vector)
    )
    return PairFeatures(
        name=name,
        weak_name=weak,
        abbreviated=abbreviated,
        properties=properties,
        shared_neighbours=len(left.neighbours & right.neighbours),
        cosine=cosine,
        unmatched=tuple((token, population.rarity(token)) for token in unmatched),
        sole_full_name=bool(bare) and population.full_names_with(left.entity_type, bare) == 1,
        unconfirmed=single and unconfirmed_names(left, right),
    )
