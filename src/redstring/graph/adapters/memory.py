"""The in-memory graph store: the reference implementation of `GraphStore`.

Entities are frozen models; the store keeps its own copy of each one's
`properties` and hands out a fresh copy on every read, so nothing a caller
holds can reach what the store holds. Blocking keys and normalized names are
indexed per tenant, so a key lookup touches only the entities that carry it;
name units are indexed in a `_NameIndex` (see `redstring.graph.name_index`).

A tenant's entities are keyed by `id.int`, not by the `UUID`: hashing an int
is done in C, hashing a `UUID` is a Python call, and a write makes several.
Every container the store keeps per entity is one more object for the cyclic
garbage collector to walk on every full collection, so the store keeps as
few as it can: an index entry held by one entity is that entity's bare
`id.int`, becoming a set only when a second entity shares it, and stored
entities share their (never changed) fields-set and empty `properties`.
See ADR 0035. A large batch's name units are posted from its words, and the
batch is checked in one pass (ADR 0050).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import repeat
from typing import TYPE_CHECKING, Final, cast

from redstring.domain.entity import Entity
from redstring.domain.exceptions import MissingEntityError
from redstring.domain.json_safety import copy_json
from redstring.domain.merging import repoint
from redstring.domain.names import (
    entity_name_units,
    entity_name_words,
)
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.graph.name_index import UnitPostings
from redstring.graph.stored import copy_entity, copy_relationship
from redstring.ports.graph_store import LendingGraphStoreBase
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from redstring.domain.ids import EntityId, RelationshipId, TenantId


_set_attribute: Final = object.__setattr__
_new_object: Final = object.__new__


#: The `properties` of every stored entity that has none. The store never
#: changes a stored entity's properties and hands out only copies, so one
#: empty dict can stand for all of them (a dict per entity is one more object
#: for the garbage collector to walk).
_NO_PROPERTIES: Final[dict[str, object]] = {}


def _stored_copy(entity: Entity, fields: set[str]) -> Entity:
    """`copy_entity`, for the store's own copy: shares what the store never changes.

    An empty `properties` is `_NO_PROPERTIES`, and the fields-set is `fields`
    (equal to the entity's, shared by the store's entities): the store never
    changes either, and every read hands out its own copies.
    """
    state = entity.__dict__.copy()
    properties = state["properties"]
    state["properties"] = copy_json(properties) if properties else _NO_PROPERTIES
    copy = _new_object(Entity)
    _set_attribute(copy, "__dict__", state)
    _set_attribute(copy, "__pydantic_fields_set__", fields)
    _set_attribute(copy, "__pydantic_extra__", None)
    _set_attribute(copy, "__pydantic_private__", None)
    return copy


_copy_relationship: Final = copy_relationship


def _id_order(item: Entity | Relationship) -> int:
    # A UUID's text is its 128-bit integer in fixed-width hex, so the two orders agree.
    return item.id.int


def _by_id_string[T: (Entity, Relationship)](items: Iterable[T]) -> list[T]:
    return sorted(items, key=_id_order)


type _Members = int | set[int]
"""What an index keeps under a key: one entity's `id.int`, or a set of two or more."""


def _discard_member(index: dict[str, _Members], key: str, member: int) -> None:
    """Drop `member` from `key`; the caller knows `member` is held there (and only once)."""
    held = index[key]
    if isinstance(held, int):
        del index[key]
        return
    held.discard(member)
    if len(held) == 1:
        [index[key]] = held


def _members(index: dict[str, _Members], key: str) -> Iterable[int]:
    held = index.get(key)
    if held is None:
        return ()
    return (held,) if isinstance(held, int) else held


#: Below this many dead rows a `_NameIndex` never compacts.
_COMPACT_AFTER: Final = 1024
#: From this many entities a batch's postings are grouped with numpy.
_BULK_POSTINGS: Final = 256


