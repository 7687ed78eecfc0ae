"""Reading many entities' relationships or merged ids with a batch read where a graph offers one.

A caller that reads many ids calls these instead of the one-id reads: one
batch read on a graph that offers it (ADR 0122), else one call per distinct
id, checked as a batch read checks its ids.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from redstring.domain.validation import check_entity_ids
from redstring.ports.graph_batches import MergedIdBatchReader, RelationshipBatchReader

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader, MergedIdReader


async def read_merged_ids(
    graph: MergedIdReader, entity_ids: Sequence[EntityId], tenant_id: TenantId
) -> dict[EntityId, list[EntityId]]:
    """`merged_ids` of each distinct id: one `merged_ids_of` where `graph` offers it (ADR 0122)."""
    if isinstance(graph, MergedIdBatchReader):
        return await graph.merged_ids_of(entity_ids, tenant_id)
    return await _each(entity_ids, lambda entity_id: graph.merged_ids(entity_id, tenant_id))


async def read_relationships(
    graph: GraphReader, entity_ids: Sequence[EntityId], tenant_id: TenantId
) -> dict[EntityId, list[Relationship]]:
    """`get_relationships` of each distinct id: one `relationships_of` where `graph` offers it."""
    if isinstance(graph, RelationshipBatchReader):
        return await graph.relationships_of(entity_ids, tenant_id)
    return await _each(entity_ids, lambda entity_id: graph.get_relationships(entity_id, tenant_id))


async def _each[T](
    entity_ids: Sequence[EntityId], read: Callable[[EntityId], Awaitable[T]]
) -> dict[EntityId, T]:
    """`read` of each distinct id, once the ids are checked as a batch read checks them."""
    ids = list(dict.fromkeys(check_entity_ids(entity_ids)))
    return dict(
        zip(ids, await asyncio.gather(*(read(entity_id) for entity_id in ids)), strict=True)
    )
