"""The graph projection, against the real in-memory graph store."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from redstring.domain.ids import EntityId
from redstring.domain.merging import absorb
from redstring.domain.vector import VectorRecord
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.projections.graph import GraphProjection
from redstring.projections.replay import Projection
from redstring.testing.event_log import (
    make_document_extracted,
    make_entities_embedded,
    make_entities_merged,
    make_merge_undone,
)
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from pathlib import Path


def test_it_is_a_projection() -> None:
    assert isinstance(GraphProjection(InMemoryGraphStore()), Projection)


async def test_a_document_writes_its_entities_and_their_relationships() -> None:
    store = InMemoryGraphStore()
    ada, charles = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    knows = make_relationship(ada, charles, relationship_type="knows")
    await GraphProjection(store).apply(make_document_extracted([ada, charles], [knows]))
    assert await store.get_entity(ada.id, TENANT) == ada
    assert await store.get_entity(charles.id, TENANT) == charles
    assert await store.get_relationship(knows.id, TENANT) == knows
    assert await store.get_relationships(charles.id, TENANT) == [knows]


async def test_applying_a_document_twice_leaves_the_store_as_once() -> None:
    store = InMemoryGraphStore()
    ada, charles = make_entity(), make_entity()
    event = make_document_extracted([ada, charles], [make_relationship(ada, charles)])
    projection = GraphProjection(store)
    await projection.apply(event)
    once = (await store.find_entities(TENANT), await store.get_relationships(ada.id, TENANT))
    await projection.apply(event)
    twice = (await store.find_entities(TENANT), await store.get_relationships(ada.id, TENANT))
    assert twice == once
    assert len(once[0]) == 2
    assert len(once[1]) == 1


async def test_a_later_document_overwrites_an_entity_in_its_own_tenant_only() -> None:
    store = InMemoryGraphStore()
    same = EntityId(UUID(int=1))
    theirs = make_entity(id=same, tenant_id=OTHER_TENANT, name="Theirs")
    first, second = make_entity(id=same, name="First"), make_entity(id=same, name="Second")
    projection = GraphProjection(store)
    await projection.apply(make_document_extracted([theirs], tenant_id=OTHER_TENANT))
    await projection.apply(make_document_extracted([first]))
    await projection.apply(make_document_extracted([second]))
    assert await store.get_entity(same, TENANT) == second
    assert await store.get_entity(same, OTHER_TENANT) == theirs


async def test_an_embedding_event_changes_nothing_in_the_graph() -> None:
    store = InMemoryGraphStore()
    record = VectorRecord(entity_id=EntityId(UUID(int=1)), tenant_id=TENANT, vector=[1.0] * 4)
    await GraphProjection(store).apply(make_entities_embedded([record]))
    assert await store.find_entities(TENANT) == []


async def test_a_merged_away_entity_extracted_again_folds_its_new_facts_into_the_canonical() -> (
    None
):
    # The same ids in another tenant, unmerged, must not be touched.
    store = InMemoryGraphStore()
    projection = GraphProjection(store)
    ada = make_entity(id=EntityId(UUID(int=1)), name="Ada Lovelace", properties={"born": "1815"})
    countess = make_entity(id=EntityId(UUID(int=2)), name="Countess of Lovelace")
    theirs = make_entity(id=countess.id, tenant_id=OTHER_TENANT, name="Countess of Lovelace")
    await projection.apply(make_document_extracted([theirs], tenant_id=OTHER_TENANT))
    await projection.apply(make_document_extracted([ada, countess]))
    await projection.apply(make_entities_merged(ada, [countess]))
    again = countess.model_copy(
        update={
            "name": "Augusta Ada King",
            "properties": {"born": "1816", "title": "Countess"},
            "description": "Mathematician",
        }
    )
    babbage = make_entity(name="Charles Babbage")
    event = make_document_extracted([again, babbage], [make_relationship(again, babbage)])

    await projection.apply(event)

    held = await store.get_entity(ada.id, TENANT)
    assert held is not None
    # The canonical wins a conflict ("born"); what it lacked is taken; the new name is an alias.
    assert held.properties == {"born": "1815", "title": "Countess", "aliases": ["Augusta Ada King"]}
    assert held.description == "Mathematician"
    assert [r.source_entity_id for r in await store.get_relationships(babbage.id, TENANT)] == [
        ada.id
    ]
    assert await store.get_entity(countess.id, OTHER_TENANT) == theirs
    await projection.apply(event)  # idempotent
    assert await store.get_entity(ada.id, TENANT) == held


async def test_a_canonical_extracted_beside_an_entity_merged_into_it_keeps_both_facts() -> None:
    store = InMemoryGraphStore()
    projection = GraphProjection(store)
    ada = make_entity(id=EntityId(UUID(int=1)), name="Ada Lovelace")
    countess = make_entity(id=EntityId(UUID(int=2)), name="Countess of Lovelace")
    await projection.apply(make_document_extracted([ada, countess]))
    await projection.apply(make_entities_merged(ada, [countess]))
    fresh = ada.model_copy(update={"properties": {"born": "1815"}})
    said = countess.model_copy(update={"properties": {"title": "Countess"}})

    await projection.apply(make_document_extracted([said, fresh]))

    held = await store.get_entity(ada.id, TENANT)
    assert held is not None
    assert held.properties == {
        "born": "1815",
        "title": "Countess",
        "aliases": ["Countess of Lovelace"],
    }


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_re_extracted_canonical_keeps_what_it_absorbed_while_merged(
    backend: str, tmp_path: Path
) -> None:
    # Another tenant holds the same ids, unmerged: its re-extraction may drop a property.
    store = InMemoryGraphStore() if backend == "memory" else SqliteGraphStore(tmp_path / "g.db")
    projection = GraphProjection(store)
    ada = make_entity(id=EntityId(UUID(int=1)), name="Ada Lovelace", properties={"born": "1815"})
    countess = make_entity(
        id=EntityId(UUID(int=2)),
        name="Countess of Lovelace",
        properties={"title": "Countess", "born": "1816"},
        description="Mathematician",
    )
    theirs = ada.model_copy(update={"tenant_id": OTHER_TENANT})
    await projection.apply(make_document_extracted([theirs], tenant_id=OTHER_TENANT))
    await projection.apply(make_document_extracted([ada, countess]))
    merge = make_entities_merged(absorb(ada, [countess]), [countess])
    await projection.apply(merge)
    fresh = ada.model_copy(update={"properties": {"born": "10 December 1815"}})
    event = make_document_extracted([fresh])

    await projection.apply(event)

    held = await store.get_entity(ada.id, TENANT)
    assert held is not None
    # The fresh extraction wins "born"; what only the merge gave is kept.
    assert held.properties == {
        "born": "10 December 1815",
        "title": "Countess",
        "aliases": ["Countess of Lovelace"],
    }
    assert held.description == "Mathematician"
    assert held.blocking_keys is not None
    assert countess.blocking_keys is not None
    assert countess.blocking_keys <= held.blocking_keys
    await projection.apply(event)  # idempotent
    assert await store.get_entity(ada.id, TENANT) == held
    dropped = theirs.model_copy(update={"properties": {}})
    await projection.apply(make_document_extracted([dropped], tenant_id=OTHER_TENANT))
    assert await store.get_entity(ada.id, OTHER_TENANT) == dropped
    await store.close()


async def test_a_canonical_re_extracted_after_its_merge_is_undone_drops_what_it_lacks() -> None:
    store = InMemoryGraphStore()
    projection = GraphProjection(store)
    ada = make_entity(id=EntityId(UUID(int=1)), name="Ada Lovelace", properties={"born": "1815"})
    countess = make_entity(id=EntityId(UUID(int=2)), name="Countess", properties={"title": "C"})
    await projection.apply(make_document_extracted([ada, countess]))
    merge = make_entities_merged(absorb(ada, [countess]), [countess])
    merge = merge.model_copy(update={"before": (ada, countess)})  # as the consolidator records
    await projection.apply(merge)
    await projection.apply(make_merge_undone(merge))
    fresh = ada.model_copy(update={"properties": {}})

    await projection.apply(make_document_extracted([fresh]))

    assert await store.get_entity(ada.id, TENANT) == fresh
    assert await store.get_entity(countess.id, TENANT) == countess
