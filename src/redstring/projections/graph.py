"""The graph projection: folds extractions, merges, undoings and deletes into a graph store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.domain.events import (
    DocumentExtracted,
    EntitiesMerged,
    EntityDeleted,
    MergeUndone,
    TenantDeleted,
)
from redstring.domain.merging import ALIASES_KEY, absorb
from redstring.domain.validation import check_collaborator
from redstring.ports.graph_reads import read_merged_ids
from redstring.ports.graph_store import GraphStore, MergedIdReader

if TYPE_CHECKING:
    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId


def _keep_aliases(entity: Entity, held: Entity) -> Entity:
    """`entity` with the aliases `held` has and it lacks appended, so a rewrite keeps them."""
    old = held.properties.get(ALIASES_KEY)
    if not isinstance(old, list) or not old:
        return entity
    new = entity.properties.get(ALIASES_KEY)
    current = list(new) if isinstance(new, list) else []
    missing = [alias for alias in old if alias not in current]
    if not missing:
        return entity
    return entity.model_copy(
        update={"properties": {**entity.properties, ALIASES_KEY: [*current, *missing]}}
    )


class GraphProjection:
    """Writes extracted documents, applies merges and undoings, and deletes entities and tenants.

    Reads follow merges, and so do writes: an extracted entity whose id was
    merged away is not written back; what it says that its canonical lacks
    (its name as an alias, a property, a description) is folded into the
    canonical, which wins every conflict (ADR 0107). Its relationships are
    written against the canonical, and rewriting an entity keeps the aliases
    it holds. Rewriting a canonical that entities were merged into keeps
    what it absorbed, on a store that lists merged ids (`MergedIdReader`,
    ADR 0120): the new extraction wins every conflict, and what it lacks (a
    property, the description, a name, a blocking key) is kept from the
    entity held. Re-extracting a document therefore never undoes a merge.
    Idempotent: applying an event again leaves the store as the first
    application left it.
    """

    def __init__(self, store: GraphStore) -> None:
        self._store = check_collaborator(store, GraphStore, argument="store")
        self._merges = store if isinstance(store, MergedIdReader) else None

    async def apply(self, event: Event) -> None:
        """Fold one event into the store; events of other kinds are ignored.

        Entities are written before relationships, and a `DocumentExtracted`
        only joins its own entities, so no endpoint is ever missing.
        """
        if isinstance(event, DocumentExtracted):
            await self._extracted(event)
        elif isinstance(event, EntitiesMerged):
            await self._store.merge_entities(event.canonical, event.merged_ids)
        elif isinstance(event, MergeUndone):
            await self._store.unmerge_entities(event.merged_ids, event.tenant_id)
            await self._store.upsert_entities(event.entities)
            await self._store.upsert_relationships(event.relationships)
        elif isinstance(event, EntityDeleted):
            await self._store.delete_entity(event.entity_id, event.tenant_id)
        elif isinstance(event, TenantDeleted):
            await self._store.delete_by_tenant(event.tenant_id)

    async def _extracted(self, event: DocumentExtracted) -> None:
        ids = [entity.id for entity in event.entities]
        canonical = await self._store.resolve(ids, event.tenant_id)
        # Reads follow merges: a merged id reads as the entity it was merged into.
        held = {e.id: e for e in await self._store.get_entities(ids, event.tenant_id)}
        writes = await self._rewritten(
            [e for e in event.entities if canonical[e.id] == e.id], held, event.tenant_id
        )
        for entity in event.entities:
            into = canonical[entity.id]
            target = writes.get(into) or held.get(into)
            if into == entity.id or target is None:
                continue
            folded = absorb(target, [entity])
            if folded != target:
                writes[into] = folded
        await self._store.upsert_entities(list(writes.values()))
        await self._store.upsert_relationships(
            [
                relationship.model_copy(
                    update={
                        "source_entity_id": canonical[relationship.source_entity_id],
                        "target_entity_id": canonical[relationship.target_entity_id],
                    }
                )
                for relationship in event.relationships
            ]
        )

    async def _rewritten(
        self, entities: list[Entity], held: dict[EntityId, Entity], tenant: TenantId
    ) -> dict[EntityId, Entity]:
        """What rewriting each held entity with its fresh extraction among `entities` writes.

        A canonical that others were merged into keeps what it absorbed: its
        fresh extraction absorbs the entity held (and wins every conflict).
        Otherwise only the held aliases are kept, so a re-extraction may drop
        a property on purpose. The store is asked about merges only where
        the two differ, all at once: an unchanged re-extraction reads nothing.
        """
        merges = self._merges
        writes: dict[EntityId, Entity] = {}
        folds: dict[EntityId, Entity] = {}
        for entity in entities:
            folds.pop(entity.id, None)  # an id listed twice: the last copy is written
            previous = held.get(entity.id)
            if previous is None or previous == entity:
                writes[entity.id] = entity
                continue
            writes[entity.id] = _keep_aliases(entity, previous)
            folded = absorb(entity, [previous])
            if merges is not None and folded != writes[entity.id]:
                folds[entity.id] = folded
        if folds:
            assert merges is not None
            asked = await read_merged_ids(merges, list(folds), tenant)
            for entity_id, folded in folds.items():
                if asked[entity_id]:
                    writes[entity_id] = folded
        return writes
