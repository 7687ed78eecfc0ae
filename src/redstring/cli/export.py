"""`redstring export`: a tenant's graph, or one entity's neighbourhood, written as it is read.

Two formats: JSON Lines (`jsonl`, what `redstring import` reads back with
every field kept) and GraphML (`graphml`, for networkx, Gephi and yEd).
Both are written item by item to a text stream, never built whole in
memory; the relationships are read entity by entity, and only their ids
are kept, to write each once. See ADR 0069.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from redstring.cli.rows import export_line

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from typing import TextIO

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader

#: The formats `export --format` writes.
EXPORT_FORMATS: Final = ("jsonl", "graphml")


async def exported_entities(
    graph: GraphReader, tenant_id: TenantId, *, around: EntityId | None = None, depth: int = 1
) -> list[Entity]:
    """The entities to export: the tenant's, or `around` and those within `depth` hops of it."""
    if around is None:
        return await graph.find_entities(tenant_id)
    start = await graph.get_entity(around, tenant_id)
    found = await graph.neighbors(around, tenant_id, depth=depth)
    return ([start] if start is not None else []) + found


async def exported_relationships(
    graph: GraphReader, tenant_id: TenantId, entities: Sequence[Entity], *, whole: bool
) -> AsyncIterator[Relationship]:
    """Each relationship touching `entities` once, entity by entity.

    Unless `whole` (the entire tenant is exported), only those with both
    ends among `entities`.
    """
    held = {entity.id for entity in entities}
    seen: set[str] = set()
    for entity in entities:
        for relationship in await graph.get_relationships(entity.id, tenant_id):
            key = str(relationship.id)
            if key in seen:
                continue
            if not whole and not (
                relationship.source_entity_id in held and relationship.target_entity_id in held
            ):
                continue
            seen.add(key)
            yield relationship


async def write_jsonl(
    graph: GraphReader,
    tenant_id: TenantId,
    out: TextIO,
    *,
    around: EntityId | None = None,
    depth: int = 1,
) -> None:
    """Write the entities, then the relationships, one JSON line each."""
    entities = await exported_entities(graph, tenant_id, around=around, depth=depth)
    for entity in entities:
        out.write(export_line(entity) + "\n")
    async for relationship in exported_relationships(
        graph, tenant_id, entities, whole=around is None
    ):
        out.write(export_line(relationship) + "\n")
