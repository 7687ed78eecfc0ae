"""The graph store port.

Keyed `(tenant_id, id)`, read-your-writes, and never crosses tenants: two
tenants may hold the same entity id and each sees only its own. Reads return
copies, so a caller can never mutate what the store holds.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from redstring.domain.merging import check_merge
from redstring.domain.names import NAME_CANDIDATE_LIMIT, query_name_units
from redstring.domain.validation import (
    check_depth,
    check_entities,
    check_entity_id,
    check_entity_ids,
    check_limit,
    check_names,
    check_optional_limit,
    check_optional_name,
    check_relationship_id,
    check_relationships,
    check_tenant_id,
    check_texts,
)
from redstring.ports.graph_batches import (
    MergedIdBatchReader,
    NameCandidateBatchReader,
    RelationshipBatchReader,
    SharedNameCandidateBatchReader,
)
from redstring.ports.tenants import TenantCounterBase

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, RelationshipId, TenantId
    from redstring.domain.relationship import Relationship


@runtime_checkable
class NameCandidateReader(Protocol):
    """Finds the entities whose names share enough with a free-text query."""

    async def find_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        """The tenant's entities sharing the most name units with `query`, best first.

        Units are those of `redstring.domain.names`: an entity's come from its
        name, its `normalized_name` and each string in a list under
        `properties["aliases"]`. A candidate shares at least
        `MIN_SHARED_UNITS` distinct units with the query; candidates are
        ordered by how many they share, most first, then by `str(id)`, and
        at most `limit` are returned. `[]` when nothing shares enough (the
        index abstains rather than guesses). Answered from an index, never
        by scanning the tenant. See ADR 0014.

        Raises:
            ValueError: `query` is not a string, or `limit` is not a
                non-negative integer.
        """
        ...


@runtime_checkable
class SharedNameCandidateReader(Protocol):
    """Finds name candidates and lends the store's own entities, for a caller that only reads."""

    async def find_shared_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        """What `find_name_candidates` returns, as the entities the store holds, not copies.

        The exception to "reads return copies", for a caller that reads many
        candidates and keeps few (the lexical channel scores 50 and returns
        `k`): it must change none of them, and hand out only copies of those
        it keeps (`redstring.graph.stored.copy_entity`). A store holding its
        entities in process memory offers it to save a copy per candidate;
        a store that parses each entity it reads has nothing to lend, and
        does not. Raises as `find_name_candidates` does. See ADR 0052.
        """
        ...


@runtime_checkable
class EntityReader(Protocol):
    """Reads entities by id, and by blocking key: what a `Retriever` needs of a graph.

    The narrowest graph a `Retriever` accepts. A store that also offers
    `find_name_candidates` (a name index) or `resolve` (merges) lends them
    to the lexical and the semantic channel; without them the lexical
    channel's candidates are the query's blocking-key groups, and every id
    is its own canonical id. `GraphReader` holds both methods.
    """

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The entities the tenant holds among `entity_ids`; see `GraphReader.get_entities`."""
        ...

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key; see `GraphReader.find_by_blocking_keys`."""
        ...


@runtime_checkable
class MergeResolver(Protocol):
    """Tells which entity an id was merged into."""

    async def resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each requested id's canonical id; see `GraphReader.resolve`."""
        ...


@runtime_checkable
class MergedIdReader(MergeResolver, Protocol):
    """Reads merges both ways: `resolve`, and the ids merged into an entity."""

    async def merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> list[EntityId]:
        """Every other id that `resolve` maps to `entity_id`, sorted by `str(id)`.

        Merges of merges included: one merged into an entity later merged
        into `entity_id` is listed. `[]` when nothing resolves to it, which
        includes an id that is itself merged away, and every id after an
        undo forgot its merge. See ADR 0085.
        """
        ...


