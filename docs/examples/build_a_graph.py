"""Build an entity graph from a short document, then look around it.

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
        {
            "source_name": "Ada Lovelace",
            "target_name": "Charles Babbage",
            "relationship_type": "collaborated_with",
        },
        {
            "source_name": "Charles Babbage",
            "target_name": "Analytical Engine",
            "relationship_type": "designed",
        },
    ],
}


async def main() -> dict[str, list[str]]:
    """Build the graph, print what it holds, and return it for the test that runs this."""
    tenant = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
    graph = InMemoryGraphStore()
    report = await build_graph(
        SourceDocument(id="ada-and-babbage", text=TEXT, title="The Analytical Engine"),
        provider=FakeLlmProvider(by_substring={"Analytical Engine": ANSWER}),
        store=graph,
        tenant_id=tenant,
        embedding_provider=FakeEmbeddingProvider(dimension=384),
        vector_store=InMemoryVectorStore(dimension=384),
    )
    print(
        f"{report.entities} entities, {report.relationships} relationships, "
        f"{report.embedded} embedded, domain {report.domain!r}"
    )

    people = await graph.find_entities(tenant, entity_type="person")
    [babbage] = await graph.find_entities(tenant, name="charles babbage")
    neighbours = await graph.neighbors(babbage.id, tenant)
    print("people:", ", ".join(sorted(person.name for person in people)))
    print("Babbage's neighbours:", ", ".join(sorted(each.name for each in neighbours)))
    return {
        "people": sorted(person.name for person in people),
        "neighbours": sorted(each.name for each in neighbours),
    }


if __name__ == "__main__":
    asyncio.run(main())
