"""build_graph over one SQLite file: the log it writes survives and rebuilds the stores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from redstring import (
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    SqliteEventLog,
    SqliteGraphStore,
    SqliteVectorStore,
    build_graph,
    replay,
)
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.factories import TENANT
from tests.unit.test_composition import DIMENSION, DOCUMENT, provider

if TYPE_CHECKING:
    from pathlib import Path

    from redstring.ports import GraphReader, VectorReader


async def held(graph: GraphReader, vectors: VectorReader) -> dict[str, Any]:
    """Everything the stores hold for TENANT, in a comparable form."""
    entities = await graph.find_entities(TENANT)
    relationships = sorted(
        {
            relationship.model_dump_json()
            for entity in entities
            for relationship in await graph.get_relationships(entity.id, TENANT)
        }
    )
    records = [await vectors.get(entity.id, TENANT) for entity in entities]
    return {"entities": entities, "relationships": relationships, "vectors": records}


async def test_a_log_reopened_from_the_file_replays_into_what_the_stores_hold(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    async with (
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=DIMENSION) as vectors,
        SqliteEventLog(path) as log,
    ):
        report = await build_graph(
            DOCUMENT,
            provider=provider(),
            store=graph,
            tenant_id=TENANT,
            embedding_provider=FakeEmbeddingProvider(dimension=DIMENSION),
            vector_store=vectors,
            event_log=log,
        )
    assert report.entities == 3

    async with (
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=DIMENSION) as vectors,
        SqliteEventLog(path) as log,
    ):
        assert await log.last_sequence() == 2
        rebuilt_graph = InMemoryGraphStore()
        rebuilt_vectors = InMemoryVectorStore(dimension=DIMENSION)
        assert (
            await replay(log, GraphProjection(rebuilt_graph), VectorProjection(rebuilt_vectors))
            == 2
        )
        stored = await held(graph, vectors)
        assert len(stored["entities"]) == 3
        assert await held(rebuilt_graph, rebuilt_vectors) == stored
