"""Extract two documents that name one person differently, merge them, undo it.

Runs offline with the fake model and the in-memory stores.
"""

import asyncio
from uuid import UUID

from redstring import (
    Consolidator,
    FakeLlmProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    SourceDocument,
    TenantId,
    build_graph,
)

TENANT = TenantId(UUID("00000000-0000-4000-8000-000000000001"))


def person(name: str, born: str) -> dict[str, object]:
    """What the fake model extracts: one person with a date of birth."""
    entity = {"name": name, "entity_type": "person", "properties": {"born": born}}
    return {"entities": [entity], "relationships": []}


async def main() -> dict[str, object]:
    """Build, consolidate, undo; return what the graph held at each step."""
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    model = FakeLlmProvider(
        by_substring={
            "Countess": person("Lovelace, Ada", "1815-12-10"),
            "poet": person("Ada Lovelace", "1815-12-10"),
        }
    )
    for doc_id, text in [("a", "The Countess wrote notes."), ("b", "Byron's daughter, a poet.")]:
        document = SourceDocument(id=doc_id, text=text)
        await build_graph(document, provider=model, store=graph, tenant_id=TENANT, event_log=log)
    before = sorted(entity.name for entity in await graph.find_entities(TENANT))

    consolidator = Consolidator(graph=graph, event_log=log)
    report = await consolidator.consolidate(TENANT)
    [merge] = report.merges
    [ada] = await graph.find_entities(TENANT)
    print(f"merged into {ada.name!r}, also known as {ada.properties['aliases']}")
    print(f"because: {merge.reason}")

    assert merge.event_id is not None
    await consolidator.undo(TENANT, merge.event_id)
    after = sorted(entity.name for entity in await graph.find_entities(TENANT))
    print(f"after undo: {after}")
    return {
        "before": before,
        "merged": ada.name,
        "aliases": ada.properties["aliases"],
        "after": after,
    }


if __name__ == "__main__":
    asyncio.run(main())
