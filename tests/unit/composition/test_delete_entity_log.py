"""`delete_entity` with an event log: the delete is recorded, so a replay keeps it."""

from __future__ import annotations

from uuid import UUID

import pytest

from redstring import (
    EntityDeleted,
    FakeEmbeddingProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    delete_entity,
    import_entities,
    replay,
)
from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.event_log import make_entities_embedded, make_entities_merged
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

DIMENSION = 8


def eid(n: int) -> EntityId:
    return EntityId(UUID(int=n))


async def filled() -> tuple[InMemoryGraphStore, InMemoryVectorStore, InMemoryEventLog]:
    """Ada and Charles, related, in TENANT, and another Ada of the same id in OTHER_TENANT."""
    graph, vectors, log = (
        InMemoryGraphStore(),
        InMemoryVectorStore(dimension=DIMENSION),
        InMemoryEventLog(),
    )
    ada, charles = make_entity(id=eid(1), name="Ada"), make_entity(id=eid(2), name="Charles")
    theirs = make_entity(id=eid(1), name="Theirs", tenant_id=OTHER_TENANT)
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    for entities, relationships in (([ada, charles], [make_relationship(ada, charles)]),
                                    ([theirs], [])):  # fmt: skip
        await import_entities(
            entities,
            relationships=relationships,
            graph=graph,
            embeddings=embeddings,
            vectors=vectors,
            event_log=log,
        )
    return graph, vectors, log


async def test_a_recorded_delete_is_replayed_instead_of_bringing_the_entity_back() -> None:
    graph, vectors, log = await filled()
    before = len(await log.read())

    removed = await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors, event_log=log)

    assert removed is True
    stored = await log.read(after=before)
    assert len(stored) == 1
    event = stored[0].event
    assert isinstance(event, EntityDeleted)
    assert (event.tenant_id, event.entity_id) == (TENANT, eid(1))
    rebuilt_graph, rebuilt_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    await replay(log, GraphProjection(rebuilt_graph), VectorProjection(rebuilt_vectors))
    for store_graph, store_vectors in ((graph, vectors), (rebuilt_graph, rebuilt_vectors)):
        assert await store_graph.get_entity(eid(1), TENANT) is None
        assert await store_vectors.get(eid(1), TENANT) is None
        assert await store_graph.get_relationships(eid(2), TENANT) == []
        assert await store_graph.get_entity(eid(2), TENANT) is not None
        theirs = await store_graph.get_entity(eid(1), OTHER_TENANT)
        assert theirs is not None
        assert theirs.name == "Theirs"
        assert await store_vectors.get(eid(1), OTHER_TENANT) is not None


async def test_a_replayed_delete_removes_a_vector_written_for_a_merged_id_after_the_merge() -> None:
    graph, vectors, log = await filled()
    ada, charles = await graph.get_entity(eid(1), TENANT), await graph.get_entity(eid(2), TENANT)
    assert ada is not None
    assert charles is not None
    merge = make_entities_merged(ada, [charles])
    await log.append(merge)
    await graph.merge_entities(merge.canonical, [charles.id])
    await vectors.delete(charles.id, TENANT)
    # Charles is embedded again after the merge, live and in the log.
    again = make_entities_embedded(
        [VectorRecord(entity_id=charles.id, tenant_id=TENANT, vector=[1.0] * DIMENSION)],
        dimension=DIMENSION,
    )
    await log.append(again)
    await vectors.upsert_many(again.records)

    assert await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors, event_log=log)

    [stored] = (await log.read())[-1:]
    assert isinstance(stored.event, EntityDeleted)
    assert stored.event.merged_ids == (charles.id,)
    rebuilt_graph, rebuilt_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    await replay(log, GraphProjection(rebuilt_graph), VectorProjection(rebuilt_vectors))
    for store_vectors in (vectors, rebuilt_vectors):
        assert await store_vectors.get(eid(1), TENANT) is None
        assert await store_vectors.get(eid(2), TENANT) is None
        assert await store_vectors.get(eid(1), OTHER_TENANT) is not None


async def test_a_delete_of_an_absent_entity_is_recorded_and_changes_no_store() -> None:
    graph, vectors, log = await filled()
    before = len(await log.read())
    assert await delete_entity(eid(9), TENANT, graph=graph, vectors=vectors, event_log=log) is False
    assert [type(each.event) for each in await log.read(after=before)] == [EntityDeleted]
    assert len(await graph.find_entities(TENANT)) == 2


@pytest.mark.parametrize("bad", [object(), InMemoryGraphStore(), "log"])
async def test_a_log_that_is_not_an_event_log_is_refused_before_anything_is_deleted(
    bad: object,
) -> None:
    graph, vectors, log = await filled()
    before = len(await log.read())
    with pytest.raises(ValueError, match="event_log"):
        await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors, event_log=bad)  # type: ignore[arg-type]
    assert await graph.get_entity(eid(1), TENANT) is not None
    assert await vectors.get(eid(1), TENANT) is not None
    assert len(await log.read()) == before
