"""Build an entity graph from a short document, look around it, then search it.

Runs offline: a scripted fake stands in for the language model and the
stores are in memory. Swap in real adapters and nothing else changes.
"""

import asyncio
from uuid import UUID

from redstring import (
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Retriever,
    SourceDocument,
    TenantId,
    build_graph,
)

TEXT = (
    "Ada Lovelace worked with Charles Babbage on the Analytical Engine, "
    "a general-purpose mechanical computer that Babbage designed in 1837."
)
# What a model would answer for this text, in the shape `Extraction` defines.
ANSWER = {
    "entities": [
        {"name": "Ada Lovelace", "entity_type": "person"},
        {"name": "Charles Babbage", "entity_type": "person"},
        {"name": "Analytical Engine", "entity_type": "machine"},
    ],
    "relationships": [
        {"source_name": source, "target_name": target, "relationship_type": kind}
        for source, target, kind in [
            ("Ada Lovelace", "Charles Babbage", "collaborated_with"),
            ("Charles Babbage", "Analytical Engine", "designed"),
        ]
    ],
}


async def main() -> dict[str, list[str]]:
    """Build the graph, print what it holds and finds, and return it for the test."""
    tenant = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=384)
    embeddings = FakeEmbeddingProvider(dimension=384)
    report = await build_graph(
        SourceDocument(id="ada-and-babbage", text=TEXT, title="The Analytical Engine"),
        provider=FakeLlmProvider(by_substring={"Analytical Engine": ANSWER}),
        store=graph,
        tenant_id=tenant,
        embedding_provider=embeddings,
        vector_store=vectors,
    )
    print(f"{report.entities} entities, {report.relationships} relationships, "
          f"{report.embedded} embedded, domain {report.domain!r}")  # fmt: skip

    people = sorted(e.name for e in await graph.find_entities(tenant, entity_type="person"))
    [babbage] = await graph.find_entities(tenant, name="charles babbage")
    neighbours = sorted(e.name for e in await graph.neighbors(babbage.id, tenant))
    print("people:", ", ".join(people))
    print("Babbage's neighbours:", ", ".join(neighbours))

    # A misspelled query: the lexical channel still finds the name.
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    result = await retriever.retrieve("Charles Babage", tenant, k=3)
    for match in result.matches:  # None: that channel did not rank the entity
        scores = [f"{s:.3f}" if s is not None else "-" for s in (match.semantic, match.lexical)]
        line = f"{match.entity.name:<18} fused {match.score:.4f}"
        if match.evidence is not None:  # hybrid, both channels answering
            line += f"  evidence {match.evidence:.3f}"
        print(line + "  semantic/lexical", *scores)
    found = [match.entity.name for match in result.matches]
    return {"people": people, "neighbours": neighbours, "found": found}


if __name__ == "__main__":
    asyncio.run(main())
