"""Keep a graph in Postgres, from two processes' worth of stores, and search it.

The same `build_graph` and `Retriever` as with the in-memory stores; only
the store constructors change. Pass the server's DSN as the first argument.
Runs offline with the fake models.
"""

import asyncio
import sys
from uuid import UUID

from redstring import (
    FakeEmbeddingProvider,
    FakeLlmProvider,
    PostgresGraphStore,
    PostgresVectorStore,
    Retriever,
    SourceDocument,
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


async def main(dsn: str, schema: str = "redstring") -> list[str]:
    """Build into `schema` on the server at `dsn`, then search it with new stores."""
    embeddings = FakeEmbeddingProvider(dimension=384)
    async with (
        PostgresGraphStore(dsn, schema=schema) as graph,
        PostgresVectorStore(dsn, dimension=384, model=embeddings.model, schema=schema) as vectors,
    ):
        await build_graph(
            SourceDocument(id="hopper", text="Grace Hopper shaped COBOL."),
            provider=FakeLlmProvider(by_substring={"Hopper": ANSWER}),
            store=graph,
            tenant_id=TENANT,
            embedding_provider=embeddings,
            vector_store=vectors,
        )
    # Committed: any process, on any machine that reaches the server, sees it now.
    async with (
        PostgresGraphStore(dsn, schema=schema, pool_size=4) as graph,
        PostgresVectorStore(dsn, dimension=384, model=embeddings.model, schema=schema) as vectors,
    ):
        retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
        result = await retriever.retrieve("Grace Hoper", TENANT, k=2)
    for match in result.matches:
        print(f"{match.entity.name:<14} lexical {match.lexical}")
    return [match.entity.name for match in result.matches]


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
