"""The Consolidator on the SQLite stores and log: merges and undos survive closing the file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring import (
    Consolidator,
    FakeEmbeddingProvider,
    SqliteEventLog,
    SqliteGraphStore,
    SqliteVectorStore,
    VectorRecord,
)
from tests.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from tests.unit.composition.test_consolidation import ada_variants

if TYPE_CHECKING:
    from pathlib import Path

    from redstring import EntityId, TenantId

DIMENSION = 8


async def _snapshot(
    graph: SqliteGraphStore, vectors: SqliteVectorStore, ids: list[EntityId], tenant: TenantId
) -> object:
    entities = await graph.find_entities(tenant)
    relationships = {r.id: r for e in entities for r in await graph.get_relationships(e.id, tenant)}
    return (
        entities,
        sorted(relationships.values(), key=lambda r: str(r.id)),
        [await vectors.get(i, tenant) for i in ids],
        await graph.resolve(ids, tenant),
    )


async def test_a_pass_and_its_undo_restore_the_file_exactly_across_reopening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    mine, theirs = ada_variants(TENANT), ada_variants(OTHER_TENANT)
    ids = [e.id for e in mine]
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    async with (
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=DIMENSION) as vectors,
        SqliteEventLog(path) as log,
    ):
        await graph.upsert_entities([*mine, *theirs])
        await graph.upsert_relationships([make_relationship(mine[1], mine[3])])
        vectored = await embeddings.embed([e.name for e in [*mine, *theirs]])
        await vectors.upsert_many(
            [
                VectorRecord(entity_id=e.id, tenant_id=e.tenant_id, vector=v)
                for e, v in zip([*mine, *theirs], vectored, strict=True)
            ]
        )
        before = await _snapshot(graph, vectors, ids, TENANT)
        theirs_before = await _snapshot(graph, vectors, ids, OTHER_TENANT)
        consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
        report = await consolidator.consolidate(TENANT)
        assert [(m.canonical_id, len(m.merged_ids)) for m in report.merges] == [(mine[0].id, 2)]
    async with (
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=DIMENSION) as vectors,
        SqliteEventLog(path) as log,
    ):
        assert await graph.resolve([mine[2].id], TENANT) == {mine[2].id: mine[0].id}
        assert await _snapshot(graph, vectors, ids, OTHER_TENANT) == theirs_before
        consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
        assert (await consolidator.consolidate(TENANT)).merges == []
        [merge] = report.merges
        assert merge.event_id is not None
        await consolidator.undo(TENANT, merge.event_id)
    async with (
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=DIMENSION) as vectors,
        SqliteEventLog(path) as log,
    ):
        assert await _snapshot(graph, vectors, ids, TENANT) == before
        explicit = make_entity(name="Someone Else")
        await graph.upsert_entity(explicit)
        consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
        await consolidator.merge(TENANT, mine[3].id, [explicit.id], reason="told")
        assert await graph.get_entity(explicit.id, TENANT) is not None
