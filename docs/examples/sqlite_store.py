"""Keep a graph in one SQLite file, close it, reopen it, and search it.

The same `build_graph` and `Retriever` as with the in-memory stores; only
the constructors change. The event log shares the file, so what was
extracted is kept as events too. Runs offline with the fake models.
"""

import asyncio
import sys
import tempfile
from pathlib import Path
from uuid import UUID

from redstring import (
    FakeEmbeddingProvider,
    FakeLlmProvider,
    Retriever,
    SourceDocument,
    SqliteEventLog,
    SqliteGraphStore,
    SqliteVectorStore,
    TenantId,
    build_graph,
)

TENANT = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
ANSWER = {
    "entities": [
        {"name": "Grace Hopper", "entity_type": "person"},
        {"name": "COBOL", "entity_type": "language"},
    ],
    "relationships": [
        {"source_name": "Grace Hopper", "target_name": "COBOL", "relationship_type": "shaped"}
    ],
}


async def main(database: Path) -> list[str]:
    """Build into `database`, reopen it, and return what a misspelled query finds."""
    embeddings = FakeEmbeddingProvider(dimension=384)
    async with (
        SqliteGraphStore(database) as graph,
        SqliteVectorStore(database, dimension=384, model=embeddings.model) as vectors,
        SqliteEventLog(database) as log,
    ):
        await build_graph(
            SourceDocument(id="hopper", text="Grace Hopper shaped COBOL."),
            provider=FakeLlmProvider(by_substring={"Hopper": ANSWER}),
            store=graph,
            tenant_id=TENANT,
            embedding_provider=embeddings,
            vector_store=vectors,
            event_log=log,
        )
    # Everything above is on disk now; a new process could open it the same way.
    print("stored as", await SqliteVectorStore.stored_settings(database))
    async with (
        SqliteGraphStore(database) as graph,
        SqliteVectorStore(database, dimension=384, model=embeddings.model) as vectors,
        SqliteEventLog(database) as log,
    ):
        print("events in the log", await log.last_sequence())
        retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
        result = await retriever.retrieve("Grace Hoper", TENANT, k=2)
    for match in result.matches:
        print(f"{match.entity.name:<14} lexical {match.lexical}")
    return [match.entity.name for match in result.matches]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(folder) / "redstring.db"
        asyncio.run(main(path))