@runtime_checkable
class GraphReader(NameCandidateReader, Protocol):
    """Reads entities and relationships, and finds name candidates."""

    async def get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        """The entity, or `None` when the tenant holds no such id."""
        ...

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The entities the tenant holds among `entity_ids`, in one round trip.

        Missing ids are omitted; the order is unspecified, so key the result
        by `Entity.id` rather than zipping it with the request.
        """
        ...

    async def find_entities(
        self,
        tenant_id: TenantId,
        *,
        name: str | None = None,
        entity_type: str | None = None,
        limit: int | None = None,
    ) -> list[Entity]:
        """Entities whose normalized name and/or type match exactly.

        `name` is compared after `normalize_name` on both sides; `entity_type`
        exactly. Ordered by `str(id)`; `limit` is `None` (no limit) or an
        integer within `0..MAX_LIMIT`.
        """
        ...

    async def find_by_blocking_key(self, key: str, tenant_id: TenantId) -> list[Entity]:
        """Every entity of the tenant carrying `key` among its blocking keys."""
        ...

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key, in one round trip.

        Every requested key is present in the result, `[]` when nothing
        carries it; an entity carrying several requested keys appears under
        each. Within a key, entities are ordered by `str(id)`.
        """
        ...

    async def get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        """The relationship, or `None`."""
        ...

    async def get_relationships(
        self,
        entity_id: EntityId,
        tenant_id: TenantId,
        *,
        relationship_type: str | None = None,
    ) -> list[Relationship]:
        """Relationships with the entity at either end, ordered by `str(id)`."""
        ...

    async def neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, *, depth: int = 1
    ) -> list[Entity]:
        """Entities within `depth` hops, either direction, excluding the start.

        Ordered by hop count, then `str(id)`. `depth` is an integer within
        `1..MAX_DEPTH`; the walk stops early when a hop finds nothing new.
        """
        ...

    async def resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each requested id's canonical id: the entity it was merged into, if any.

        An id never merged (or unknown) maps to itself; one merged into an
        entity that was merged in turn maps to the last. Every requested id
        is a key. Reads follow merges: `get_entity` and `get_entities` of a
        merged id return its canonical entity.
        """
        ...


@runtime_checkable
class GraphWriter(Protocol):
    """Writes entities and relationships."""

    async def upsert_entity(self, entity: Entity) -> None:
        """Store the entity, replacing any with the same `(tenant_id, id)`."""
        ...

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store every entity; a later one with the same key wins."""
        ...

    async def upsert_relationship(self, relationship: Relationship) -> None:
        """Store the relationship.

        Raises:
            MissingEntityError: an endpoint is not in the relationship's tenant.
        """
        ...

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store every relationship, or none of them if any endpoint is missing."""
        ...

    async def delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity and every relationship with it at either end.

        The id is followed as reads follow it: a merged id deletes the entity
        it resolves to. Every id merged into the deleted entity (and into
        those, transitively) is forgotten too, so it resolves to itself and
        reads as nothing: no id resolves to an entity the tenant does not
        hold. Only `tenant_id`'s entity is touched; the same id in another
        tenant stays. `True` if the tenant held the entity, `False` (and no
        entity changed) if not. See ADR 0057.
        """
        ...


@runtime_checkable
class GraphMerge(Protocol):
    """Folds entities into one, and forgets such a fold."""

    async def merge_entities(self, canonical: Entity, merged_ids: Sequence[EntityId]) -> None:
        """Absorb `merged_ids` into `canonical`, in one step.

        Stores `canonical` as given, points every relationship touching a
        merged entity at it instead (ids kept), removes the merged entities,
        and records that each merged id now resolves to it. A merged id that
        already resolves to `canonical` is accepted, so applying the same
        merge twice changes nothing more.

        Raises:
            ValueError: `merged_ids` is empty, repeats an id, or holds the
                canonical's; or `canonical`'s id is itself merged away.
            MissingEntityError: a merged id is neither held nor merged into
                `canonical`. Nothing is written.
        """
        ...

    async def unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        """Forget that `merged_ids` resolve elsewhere; ids not merged are ignored.

        Restores nothing else: the caller writes back the entities and the
        relationships as they were (see `MergeUndone`).
        """
        ...


