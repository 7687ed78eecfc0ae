"""Consolidation on places: the demo's own cities, and a slice of the bench's place set.

The demo's 4,000 GeoNames cities are each a distinct place with its own id;
a dry run may propose a merge only where its evidence line says what
outweighed a differing id or a population more than 5% apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from uuid import NAMESPACE_URL, uuid5

from bench.consolidation import evaluate, places

from redstring import (
    Consolidator,
    Entity,
    EntityId,
    ExtractionMethod,
    InMemoryEventLog,
    InMemoryGraphStore,
    TenantId,
    normalize_name,
)

CITIES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "data" / "cities.jsonl"
TENANT = TenantId(uuid5(NAMESPACE_URL, "redstring-quality-demo-cities"))


def _cities() -> list[Entity]:
    rows = [json.loads(line) for line in CITIES.read_text(encoding="utf-8").splitlines()]
    return [
        Entity(
            id=EntityId(uuid5(NAMESPACE_URL, f"demo/{row['properties']['geonames_id']}")),
            tenant_id=TENANT,
            name=row["name"],
            normalized_name=normalize_name(row["name"]),
            entity_type=row["entity_type"],
            properties=row["properties"],
            extraction_method=ExtractionMethod.MANUAL,
            confidence=1.0,
        )
        for row in rows
    ]


async def test_no_proposed_merge_joins_demo_cities_of_other_ids_or_populations_unsaid() -> None:
    cities = _cities()
    by_id = {city.id: city for city in cities}
    graph = InMemoryGraphStore()
    await graph.upsert_entities(cities)
    report = await Consolidator(graph=graph, event_log=InMemoryEventLog()).consolidate(
        TENANT, dry_run=True
    )
    for merge in report.merges:
        canonical = by_id[merge.canonical_id].properties
        for merged_id in merge.merged_ids:
            other = by_id[merged_id].properties
            if other["geonames_id"] != canonical["geonames_id"]:
                assert "geonames_id different" in merge.reason, merge
            low, high = sorted((other["population"], canonical["population"]))
            if (high - low) / high > 0.05:
                assert "population different" in merge.reason, merge
    assert report.entities == 4_000


async def test_a_place_set_slice_merges_precisely() -> None:
    figures = await evaluate(places(1_500))
    assert figures["pairwise_precision"] >= 0.9
    assert figures["pairwise_recall"] >= 0.75
    assert figures["second_pass_merges"] == 0


def test_the_place_set_is_the_same_on_every_build() -> None:
    first, second = places(300), places(300)
    assert [e.name for e in first.entities] == [e.name for e in second.entities]
    assert first.labels == second.labels
    assert len(set(first.labels)) < len(first.labels)
