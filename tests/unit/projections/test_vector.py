"""The vector projection, against the real in-memory vector store."""

from __future__ import annotations

from uuid import UUID

import pytest

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.projections.replay import Projection
from redstring.projections.vector import VectorProjection
from redstring.testing.event_log import make_document_extracted, make_entities_embedded
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity
from redstring.vector.adapters.memory import InMemoryVectorStore

ONE = EntityId(UUID(int=1))
TWO = EntityId(UUID(int=2))


def test_it_is_a_projection() -> None:
    assert isinstance(VectorProjection(InMemoryVectorStore(dimension=4)), Projection)


async def test_an_embedding_event_writes_every_record_in_its_tenant() -> None:
    store = InMemoryVectorStore(dimension=4)
    records = [
        VectorRecord(
            entity_id=ONE,
            tenant_id=TENANT,
            vector=[1.0, 0.0, 0.0, 0.0],
            metadata={"entity_type": "person"},
        ),
        VectorRecord(entity_id=TWO, tenant_id=TENANT, vector=[0.0, 2.0, 0.0, 0.0]),
    ]
    await VectorProjection(store).apply(make_entities_embedded(records))
    assert await store.get(ONE, TENANT) == records[0]
    assert await store.get(TWO, TENANT) == records[1]
    assert await store.get(ONE, OTHER_TENANT) is None
    found = await store.search([1.0, 0.0, 0.0, 0.0], TENANT, k=1, entity_types=["person"])
    assert [match.entity_id for match in found] == [ONE]


async def test_a_later_event_overwrites_a_vector_and_a_repeat_changes_nothing() -> None:
    store = InMemoryVectorStore(dimension=4)
    first = VectorRecord(entity_id=ONE, tenant_id=TENANT, vector=[1.0, 0.0, 0.0, 0.0])
    second = VectorRecord(entity_id=ONE, tenant_id=TENANT, vector=[0.0, 0.0, 3.0, 0.0])
    projection = VectorProjection(store)
    later = make_entities_embedded([second])
    await projection.apply(make_entities_embedded([first]))
    await projection.apply(later)
    await projection.apply(later)
    assert await store.get(ONE, TENANT) == second
    assert len(await store.search([1.0, 1.0, 1.0, 1.0], TENANT)) == 1


async def test_an_event_of_another_dimension_is_refused_and_writes_nothing() -> None:
    store = InMemoryVectorStore(dimension=4)
    record = VectorRecord(entity_id=ONE, tenant_id=TENANT, vector=[1.0, 0.0, 0.0])
    with pytest.raises(DimensionMismatchError) as raised:
        await VectorProjection(store).apply(make_entities_embedded([record], dimension=3))
    assert (raised.value.expected, raised.value.actual) == (4, 3)
    assert await store.get(ONE, TENANT) is None


async def test_an_empty_event_of_another_dimension_is_refused_too() -> None:
    with pytest.raises(DimensionMismatchError):
        await VectorProjection(InMemoryVectorStore(dimension=4)).apply(
            make_entities_embedded(dimension=8)
        )


async def test_an_extraction_event_changes_nothing_in_the_vector_store() -> None:
    store = InMemoryVectorStore(dimension=4)
    await VectorProjection(store).apply(make_document_extracted([make_entity(id=ONE)]))
    assert await store.search([1.0, 0.0, 0.0, 0.0], TENANT) == []
