"""The chunk projection: folds documents' passages, mentions and deletes into a chunk store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.domain.events import (
    DocumentChunked,
    DocumentDeleted,
    EntityDeleted,
    TenantDeleted,
)
from redstring.domain.validation import check_collaborator
from redstring.ports.chunk_store import ChunkStore

if TYPE_CHECKING:
    from redstring.domain.events import Event


class ChunkProjection:
    """Writes documents' chunks and mentions; deletes documents, tenants and an entity's mentions.

    A `DocumentChunked` replaces what the store held of its source (the
    store's `put_chunks` rule), then writes its mentions. Merges change
    nothing here: a mention keeps the entity id it was recorded with, and
    readers follow merges through the graph's `resolve` (ADR 0074).
    Idempotent: applying an event again leaves the store as the first
    application left it.
    """

    def __init__(self, store: ChunkStore) -> None:
        self._store = check_collaborator(store, ChunkStore, argument="store")

    async def apply(self, event: Event) -> None:
        """Fold one event into the store; events of other kinds are ignored."""
        if isinstance(event, DocumentChunked):
            await self._store.put_chunks(event.chunks)
            await self._store.put_mentions(event.mentions)
        elif isinstance(event, DocumentDeleted):
            await self._store.delete_source(event.source_id, event.tenant_id)
        elif isinstance(event, EntityDeleted):
            await self._store.delete_mentions_of(event.tenant_id, entity_ids=[event.entity_id])
        elif isinstance(event, TenantDeleted):
            await self._store.delete_by_tenant(event.tenant_id)
