"""A context over SQLite and Postgres stores answers exactly as over the in-memory stores."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.phantomwiki import load_universe

from redstring import (
    ContextRetriever,
    InMemoryChunkStore,
    InMemoryGraphStore,
    SqliteChunkStore,
    SqliteGraphStore,
    import_documents,
)
from redstring.testing.factories import OTHER_TENANT, TENANT

if TYPE_CHECKING:
    from pathlib import Path

    from redstring import ChunkStore, Context, GraphStore
    from tests.postgres import PostgresSchemas

#: Questions asked of each backend: every hop count, linked and unlinked starts.
QUESTIONS = 24


async def fill(graph: GraphStore, chunks: ChunkStore) -> None:
    """The dev universe in `TENANT`, and the same ids with other texts in `OTHER_TENANT`."""
    universe = load_universe("dev")
    for tenant in (TENANT, OTHER_TENANT):
        await graph.upsert_entities(universe.entities(tenant))
        await graph.upsert_relationships(universe.relationships(tenant))
    await import_documents(universe.documents(), TENANT, chunks=chunks, graph=graph)
    # The other tenant's articles are each other's: the same ids, other words.
    documents = universe.documents()
    swapped = [
        document.model_copy(update={"text": documents[(index + 1) % len(documents)].text})
        for index, document in enumerate(documents)
    ]
    await import_documents(swapped, OTHER_TENANT, chunks=chunks, graph=graph)


async def ask(graph: GraphStore, chunks: ChunkStore) -> list[Context]:
    universe = load_universe("dev")
    retriever = ContextRetriever(chunks=chunks, graph=graph)
    return [
        await retriever.retrieve_context(question.question, tenant, k=10, budget_chars=2_000)
        for question in universe.questions[:: len(universe.questions) // QUESTIONS]
        for tenant in (TENANT, OTHER_TENANT)
    ]


async def test_sqlite_and_memory_stores_give_identical_contexts(tmp_path: Path) -> None:
    memory_graph, memory_chunks = InMemoryGraphStore(), InMemoryChunkStore()
    await fill(memory_graph, memory_chunks)
    expected = await ask(memory_graph, memory_chunks)
    assert any(context.entities for context in expected)
    assert any(p.graph is not None for context in expected for p in context.passages)
    path = tmp_path / "context.db"
    async with SqliteGraphStore(path) as graph, SqliteChunkStore(path) as chunks:
        await fill(graph, chunks)
        assert await ask(graph, chunks) == expected


async def test_postgres_and_memory_stores_give_identical_contexts(
    postgres: PostgresSchemas,
) -> None:
    memory_graph, memory_chunks = InMemoryGraphStore(), InMemoryChunkStore()
    await fill(memory_graph, memory_chunks)
    expected = await ask(memory_graph, memory_chunks)
    schema = postgres.new_schema()
    async with postgres.graph_store(schema) as graph, postgres.chunk_store(schema) as chunks:
        await fill(graph, chunks)
        assert await ask(graph, chunks) == expected