@runtime_checkable
class GraphPurge(Protocol):
    """Removes a whole tenant."""

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every entity and relationship of the tenant; return the entity count."""
        ...


@runtime_checkable
class GraphStore(GraphReader, GraphWriter, GraphMerge, GraphPurge, Protocol):
    """Every graph store capability together."""


def _units_of(
    queries: Sequence[str], tenant_id: TenantId, limit: int
) -> tuple[list[str], dict[str, list[str]]]:
    """The checked queries; each distinct one with units, and its units (none at limit 0)."""
    batch = check_texts(queries, argument="queries")
    check_tenant_id(tenant_id)
    check_limit(limit)
    if not limit:
        return batch, {}
    return batch, {
        query: units for query in dict.fromkeys(batch) if (units := query_name_units(query))
    }


def _name_units(query: str, tenant_id: TenantId, limit: int) -> list[str]:
    """The checked query's units, or `[]` when there is nothing to look up."""
    check_tenant_id(tenant_id)
    check_limit(limit)
    units = query_name_units(query)
    return units if limit else []


class GraphStoreBase(
    GraphStore,
    MergedIdReader,
    MergedIdBatchReader,
    RelationshipBatchReader,
    NameCandidateBatchReader,
    TenantCounterBase,
):
    """A `GraphStore` whose public methods check their arguments, then call its hooks.

    Every check of the port's contract runs here, once, so every store built
    on it refuses the same input with the same error, and a batch is
    checked whole before any of it reaches a hook. An adapter subclasses
    `AsyncClosable` and this class and implements the hooks, which receive
    checked arguments (a batch or id list never empty). A class that
    implements `GraphStore`'s methods itself is a graph store all the same.
    """

    # -- writes ---------------------------------------------------------------

    async def upsert_entity(self, entity: Entity) -> None:
        """Store the entity, replacing any with the same `(tenant_id, id)`."""
        await self.upsert_entities([entity])

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store every entity; a later one with the same key wins."""
        batch = check_entities(entities)
        if batch:
            await self._upsert_entities(batch)

    async def upsert_relationship(self, relationship: Relationship) -> None:
        """Store the relationship.

        Raises:
            MissingEntityError: an endpoint is not in the relationship's tenant.
        """
        await self.upsert_relationships([relationship])

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store every relationship, or none of them if any endpoint is missing.

        Raises:
            MissingEntityError: some endpoint is not in its relationship's
                tenant; it names the first such endpoint in batch order.
        """
        batch = check_relationships(relationships)
        if batch:
            await self._upsert_relationships(batch)

    async def merge_entities(self, canonical: Entity, merged_ids: Sequence[EntityId]) -> None:
        """Absorb `merged_ids` into `canonical`, in one step; see `GraphMerge`."""
        [entity] = check_entities([canonical], argument="canonical")
        await self._merge_entities(entity, check_merge(entity.id, merged_ids))

    async def unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        """Forget that `merged_ids` resolve elsewhere; see `GraphMerge`."""
        ids = check_entity_ids(merged_ids, argument="merged_ids")
        check_tenant_id(tenant_id)
        if ids:
            await self._unmerge_entities(ids, tenant_id)

    async def delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity and its relationships; `True` if the tenant held it."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        return await self._delete_entity(entity_id, tenant_id)

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every entity and relationship of the tenant; return the entity count."""
        check_tenant_id(tenant_id)
        return await self._delete_by_tenant(tenant_id)

    # -- reads ----------------------------------------------------------------

    async def get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        """The entity (the canonical one for a merged id), or `None`."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        return await self._get_entity(entity_id, tenant_id)

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The held entities among `entity_ids` (merges followed), each once, in no order."""
        ids = check_entity_ids(entity_ids)
        check_tenant_id(tenant_id)
        return await self._get_entities(ids, tenant_id) if ids else []

    async def resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each requested id's canonical id; itself when it was never merged."""
        ids = check_entity_ids(entity_ids)
        check_tenant_id(tenant_id)
        return await self._resolve(ids, tenant_id) if ids else {}

    async def merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> list[EntityId]:
        """Every other id resolving to `entity_id`, by `str(id)`; see `MergedIdReader`."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        found = await self._merged_ids(entity_id, tenant_id)
        return sorted(set(found) - {entity_id}, key=str)

    async def merged_ids_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[EntityId]]:
        """`merged_ids` of each requested id, read at once; see `MergedIdBatchReader`."""
        ids = list(dict.fromkeys(check_entity_ids(entity_ids)))
        check_tenant_id(tenant_id)
        found = await self._merged_ids_of(ids, tenant_id) if ids else {}
        return {
            entity_id: sorted(set(found.get(entity_id, ())) - {entity_id}, key=str)
            for entity_id in ids
        }

    async def find_entities(
        self,
        tenant_id: TenantId,
        *,
        name: str | None = None,
        entity_type: str | None = None,
        limit: int | None = None,
    ) -> list[Entity]:
        """Entities matching the normalized `name` and/or exact `entity_type`, by `str(id)`.

        Raises:
            ValueError: `limit` is not an integer within `0..MAX_LIMIT`.
        """
        check_tenant_id(tenant_id), check_optional_limit(limit)
        check_optional_name(name, argument="name")
        check_optional_name(entity_type, argument="entity_type")
        return await self._find_entities(tenant_id, name, entity_type, limit)

    async def find_by_blocking_key(self, key: str, tenant_id: TenantId) -> list[Entity]:
        """Every entity of the tenant carrying `key`, ordered by `str(id)`."""
        return (await self.find_by_blocking_keys([key], tenant_id))[key]

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key; every key is present, `[]` when nothing carries it."""
        requested = check_names(keys, argument="keys")
        check_tenant_id(tenant_id)
        return await self._find_by_blocking_keys(requested, tenant_id) if requested else {}

    async def find_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        """The entities sharing the most name units with `query`, best first.

        See `NameCandidateReader.find_name_candidates` for the contract.
        """
        units = _name_units(query, tenant_id, limit)
        return await self._find_name_candidates(units, tenant_id, limit) if units else []

    async def find_name_candidates_of(
        self, queries: Sequence[str], tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> dict[str, list[Entity]]:
        """`find_name_candidates` of each query, read at once; see `NameCandidateBatchReader`."""
        batch, units_of = _units_of(queries, tenant_id, limit)
        found = await self._find_name_candidates_of(units_of, tenant_id, limit) if units_of else {}
        return {query: found.get(query, []) for query in batch}

    async def get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        """The relationship, or `None`."""
        check_relationship_id(relationship_id), check_tenant_id(tenant_id)
        return await self._get_relationship(relationship_id, tenant_id)

    async def get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, *, relationship_type: str | None = None
    ) -> list[Relationship]:
        """Relationships with the entity at either end, ordered by `str(id)`."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        check_optional_name(relationship_type, argument="relationship_type")
        return await self._get_relationships(entity_id, tenant_id, relationship_type)

    async def relationships_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        """`get_relationships` of each requested id, read at once; see `RelationshipBatchReader`."""
        ids = list(dict.fromkeys(check_entity_ids(entity_ids)))
        check_tenant_id(tenant_id)
        found = await self._relationships_of(ids, tenant_id) if ids else {}
        return {entity_id: found.get(entity_id, []) for entity_id in ids}

    async def neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, *, depth: int = 1
    ) -> list[Entity]:
        """Entities within `depth` hops, either direction, by hop count then `str(id)`.

        Raises:
            ValueError: `depth` is not an integer within `1..MAX_DEPTH`.
        """
        check_entity_id(entity_id), check_tenant_id(tenant_id), check_depth(depth)
        return await self._neighbors(entity_id, tenant_id, depth)

    # -- hooks ----------------------------------------------------------------

    @abstractmethod
    async def _upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store a checked, non-empty batch; a later entity with the same key wins."""

    @abstractmethod
    async def _upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store a checked, non-empty batch, or none of it if an endpoint is missing."""

    @abstractmethod
    async def _merge_entities(self, canonical: Entity, merged_ids: list[EntityId]) -> None:
        """Absorb `merged_ids` (checked by `check_merge`) into `canonical`."""

    @abstractmethod
    async def _unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        """Forget that the (non-empty) `merged_ids` resolve elsewhere."""

    @abstractmethod
    async def _delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove one entity and its relationships; `True` if it was held."""

    @abstractmethod
    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove the tenant; return how many entities it held."""

    async def _get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        """One entity, or `None`; by default, read as `_get_entities` reads it."""
        found = await self._get_entities([entity_id], tenant_id)
        return found[0] if found else None

    @abstractmethod
    async def _get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The held entities among the (non-empty) ids, merges followed, each once."""

    @abstractmethod
    async def _resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each of the (non-empty) ids' canonical id."""

    @abstractmethod
    async def _merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> Iterable[EntityId]:
        """The ids whose chain of merges ends at `entity_id`, in any order."""

    async def _merged_ids_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> Mapping[EntityId, Iterable[EntityId]]:
        """`_merged_ids` of each distinct id; an adapter overrides it to read them at once."""
        return {entity_id: await self._merged_ids(entity_id, tenant_id) for entity_id in entity_ids}

    @abstractmethod
    async def _find_entities(
        self, tenant_id: TenantId, name: str | None, entity_type: str | None, limit: int | None
    ) -> list[Entity]:
        """Entities matching the checked filters, by `str(id)`, at most `limit`."""

    @abstractmethod
    async def _find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key (the keys non-empty); every key present."""

    @abstractmethod
    async def _find_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        """Copies of the best `limit >= 1` candidates for the query's (non-empty) `units`."""

    async def _find_name_candidates_of(
        self, units_of: dict[str, list[str]], tenant_id: TenantId, limit: int
    ) -> Mapping[str, list[Entity]]:
        """`_find_name_candidates` of each query's units; overridden to read at once."""
        return {
            query: await self._find_name_candidates(units, tenant_id, limit)
            for query, units in units_of.items()
        }

    @abstractmethod
    async def _get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        """The relationship, or `None`."""

    @abstractmethod
    async def _get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, relationship_type: str | None
    ) -> list[Relationship]:
        """Relationships touching the entity, of the type if one is given, by `str(id)`."""

    async def _relationships_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> Mapping[EntityId, list[Relationship]]:
        """`_get_relationships` of each distinct id, any type; an adapter reads them at once."""
        return {
            entity_id: await self._get_relationships(entity_id, tenant_id, None)
            for entity_id in entity_ids
        }

    @abstractmethod
    async def _neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, depth: int
    ) -> list[Entity]:
        """Entities within `depth` (checked) hops, by hop count then `str(id)`."""