class _NameIndex(UnitPostings):
    """One tenant's name units (see `UnitPostings`), each row holding its stored entity.

    Each indexed entity holds a row, found by its `id.int`. Replacing an
    entity marks its old row dead and appends a new one; the tenant rebuilds
    the index once more rows are dead than alive. Rows hold the stored
    entities themselves, so a lookup returns them without a dict lookup
    each.
    """

    __slots__ = ("entities", "row_of")

    def __init__(self) -> None:
        super().__init__()
        self.entities: list[Entity | None] = []
        self.row_of: dict[int, int] = {}

    def put_many(self, batch: dict[int, Entity], name_keys: list[str] | None = None) -> None:
        """Index each entity of `batch` (keyed by `id.int`) under a new row, retiring old rows.

        `name_keys`, when given, are `normalize_name` of each entity's name, in order.
        """
        row_of = self.row_of
        for key in batch:
            if key in row_of:
                self.remove(key)
        keys = list(batch)
        start = self._add_rows(keys)
        self.entities.extend(batch.values())
        row_of.update(zip(keys, range(start, start + len(keys)), strict=True))
        if len(batch) < _BULK_POSTINGS:
            for row, entity in enumerate(batch.values(), start):
                self._post(row, entity_name_units(entity))
            return
        words: list[str] = []
        counts: list[int] = []
        for entity, name_key in zip(batch.values(), name_keys or repeat(None), strict=False):
            found = entity_name_words(entity, name_key)
            words += found
            counts.append(len(found))
        self._post_words_in_bulk(words, counts, start)

    def remove(self, key: int) -> None:
        """Retire the row of the entity whose `id.int` is `key`; it must have one."""
        row = self.row_of.pop(key)
        self._retire(row)
        self.entities[row] = None

    def needs_compacting(self) -> bool:
        """More dead rows than live ones, and more than a handful."""
        return self.dead > max(_COMPACT_AFTER, len(self.row_of))

    def find(self, query_units: Iterable[str], limit: int) -> list[Entity]:
        """The stored entities of the best `limit` candidates, by shared units then `str(id)`."""
        # A row found is alive, so its entity is there.
        entities = cast("list[Entity]", self.entities)
        return [entities[row] for row in self.best_rows(query_units, limit)]


class _Tenant:
    """One tenant's entities, relationships and indexes; entities keyed by `id.int`."""

    __slots__ = (
        "adjacency",
        "by_key",
        "by_name",
        "entities",
        "names",
        "redirects",
        "relationships",
    )

    def __init__(self) -> None:
        self.entities: dict[int, Entity] = {}
        self.by_key: dict[str, _Members] = {}
        self.by_name: dict[str, _Members] = {}
        self.names = _NameIndex()
        self.relationships: dict[RelationshipId, Relationship] = {}
        self.adjacency: defaultdict[EntityId, set[RelationshipId]] = defaultdict(set)
        self.redirects: dict[EntityId, EntityId] = {}

    def resolve(self, entity_id: EntityId) -> EntityId:
        if not self.redirects:
            return entity_id
        seen = {entity_id}
        while (target := self.redirects.get(entity_id)) is not None and target not in seen:
            seen.add(target)
            entity_id = target
        return entity_id

    def get(self, entity_id: EntityId) -> Entity | None:
        """The stored entity `entity_id` resolves to, or `None`."""
        return self.entities.get(self.resolve(entity_id).int)

    def __contains__(self, entity_id: EntityId) -> bool:
        return entity_id.int in self.entities

    def put_entities(self, batch: dict[int, Entity]) -> None:
        """Store each entity of `batch`, keyed by `id.int`, replacing any held."""
        entities, by_key, by_name = self.entities, self.by_key, self.by_name
        name_keys: list[str] = []
        for key, entity in batch.items():
            previous = entities.get(key)
            if previous is not None:
                for blocking_key in previous.blocking_keys or ():
                    _discard_member(by_key, blocking_key, key)
                _discard_member(by_name, normalize_name(previous.name), key)
            entities[key] = entity
            # Each key holds a bare `id.int` until a second entity shares it (see
            # `_Members`); written out here, as this runs once per key of every entity.
            for blocking_key in entity.blocking_keys or ():
                held = by_key.get(blocking_key)
                if held is None:
                    by_key[blocking_key] = key
                elif type(held) is int:
                    by_key[blocking_key] = {held, key}
                else:
                    held.add(key)  # type: ignore[union-attr]
            name_key = normalize_name(entity.name)
            name_keys.append(name_key)
            held = by_name.get(name_key)
            if held is None:
                by_name[name_key] = key
            elif type(held) is int:
                by_name[name_key] = {held, key}
            else:
                held.add(key)  # type: ignore[union-attr]
        self.names.put_many(batch, name_keys)
        if self.names.needs_compacting():
            self.names = _NameIndex()
            self.names.put_many(entities)

    def put_relationship(self, relationship: Relationship) -> None:
        previous = self.relationships.get(relationship.id)
        if previous is not None:
            self.adjacency[previous.source_entity_id].discard(previous.id)
            self.adjacency[previous.target_entity_id].discard(previous.id)
        self.relationships[relationship.id] = relationship
        self.adjacency[relationship.source_entity_id].add(relationship.id)
        self.adjacency[relationship.target_entity_id].add(relationship.id)

    def remove_entity(self, entity_id: EntityId) -> bool:
        key = entity_id.int
        entity = self.entities.pop(key, None)
        if entity is None:
            return False
        for blocking_key in entity.blocking_keys or ():
            _discard_member(self.by_key, blocking_key, key)
        _discard_member(self.by_name, normalize_name(entity.name), key)
        self.names.remove(key)
        for relationship_id in self.adjacency.pop(entity_id, set()):
            relationship = self.relationships.pop(relationship_id)
            for endpoint in (relationship.source_entity_id, relationship.target_entity_id):
                if endpoint != entity_id:
                    self.adjacency[endpoint].discard(relationship_id)
        return True


