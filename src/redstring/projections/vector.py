"""The vector projection: folds embeddings, merges, undoings and deletes into a vector store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.domain.events import (
    DocumentDeleted,
    EntitiesEmbedded,
    EntitiesMerged,
    EntityDeleted,
    MergeUndone,
    PassagesEmbedded,
    TenantDeleted,
)
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import EntityId
from redstring.domain.validation import check_collaborator
from redstring.ports.vector_store import VectorStore

if TYPE_CHECKING:
    from redstring.domain.events import Event


class _VectorsProjection:
    """What both vector projections share: a whole `VectorStore` and its embedding writes."""

    def __init__(self, store: VectorStore) -> None:
        self._store = check_collaborator(store, VectorStore, argument="store")

    async def _write(self, event: EntitiesEmbedded | PassagesEmbedded) -> None:
        """Write the event's vectors in one batch, or raise `DimensionMismatchError`."""
        if event.dimension != self._store.dimension:
            raise DimensionMismatchError(expected=self._store.dimension, actual=event.dimension)
        await self._store.upsert_many(event.records)


class VectorProjection(_VectorsProjection):
    """Writes each embedding event's vectors, in one batch per event.

    A merge deletes the merged entities' vectors (the canonical's stands for
    them); undoing it writes them back from the event. A delete removes the
    entity's vector and those of the ids it names as merged into it, and a
    tenant's delete every vector of the tenant.

    Idempotent: the writes are upserts keyed `(tenant_id, entity_id)`. The
    store is a whole `VectorStore` because the projection needs its
    `dimension` as well as its writes.
    """

    async def apply(self, event: Event) -> None:
        """Fold one event into the store; events of other kinds are ignored.

        Raises:
            DimensionMismatchError: the event's vectors are not of the store's
                dimension; nothing is written.
        """
        if isinstance(event, EntitiesEmbedded):
            await self._write(event)
        elif isinstance(event, EntitiesMerged):
            for entity_id in event.merged_ids:
                await self._store.delete(entity_id, event.tenant_id)
        elif isinstance(event, MergeUndone):
            await self._store.upsert_many(event.vectors)
        elif isinstance(event, EntityDeleted):
            for entity_id in dict.fromkeys((event.entity_id, *event.merged_ids)):
                await self._store.delete(entity_id, event.tenant_id)
        elif isinstance(event, TenantDeleted):
            await self._store.delete_by_tenant(event.tenant_id)


class PassageVectorProjection(_VectorsProjection):
    """Writes each passage-embedding event's vectors; deletes a deleted document's or tenant's.

    The store holds passages' vectors only, each keyed by its chunk's id
    (`VectorRecord.entity_id`); entity events are ignored. Idempotent.
    """

    async def apply(self, event: Event) -> None:
        """Fold one passage or document event into the store; others are ignored.

        Raises:
            DimensionMismatchError: the passages' vectors are not of the
                store's dimension; nothing is written.
        """
        if isinstance(event, PassagesEmbedded):
            await self._write(event)
        elif isinstance(event, DocumentDeleted):
            for chunk_id in event.chunk_ids:
                await self._store.delete(EntityId(chunk_id), event.tenant_id)
        elif isinstance(event, TenantDeleted):
            await self._store.delete_by_tenant(event.tenant_id)