class LendingGraphStoreBase(
    GraphStoreBase, SharedNameCandidateReader, SharedNameCandidateBatchReader
):
    """A `GraphStoreBase` that also lends its own entities as name candidates (ADR 0052).

    `find_shared_name_candidates` checks its arguments as
    `find_name_candidates` does and calls `_find_shared_name_candidates`;
    the adapter's `_find_name_candidates` copies what that returns.
    """

    async def find_shared_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        """The entities `find_name_candidates` would copy, lent to a caller that only reads.

        See `SharedNameCandidateReader.find_shared_name_candidates`: change
        none of them, and hand out only copies.
        """
        units = _name_units(query, tenant_id, limit)
        return await self._find_shared_name_candidates(units, tenant_id, limit) if units else []

    async def find_shared_name_candidates_of(
        self, queries: Sequence[str], tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> dict[str, list[Entity]]:
        """Lent candidates of each query, at once; see `SharedNameCandidateBatchReader`."""
        batch, units_of = _units_of(queries, tenant_id, limit)
        found = (
            await self._find_shared_name_candidates_of(units_of, tenant_id, limit)
            if units_of
            else {}
        )
        return {query: found.get(query, []) for query in batch}

    async def _find_shared_name_candidates_of(
        self, units_of: dict[str, list[str]], tenant_id: TenantId, limit: int
    ) -> Mapping[str, list[Entity]]:
        """`_find_shared_name_candidates` of each query's units; overridden to read at once."""
        return {
            query: await self._find_shared_name_candidates(units, tenant_id, limit)
            for query, units in units_of.items()
        }

    @abstractmethod
    async def _find_shared_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        """The store's own best `limit >= 1` candidates for the (non-empty) `units`."""