class InMemoryGraphStore(AsyncClosable, LendingGraphStoreBase):
    """A `GraphStore` held in process memory, for tests and small jobs.

    Keyed `(tenant_id, id)`; reads return copies; a batch is validated whole
    before any of it is written. Not thread-safe: use it from one event loop.
    """

    def __init__(self) -> None:
        self._tenants: dict[TenantId, _Tenant] = {}
        self._fields_sets: dict[frozenset[str], set[str]] = {}

    async def _release(self) -> None:
        self._tenants.clear()

    def _tenant(self, tenant_id: TenantId) -> _Tenant:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            tenant = self._tenants[tenant_id] = _Tenant()
        return tenant

    # -- writes ---------------------------------------------------------------

    async def _upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store a copy of each entity; a later one with the same key wins."""
        # Grouped by tenant, a later entity with the same id replacing an
        # earlier one, so that each tenant indexes its batch in one go. Most
        # batches hold one tenant and one fields-set, so the last of each is
        # kept at hand.
        batches: dict[int, tuple[TenantId, dict[int, Entity]]] = {}
        tenant_key, batch = -1, {}
        fields: set[str] | None = None
        shared = set[str]()
        for entity in entities:
            if entity.__pydantic_fields_set__ != fields:
                fields = entity.__pydantic_fields_set__
                shared = self._shared_fields(fields)
            tenant_id = entity.tenant_id
            if tenant_id.int != tenant_key:
                tenant_key = tenant_id.int
                held = batches.get(tenant_key)
                if held is None:
                    held = batches[tenant_key] = (tenant_id, {})
                batch = held[1]
            batch[entity.id.int] = _stored_copy(entity, shared)
        for tenant_id, batch_entities in batches.values():
            self._tenant(tenant_id).put_entities(batch_entities)

    def _shared_fields(self, fields: set[str]) -> set[str]:
        """The store's own set equal to `fields`, which its entities share."""
        key = frozenset(fields)
        shared = self._fields_sets.get(key)
        if shared is None:
            shared = self._fields_sets[key] = set(key)
        return shared

    async def _upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store every relationship, or none if any endpoint is absent from its tenant."""
        for relationship in relationships:
            tenant = self._tenants.get(relationship.tenant_id)
            for endpoint in (relationship.source_entity_id, relationship.target_entity_id):
                if tenant is None or endpoint not in tenant:
                    raise MissingEntityError(entity_id=endpoint, tenant_id=relationship.tenant_id)
        for relationship in relationships:
            self._tenant(relationship.tenant_id).put_relationship(_copy_relationship(relationship))

    async def _merge_entities(self, canonical: Entity, merged: list[EntityId]) -> None:
        tenant = self._tenant(canonical.tenant_id)
        if canonical.id in tenant.redirects:
            raise ValueError(f"canonical {canonical.id} is itself merged into another entity")
        absorbed = [entity_id for entity_id in merged if entity_id in tenant]
        for entity_id in merged:
            if entity_id not in tenant and tenant.resolve(entity_id) != canonical.id:
                raise MissingEntityError(entity_id=entity_id, tenant_id=canonical.tenant_id)
        stored = _stored_copy(canonical, self._shared_fields(canonical.__pydantic_fields_set__))
        tenant.put_entities({stored.id.int: stored})
        for entity_id in absorbed:
            for relationship_id in sorted(tenant.adjacency.get(entity_id, set()), key=str):
                relationship = tenant.relationships[relationship_id]
                tenant.put_relationship(repoint(relationship, entity_id, canonical.id))
            tenant.adjacency.pop(entity_id, None)
            tenant.remove_entity(entity_id)
            tenant.redirects[entity_id] = canonical.id

    async def _unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        tenant = self._tenants.get(tenant_id)
        for entity_id in merged_ids:
            if tenant is not None:
                tenant.redirects.pop(entity_id, None)

    async def _delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return False
        target = tenant.resolve(entity_id)
        removed = tenant.remove_entity(target)
        if tenant.redirects:
            merged_into: defaultdict[EntityId, list[EntityId]] = defaultdict(list)
            for merged, canonical in tenant.redirects.items():
                merged_into[canonical].append(merged)
            gone = [target]
            while gone:
                for merged in merged_into.pop(gone.pop(), ()):
                    tenant.redirects.pop(merged, None)
                    gone.append(merged)
        return removed

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        tenant = self._tenants.pop(tenant_id, None)
        return 0 if tenant is None else len(tenant.entities)

    # -- reads ----------------------------------------------------------------

    async def _held_tenants(self) -> list[TenantId]:
        return sorted((key for key, held in self._tenants.items() if held.entities), key=str)

    async def _count(self, tenant_id: TenantId) -> int:
        tenant = self._tenants.get(tenant_id)
        return 0 if tenant is None else len(tenant.entities)

    async def _get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        tenant = self._tenants.get(tenant_id)
        entity = None if tenant is None else tenant.get(entity_id)
        return None if entity is None else copy_entity(entity)

    async def _get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        found: dict[int, Entity] = {}
        entities, resolve = tenant.entities, tenant.resolve
        for requested in entity_ids:
            key = resolve(requested).int
            entity = entities.get(key)
            if entity is not None and key not in found:
                found[key] = copy_entity(entity)
        return list(found.values())

    async def _find_entities(
        self, tenant_id: TenantId, name: str | None, entity_type: str | None, limit: int | None
    ) -> list[Entity]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        if name is None:
            candidates: Iterable[Entity] = tenant.entities.values()
        else:
            keys = _members(tenant.by_name, normalize_name(name))
            candidates = (tenant.entities[key] for key in keys)
        matches = _by_id_string(
            entity
            for entity in candidates
            if entity_type is None or entity.entity_type == entity_type
        )
        return [copy_entity(entity) for entity in matches[:limit]]

    async def _find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return {key: [] for key in keys}
        result: dict[str, list[Entity]] = {}
        for key in keys:
            held = (tenant.entities[member] for member in _members(tenant.by_key, key))
            result[key] = [copy_entity(entity) for entity in _by_id_string(held)]
        return result

    async def _resolve(
        self, requested: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None or not tenant.redirects:
            return dict(zip(requested, requested, strict=True))
        return {entity_id: tenant.resolve(entity_id) for entity_id in requested}

    async def _merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> list[EntityId]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None or not tenant.redirects:
            return []
        return [merged for merged in tenant.redirects if tenant.resolve(merged) == entity_id]

    async def _merged_ids_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> Mapping[EntityId, Iterable[EntityId]]:
        """Every redirect resolved once, not once per requested id."""
        tenant = self._tenants.get(tenant_id)
        if tenant is None or not tenant.redirects:
            return {}
        wanted = set(entity_ids)
        found: dict[EntityId, list[EntityId]] = {}
        for merged in tenant.redirects:
            canonical = tenant.resolve(merged)
            if canonical in wanted:
                found.setdefault(canonical, []).append(merged)
        return found

    async def _find_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        shared = await self._find_shared_name_candidates(units, tenant_id, limit)
        return [copy_entity(entity) for entity in shared]

    async def _find_shared_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        return tenant.names.find(units, limit)

    async def _get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        tenant = self._tenants.get(tenant_id)
        relationship = None if tenant is None else tenant.relationships.get(relationship_id)
        return None if relationship is None else _copy_relationship(relationship)

    async def _get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, relationship_type: str | None
    ) -> list[Relationship]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        touching = (
            tenant.relationships[relationship_id]
            for relationship_id in tenant.adjacency.get(entity_id, ())
        )
        return [
            _copy_relationship(relationship)
            for relationship in _by_id_string(touching)
            if relationship_type is None or relationship.relationship_type == relationship_type
        ]

    async def _neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, depth: int
    ) -> list[Entity]:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        seen = {entity_id}
        frontier = [entity_id]
        found: list[Entity] = []
        for _ in range(depth):
            layer: set[EntityId] = set()
            for current in frontier:
                for relationship_id in tenant.adjacency.get(current, ()):
                    relationship = tenant.relationships[relationship_id]
                    for other in (relationship.source_entity_id, relationship.target_entity_id):
                        if other not in seen:
                            layer.add(other)
            if not layer:
                break
            seen |= layer
            found.extend(_by_id_string(tenant.entities[other.int] for other in layer))
            frontier = list(layer)
        return [copy_entity(entity) for entity in found]
