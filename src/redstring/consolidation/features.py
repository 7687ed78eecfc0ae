"""The evidence that two entities are one: names, properties, neighbours, vectors.

Pure. An entity is first turned into a `Profile` (its folded name and
aliases, its scalar properties folded, the names of its neighbours, its
vector if any); `compare` then measures one pair of profiles. What the
evidence is worth is `policy`'s business, not this module's.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

import jellyfish

from redstring.consolidation.names import NameForm, fold, name_form, name_similarity

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

#: The property under which an entity lists its other names.
ALIASES_KEY: Final = "aliases"

#: Two differing string values at least this Jaro-Winkler-similar are near, not different.
NEAR_TEXT: Final = 0.9


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
    `neighbours` the folded names of the entities it is related to.
    """

    entity_id: EntityId
    entity_type: str
    names: tuple[NameForm, ...]
    properties: dict[str, str]
    neighbours: frozenset[str] = frozenset()
    vector: tuple[float, ...] | None = None

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
    for key, value in entity.properties.items():
        folded = _scalar(value) if key != ALIASES_KEY else None
        if folded is not None:
            properties[key] = folded
    folded_neighbours = frozenset(f for f in (name_form(n).sorted_text for n in neighbours) if f)
    return Profile(
        entity_id=entity.id,
        entity_type=fold(entity.entity_type),
        names=tuple(names),
        properties=properties,
        neighbours=folded_neighbours,
        vector=None if vector is None else tuple(vector),
    )


@dataclass(slots=True)
class Population:
    """How often each property value occurs among the profiles of one pass.

    A shared rare value (a date of birth) is strong evidence; a shared common
    one (a large city) is weak. `frequency` is the share of profiles holding
    the value under the key, at least `1 / size`.
    """

    size: int
    _counts: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def of(cls, profiles: Iterable[Profile]) -> Population:
        """Count the property values of `profiles`."""
        counts: Counter[tuple[str, str]] = Counter()
        size = 0
        for profile in profiles:
            size += 1
            counts.update(profile.properties.items())
        return cls(size=max(size, 1), _counts=dict(counts))

    def frequency(self, key: str, value: str) -> float:
        """The share of profiles holding `value` under `key`, on `(0, 1]`."""
        return max(self._counts.get((key, value), 1), 1) / self.size


@dataclass(frozen=True, slots=True)
class PropertyComparison:
    """One property both entities hold, and how their values compare."""

    key: str
    agreement: Agreement
    frequency: float


@dataclass(frozen=True, slots=True)
class PairFeatures:
    """What `compare` measured for one pair.

    `name` is the best `name_similarity` over every name and alias of each
    side, `weak_name` whether the names that scored it are weak on either
    side (one token or short), `abbreviated` whether either has an initial,
    `cosine` `None` unless both have vectors.
    """

    name: float
    weak_name: bool
    abbreviated: bool
    properties: tuple[PropertyComparison, ...]
    shared_neighbours: int
    cosine: float | None


def _values_agree(left: str, right: str) -> Agreement:
    if left == right:
        return Agreement.EQUAL
    if left.isdigit() and right.isdigit():
        near = jellyfish.damerau_levenshtein_distance(left, right) <= 1
    else:
        near = jellyfish.jaro_winkler_similarity(left, right) >= NEAR_TEXT
    return Agreement.NEAR if near else Agreement.DIFFERENT


def _cosine(left: tuple[float, ...], right: tuple[float, ...]) -> float | None:
    if len(left) != len(right):
        return None
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norm = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return None if norm == 0.0 else dot / norm


def compare(left: Profile, right: Profile, population: Population) -> PairFeatures:
    """Measure the evidence that `left` and `right` are one thing.

    Deterministic and symmetric in everything but the order of `properties`
    (sorted by key). Properties held by only one side are not evidence.
    """
    best, weak, abbreviated = -1.0, True, False
    for a in left.names:
        for b in right.names:
            similarity = name_similarity(a, b)
            if similarity > best or (similarity == best and weak and not (a.is_weak or b.is_weak)):
                best = similarity
                weak = a.is_weak or b.is_weak
                abbreviated = a.is_abbreviated or b.is_abbreviated
    comparisons = tuple(
        PropertyComparison(
            key=key,
            agreement=_values_agree(left.properties[key], right.properties[key]),
            frequency=population.frequency(key, left.properties[key]),
        )
        for key in sorted(left.properties.keys() & right.properties.keys())
    )
    cosine = (
        None if left.vector is None or right.vector is None else _cosine(left.vector, right.vector)
    )
    return PairFeatures(
        name=max(best, 0.0),
        weak_name=weak,
        abbreviated=abbreviated,
        properties=comparisons,
        shared_neighbours=len(left.neighbours & right.neighbours),
        cosine=cosine,
    )
