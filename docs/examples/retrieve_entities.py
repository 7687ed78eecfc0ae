"""Retrieve entities by query: three modes, a type filter, and lexical reach.

Runs offline: a scripted fake model, fake embeddings and in-memory stores.
"""

import asyncio
from uuid import UUID

from redstring import (
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    SourceDocument,
    TenantId,
    build_graph,
)

ENTITIES = [
    ("Charles Babbage", "person"),
    ("Ada Lovelace", "person"),
    ("Analytical Engine", "machine"),
    ("ACME Corporation", "organization"),
    ("Zebra Holdings", "organization"),
]
# Queries for "Charles Babbage", and what each one changes about the name.
QUERIES = {
    "Charles Babbage": "nothing",
    "Charles Babage": "a letter dropped",
    "Chrales Babbage": "two letters swapped",
    "Chuck Babbage": "a nickname",
    "Babbage": "surname alone",
    "Mr Charles Babbage": "a title in front",
    "Babbage, Charles": "reordered",
    "チャールズ・バベッジ": "another script",
    "father of the computer": "a description",
}


async def main() -> dict[str, object]:
    """Store the entities, query them, print what comes back, and return it for the test."""
    tenant = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=384)
    embeddings = FakeEmbeddingProvider(dimension=384)
    answer = {"entities": [{"name": n, "entity_type": t} for n, t in ENTITIES]}
    await build_graph(  # stores each entity, its blocking keys and its name's vector
        SourceDocument(id="catalogue", text="A catalogue of five entities."),
        provider=FakeLlmProvider(script=[answer]),
        store=graph,
        tenant_id=tenant,
        embedding_provider=embeddings,
        vector_store=vectors,
    )
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    embed_calls = {}
    for mode in RetrievalMode:
        before = len(embeddings.calls)
        result = await retriever.retrieve("Acme Corp", tenant, k=3, mode=mode)
        embed_calls[mode.value] = len(embeddings.calls) - before
        print(f"{mode.value}:")
        for m in result.matches:  # "-": that channel did not rank the entity
            scores = [f"{s:.3f}" if s is not None else "-" for s in (m.semantic, m.lexical)]
            evidence = "" if m.evidence is None else f"  evidence {m.evidence:.3f}"
            print(f"  {m.entity.name:<18} fused {m.score:.4f}{evidence}  semantic/lexical", *scores)
    result = await retriever.retrieve("Charles Babbage", tenant, entity_types=["organization"])
    organizations = [match.entity.name for match in result.matches]
    print("Charles Babbage among organizations:", ", ".join(organizations))
    reached = {}
    print(f"{'query':<25} {'what it changes':<23} lexical channel")
    for query, change in QUERIES.items():
        result = await retriever.retrieve(query, tenant, mode=RetrievalMode.LEXICAL)
        reached[query] = "Charles Babbage" in [match.entity.name for match in result.matches]
        print(f"{query!r:<25} {change:<23} {'reached' if reached[query] else 'NOT reached'}")
    return {"embed_calls": embed_calls, "organizations": organizations, "reached": reached}


if __name__ == "__main__":
    asyncio.run(main())
