"""The graph projection: folds `DocumentExtracted` events into a graph store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.domain.events import DocumentExtracted
from redstring.domain.validation import check_collaborator
from redstring.ports.graph_store import GraphWriter

if TYPE_CHECKING:
    from redstring.domain.events import Event


class GraphProjection:
    """Writes each extracted document's entities, then its relationships.

    Idempotent: the writes are upserts keyed `(tenant_id, id)`, so applying
    an event again leaves the store as the first application left it.
    """

    def __init__(self, store: GraphWriter) -> None:
        self._store = check_collaborator(store, GraphWriter, argument="store")

    async def apply(self, event: Event) -> None:
        """Fold one event into the store; events of other kinds are ignored.

        Entities are written before relationships, and a `DocumentExtracted`
        only joins its own entities, so no endpoint is ever missing.
        """
        if isinstance(event, DocumentExtracted):
            await self._store.upsert_entities(event.entities)
            await self._store.upsert_relationships(event.relationships)
