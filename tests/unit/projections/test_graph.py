"""The graph projection, against the real in-memory graph store."""

from __future__ import annotations

from uuid import UUID

from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.projections.graph import GraphProjection
from redstring.projections.replay import Projection
from redstring.testing.event_log import make_document_extracted, make_entities_embedded
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship


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
