"""`delete_tenant`: a whole tenant out of every store, recorded so that a replay keeps it out."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import UUID

import pytest

from redstring import (
    ChunkProjection,
    FakeEmbeddingProvider,
    GraphProjection,
    InMemoryChunkStore,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    PassageVectorProjection,
    TenantDeleted,
    TenantDeletion,
    VectorProjection,
    delete_tenant,
    event_from_json,
    event_to_json,
    import_documents,
    import_entities,
    replay,
)
from redstring.domain.ids import EntityId, SourceId, TenantId
from redstring.domain.source import SourceDocument
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

DIMENSION = 8


def eid(n: int) -> EntityId:
    return EntityId(UUID(int=n))


class Stores:
    """Every store `delete_tenant` purges, filled for TENANT and OTHER_TENANT with the same ids."""

    def __init__(self) -> None:
        self.graph = InMemoryGraphStore()
        self.vectors = InMemoryVectorStore(dimension=DIMENSION)
        self.chunks = InMemoryChunkStore()
        self.passage_vectors = InMemoryVectorStore(dimension=DIMENSION)
        self.log = InMemoryEventLog()

    async def fill(self, tenant_id: TenantId = TENANT) -> None:
        embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
        ada = make_entity(id=eid(1), name="Ada Lovelace", tenant_id=tenant_id)
        charles = make_entity(id=eid(2), name="Charles Babbage", tenant_id=tenant_id)
        await import_entities(
            [ada, charles],
            relationships=[make_relationship(ada, charles)],
            graph=self.graph,
            embeddings=embeddings,
            vectors=self.vectors,
            event_log=self.log,
        )
        await import_documents(
            [
                SourceDocument(
                    id=SourceId("notes"),
                    text="Ada Lovelace wrote to Charles Babbage about the engine.",
                )
            ],
            tenant_id,
            chunks=self.chunks,
            graph=self.graph,
            embeddings=embeddings,
            passage_vectors=self.passage_vectors,
            event_log=self.log,
        )

    def projections(
        self,
    ) -> tuple[GraphProjection, VectorProjection, ChunkProjection, PassageVectorProjection]:
        return (
            GraphProjection(self.graph),
            VectorProjection(self.vectors),
            ChunkProjection(self.chunks),
            PassageVectorProjection(self.passage_vectors),
        )

    async def held(self, tenant_id: TenantId) -> tuple[int, int, int, int]:
        """What each store holds of `tenant_id`: entities, vectors, chunks, passage vectors."""
        return (
            await self.graph.count(tenant_id),
            await self.vectors.count(tenant_id),
            await self.chunks.count_chunks(tenant_id),
            await self.passage_vectors.count(tenant_id),
        )


async def filled() -> Stores:
    stores = Stores()
    await stores.fill(TENANT)
    await stores.fill(OTHER_TENANT)
    return stores


async def test_every_store_loses_the_tenant_and_keeps_the_other_one_with_the_same_ids() -> None:
    stores = await filled()
    theirs = await stores.held(OTHER_TENANT)

    deletion = await delete_tenant(
        TENANT,
        graph=stores.graph,
        vectors=stores.vectors,
        chunks=stores.chunks,
        passage_vectors=stores.passage_vectors,
        event_log=stores.log,
    )

    assert deletion == TenantDeletion(entities=2, vectors=2, passages=1, passage_vectors=1)
    assert await stores.held(TENANT) == (0, 0, 0, 0)
    assert await stores.held(OTHER_TENANT) == theirs == (2, 2, 1, 1)
    [last] = (await stores.log.read())[-1:]
    assert isinstance(last.event, TenantDeleted)
    assert last.event.tenant_id == TENANT
    assert event_from_json(event_to_json(last.event)) == last.event


async def test_a_replay_purges_the_tenant_again_and_a_later_import_brings_it_back() -> None:
    stores = await filled()
    await delete_tenant(TENANT, graph=stores.graph, event_log=stores.log)
    rebuilt = Stores()
    await replay(stores.log, *rebuilt.projections())
    assert await rebuilt.held(TENANT) == (0, 0, 0, 0)
    assert await rebuilt.held(OTHER_TENANT) == (2, 2, 1, 1)

    await stores.fill(TENANT)  # appended after the delete, so it stands
    again = Stores()
    await replay(stores.log, *again.projections())
    assert await again.held(TENANT) == (2, 2, 1, 1)
    # Projecting the delete twice changes nothing more.
    [deleted] = [s.event for s in await stores.log.read() if isinstance(s.event, TenantDeleted)]
    for projection in again.projections():
        await projection.apply(deleted)
        await projection.apply(deleted)
    assert await again.held(TENANT) == (0, 0, 0, 0)
    assert await again.held(OTHER_TENANT) == (2, 2, 1, 1)


async def test_without_a_log_only_the_given_stores_change() -> None:
    stores = await filled()
    before = len(await stores.log.read())

    deletion = await delete_tenant(TENANT, graph=stores.graph)

    assert deletion == TenantDeletion(entities=2, vectors=0, passages=0, passage_vectors=0)
    assert await stores.held(TENANT) == (0, 2, 1, 1)
    assert len(await stores.log.read()) == before


@pytest.mark.parametrize("argument", ["graph", "vectors", "chunks", "passage_vectors", "event_log"])
async def test_a_collaborator_that_is_not_its_port_is_refused_before_anything_changes(
    argument: str,
) -> None:
    stores = await filled()
    before = len(await stores.log.read())
    given: dict[str, object] = {
        "graph": stores.graph,
        "vectors": stores.vectors,
        "chunks": stores.chunks,
        "passage_vectors": stores.passage_vectors,
        "event_log": stores.log,
        argument: object(),
    }
    with pytest.raises(ValueError, match=argument):
        await delete_tenant(TENANT, **given)  # type: ignore[arg-type]
    assert await stores.held(TENANT) == (2, 2, 1, 1)
    assert len(await stores.log.read()) == before


@pytest.mark.parametrize("tenant_id", ["", "not-a-uuid", str(TENANT), 7, None])
async def test_a_bad_tenant_id_is_refused_and_nothing_is_appended(tenant_id: object) -> None:
    stores = await filled()
    before = len(await stores.log.read())
    with pytest.raises(ValueError, match="tenant"):
        await delete_tenant(tenant_id, graph=stores.graph, event_log=stores.log)  # type: ignore[arg-type]
    assert len(await stores.log.read()) == before


def test_the_event_s_wire_format_is_pinned() -> None:
    event = TenantDeleted(
        event_id=UUID(int=2),
        tenant_id=TENANT,
        occurred_at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
    )
    assert json.loads(event_to_json(event)) == {
        "kind": "tenant_deleted",
        "version": 1,
        "event_id": "00000000-0000-0000-0000-000000000002",
        "tenant_id": "00000000-0000-4000-8000-000000000001",
        "occurred_at": "2024-05-06T07:08:09Z",
    }
