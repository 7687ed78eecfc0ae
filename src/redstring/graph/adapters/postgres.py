"""The Postgres graph store: a `GraphStore` that several processes can share.

Tables, in the adapter's schema (`redstring` unless told otherwise):

- `graph_entities`: one row per `(tenant_id, id)`, the entity as the JSON
  `model_dump_json` gives, with `normalize_name(name)` and `entity_type` in
  indexed columns.
- `graph_entity_keys`: one row per `(tenant_id, key, entity_id)`; a
  blocking-key lookup is one range scan of its primary key.
- `graph_relationships`: one row per `(tenant_id, id)`, as JSON, with both
  endpoints indexed.
- `graph_merges`: where each merged-away id resolves.
- `graph_tenants`: each tenant's `generation`, moved by every entity write
  (and its `reset`, moved by a purge); `graph_deletions`: the revision at
  which each deleted or merged-away entity went. A store holds each
  tenant's name index in process and brings it up to date from these
  before every name-candidate lookup.

Ids are `uuid` columns, whose byte order is `str(id)` order. Every statement
names the tenant in its key and its `WHERE`, and every value travels as a
bound parameter. Needs the `postgres` extra. Design: ADRs 0031 and 0037.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.domain.exceptions import MissingEntityError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.limits import MAX_CACHE_SIZE
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.validation import (
    check_integer,
)
from redstring.graph.adapters._postgres_sql import TABLES, Sql
from redstring.graph.name_index import NameIndex
from redstring.graph.stored import copy_entity, entity_from_json
from redstring.ports.graph_store import LendingGraphStoreBase
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters._replica import ReplicaSql, RevisionCache, TenantReplicas
from redstring.storage.adapters.postgres import (
    DEFAULT_POOL_SIZE,
    DEFAULT_SCHEMA,
    Connection,
    PostgresClient,
    asyncpg,
    client_for,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import RelationshipId

#: The layout this module reads and writes, recorded in the schema's `meta` table.
SCHEMA_VERSION: Final = 1
_COMPONENT: Final = "graph"
#: Rows sent in one statement of a batch; the batch is still one transaction.
_CHUNK: Final = 5_000


#: How many parsed entities a store keeps for its blocking-key reads by default.
DEFAULT_CACHE_SIZE: Final = 200_000


def _chunks[T](items: Sequence[T]) -> list[Sequence[T]]:
    return [items[start : start + _CHUNK] for start in range(0, len(items), _CHUNK)]


class PostgresGraphStore(AsyncClosable, LendingGraphStoreBase):
    """A `GraphStore` kept in Postgres, shared by every process that opens it.

    Give a `dsn` (a `postgresql://` URL; asyncpg reads no libpq keyword string) and the
    store opens a pool of up to `pool_size` connections on first use; or give
    a `pool` you own (an `asyncpg.Pool`), which the store uses and never
    closes. Tables are created in `schema` on first use and their layout
    version is checked on every open. Each call is one transaction, so a
    batch is written whole or not at all, even if the writer is killed
    mid-batch; reads return copies, so a caller can never reach what the
    store holds.

    With `read_only=True` (and a `dsn`) nothing is created or written: a
    schema that holds no redstring graph is refused on first use with
    `StoreError`, and so is every write.

    Name-candidate reads count on each tenant's name index, held in process
    and brought up to date before each read (ADR 0037). Blocking-key reads
    keep up to
    `cache_size` parsed entities in process, each with the revision it was
    read at: a read fetches every matching entity's current revision, and
    the text of only those whose revision this store does not hold.

    Raises (from any method):
        ValueError: an argument is out of range; from the constructor, not
            exactly one of `dsn` and `pool`, or a `schema` that is not a
            lower-case SQL identifier.
        StoreError: the store is closed, the database failed (the driver's
            error is the `__cause__`), or the schema holds a graph layout
            version this code does not read.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: asyncpg.Pool | None = None,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = DEFAULT_POOL_SIZE,
        cache_size: int = DEFAULT_CACHE_SIZE,
        read_only: bool = False,
    ) -> None:
        connect = (dsn, pool)
        store = "postgres graph store"
        self._client = client_for(self, store, connect, schema, pool_size, read_only=read_only)
        check_integer(cache_size, argument="cache_size", minimum=0, maximum=MAX_CACHE_SIZE)
        self._sql = Sql(self._client.schema)
        self._ready = False
        self._held: RevisionCache[tuple[TenantId, EntityId], Entity] = RevisionCache(cache_size)
        self._names: TenantReplicas[NameIndex] = TenantReplicas(
            empty=NameIndex, apply=self._apply_names
        )
        self._replica_sql = ReplicaSql(
            self._sql.generation, self._sql.rows_since, self._sql.deletions_since
        )

    def _describe(self) -> str:
        return f"schema={self._client.schema!r}"

    async def _release(self) -> None:
        """Close the pool if the store opened it, and drop held entities."""
        self._held.clear()
        self._names.clear()
        await self._client.close()

    async def _prepare(self) -> PostgresClient:
        if not self._ready:
            await self._client.ensure_tables(_COMPONENT, SCHEMA_VERSION, TABLES)
            self._ready = True
        return self._client

    async def _fetch(self, sql: str, *arguments: object) -> list[Any]:
        client = await self._prepare()
        async with client.connection() as connection:
            return list(await connection.fetch(sql, *arguments))

    # -- writes ---------------------------------------------------------------

    async def _upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store every entity in one transaction; a later one with the same key wins."""
        latest = list({(entity.tenant_id, entity.id): entity for entity in entities}.values())
        latest.sort(key=lambda entity: (str(entity.tenant_id), str(entity.id)))
        tenants = sorted({entity.tenant_id for entity in latest}, key=str)
        client = await self._prepare()
        async with client.transaction() as connection:
            for tenant_id in tenants:
                await connection.execute(self._sql.lock_tenant, tenant_id)
            for chunk in _chunks(latest):
                await self._write_entities(connection, chunk)
            for tenant_id in tenants:
                await connection.execute(self._sql.bump, tenant_id)

    async def _write_entities(self, connection: Connection, entities: Sequence[Entity]) -> None:
        tenants = [entity.tenant_id for entity in entities]
        ids = [entity.id for entity in entities]
        by_tenant: defaultdict[TenantId, list[EntityId]] = defaultdict(list)
        for entity in entities:
            by_tenant[entity.tenant_id].append(entity.id)
        for tenant_id, tenant_ids in by_tenant.items():
            await connection.execute(self._sql.delete_keys, tenant_id, tenant_ids)
            await connection.execute(self._sql.forget_deletions, tenant_id, tenant_ids)
        await connection.execute(
            self._sql.upsert_entities,
            tenants,
            ids,
            [normalize_name(entity.name) for entity in entities],
            [entity.entity_type for entity in entities],
            [entity.model_dump_json() for entity in entities],
        )
        keyed = [
            (entity.tenant_id, key, entity.id)
            for entity in entities
            for key in sorted(entity.blocking_keys or ())
        ]
        if keyed:
            key_tenants, keys, key_ids = zip(*keyed, strict=True)
            await connection.execute(self._sql.insert_keys, key_tenants, keys, key_ids)

    async def _upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store every relationship in one transaction, or none of them.

        Endpoints are checked inside the transaction and locked against a
        concurrent delete until it commits.

        Raises:
            MissingEntityError: some endpoint is not in its relationship's
                tenant; it names the first such endpoint in batch order.
        """
        latest = list({(each.tenant_id, each.id): each for each in relationships}.values())
        client = await self._prepare()
        async with client.transaction() as connection:
            await self._check_endpoints(connection, relationships)
            for chunk in _chunks(latest):
                await self._write_relationships(connection, chunk)

    async def _write_relationships(
        self, connection: Connection, relationships: Sequence[Relationship]
    ) -> None:
        """Upsert `relationships`, keyed `(tenant_id, id)`, in one statement."""
        await connection.execute(
            self._sql.upsert_relationships,
            [each.tenant_id for each in relationships],
            [each.id for each in relationships],
            [each.source_entity_id for each in relationships],
            [each.target_entity_id for each in relationships],
            [each.relationship_type for each in relationships],
            [each.model_dump_json() for each in relationships],
        )

    async def _check_endpoints(
        self, connection: Connection, relationships: Sequence[Relationship]
    ) -> None:
        wanted: defaultdict[TenantId, set[EntityId]] = defaultdict(set)
        for each in relationships:
            wanted[each.tenant_id].update((each.source_entity_id, each.target_entity_id))
        held: set[tuple[TenantId, EntityId]] = set()
        for tenant_id in sorted(wanted, key=str):
            for chunk in _chunks(sorted(wanted[tenant_id], key=str)):
                rows = await connection.fetch(self._sql.held_endpoints, tenant_id, list(chunk))
                held.update((tenant_id, EntityId(UUID(bytes=row[0].bytes))) for row in rows)
        for each in relationships:
            for end in (each.source_entity_id, each.target_entity_id):
                if (each.tenant_id, end) not in held:
                    raise MissingEntityError(entity_id=end, tenant_id=each.tenant_id)

    async def _delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity the id reads as, its keys, its relationships and merges into it.

        See `GraphWriter.delete_entity`. Only `tenant_id`'s entity is
        touched. The entity's row is locked first, so a relationship written
        to it concurrently either lands before and is removed with it, or
        finds it gone. `True` if the tenant held it.
        """
        client = await self._prepare()
        async with client.transaction() as connection:
            await connection.execute(self._sql.lock_tenant, tenant_id)
            # The entity the id reads as goes, and so does every merge into it.
            [(_, end)] = await connection.fetch(self._sql.resolve, tenant_id, [entity_id])
            entity_id = EntityId(UUID(bytes=end.bytes))
            await connection.execute(self._sql.forget_merges_into, tenant_id, entity_id)
            if await connection.fetchval(self._sql.lock_entity, tenant_id, entity_id) is None:
                return False
            for statement in self._sql.delete_entity:
                await connection.execute(statement, tenant_id, entity_id)
            await connection.execute(self._sql.record_deletions, tenant_id, [entity_id])
            await connection.execute(self._sql.bump, tenant_id)
        self._held.forget((tenant_id, entity_id))
        return True

    async def _merge_entities(self, canonical: Entity, merged_ids: list[EntityId]) -> None:
        """Absorb `merged_ids` into `canonical`, in one transaction.

        Stores `canonical`, points every relationship touching a merged entity
        at it (ids kept), removes the merged entities and their keys, and
        records where each merged id now resolves. A merged id already
        resolving to `canonical` is accepted, so the same merge twice changes
        nothing more.

        Raises:
            ValueError: `merged_ids` is empty, repeats an id or holds the
                canonical's; or the canonical id is itself merged away.
            MissingEntityError: a merged id is neither held nor merged into
                `canonical`. Nothing is written.
        """
        entity, merged = canonical, merged_ids
        tenant_id = entity.tenant_id
        client = await self._prepare()
        async with client.transaction() as connection:
            await connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext($1))", f"merge {tenant_id}"
            )
            await connection.execute(self._sql.lock_tenant, tenant_id)
            ends = {
                row[0]: row[1]
                for row in await connection.fetch(
                    self._sql.resolve, tenant_id, [entity.id, *merged]
                )
            }
            if ends[entity.id] != entity.id:
                raise ValueError(f"canonical {entity.id} is itself merged into another entity")
            held = {
                row[0]
                for row in await connection.fetch(self._sql.held_endpoints, tenant_id, merged)
            }
            for entity_id in merged:
                if entity_id not in held and ends[entity_id] != entity.id:
                    raise MissingEntityError(entity_id=entity_id, tenant_id=tenant_id)
            await self._write_entities(connection, [entity])
            absorbed = sorted((EntityId(UUID(bytes=each.bytes)) for each in held), key=str)
            if absorbed:
                await self._absorb(connection, entity, absorbed)
                await connection.execute(self._sql.record_deletions, tenant_id, absorbed)
            await connection.execute(self._sql.bump, tenant_id)
        for entity_id in merged:
            self._held.forget((tenant_id, entity_id))

    async def _absorb(
        self, connection: Connection, canonical: Entity, absorbed: list[EntityId]
    ) -> None:
        """Repoint the absorbed entities' relationships, drop them, record the merges."""
        tenant_id = canonical.tenant_id
        touching = [
            Relationship.model_validate_json(row[0])
            for row in await connection.fetch(self._sql.touching, tenant_id, absorbed)
        ]
        gone = set(absorbed)
        rewritten = [
            each.model_copy(
                update={
                    end: canonical.id
                    for end in ("source_entity_id", "target_entity_id")
                    if getattr(each, end) in gone
                }
            )
            for each in touching
        ]
        if rewritten:
            await self._write_relationships(connection, rewritten)
        for statement in self._sql.drop_absorbed:
            await connection.execute(statement, tenant_id, absorbed)
        await connection.execute(self._sql.record_merges, tenant_id, absorbed, canonical.id)

    async def _unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        """Forget that `merged_ids` resolve elsewhere; ids not merged are ignored.

        Restores nothing else: the caller writes back the entities and the
        relationships as they were.
        """
        client = await self._prepare()
        async with client.connection() as connection:
            await connection.execute(self._sql.unmerge, tenant_id, list(merged_ids))

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every entity, key and relationship of the tenant; return the entity count."""
        client = await self._prepare()
        async with client.transaction() as connection:
            await connection.execute(self._sql.lock_tenant, tenant_id)
            for statement in self._sql.delete_tenant:
                await connection.execute(statement, tenant_id)
            status = await connection.execute(self._sql.delete_tenant_entities, tenant_id)
            await connection.execute(self._sql.purge_generation, tenant_id)
        return int(status.rsplit(" ", 1)[-1])

    # -- reads ----------------------------------------------------------------

    async def count_by_tenant(self) -> dict[TenantId, tuple[int, int]]:
        """`(entities, relationships)` per tenant that holds any entity, from one snapshot."""
        client = await self._prepare()
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            entities = await connection.fetch(self._sql.count_entities)
            relationships = {
                row[0]: row[1] for row in await connection.fetch(self._sql.count_relationships)
            }
        return {
            TenantId(UUID(bytes=tenant.bytes)): (count, relationships.get(tenant, 0))
            for tenant, count in entities
        }

    async def _held_tenants(self) -> list[TenantId]:
        rows = await self._fetch(self._sql.held_tenants)
        return [TenantId(UUID(bytes=row[0].bytes)) for row in rows]

    async def _count(self, tenant_id: TenantId) -> int:
        return int((await self._fetch(self._sql.count_tenant, tenant_id))[0][0])

    async def _get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The held entities among `entity_ids`, each once, in unspecified order."""
        ids = list(dict.fromkeys(entity_ids))
        rows = await self._fetch(self._sql.resolved_entities, tenant_id, ids)
        return [entity_from_json(row[0]) for row in rows]

    async def _resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each requested id's canonical id, following merges of merges; itself if none.

        Every requested id is a key; one statement answers them all.
        """
        ids = list(dict.fromkeys(entity_ids))
        rows = await self._fetch(self._sql.resolve, tenant_id, ids)
        ends = {row[0]: EntityId(UUID(bytes=row[1].bytes)) for row in rows}
        return {EntityId(entity_id): ends[entity_id] for entity_id in ids}

    async def _merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> list[EntityId]:
        rows = await self._fetch(self._sql.merged_into, tenant_id, entity_id)
        return [EntityId(UUID(bytes=row[0].bytes)) for row in rows]

    async def _merged_ids_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[EntityId]]:
        """One query: the merges into every requested id, walked backwards together."""
        rows = await self._fetch(self._sql.merged_into_each, tenant_id, entity_ids)
        found: dict[EntityId, list[EntityId]] = {}
        for root, merged in rows:
            found.setdefault(EntityId(UUID(bytes=root.bytes)), []).append(
                EntityId(UUID(bytes=merged.bytes))
            )
        return found

    async def _find_entities(
        self, tenant_id: TenantId, name: str | None, entity_type: str | None, limit: int | None
    ) -> list[Entity]:
        """Entities matching the normalized `name` and/or exact `entity_type`, by `str(id)`."""
        filters = [value for value in (name, entity_type) if value is not None]
        if name is not None:
            filters[0] = normalize_name(name)
        statement = self._sql.find_entities[name is not None, entity_type is not None]
        rows = await self._fetch(statement, tenant_id, *filters, limit)
        return [entity_from_json(row[0]) for row in rows]

    async def _find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key, from one indexed query.

        Every requested key is present, `[]` when nothing carries it; an
        entity carrying several requested keys appears under each, as a
        separate object. Within a key, entities are ordered by `str(id)`.
        """
        result: dict[str, list[Entity]] = {key: [] for key in keys}
        rows = await self._fetch(self._sql.by_keys, tenant_id, list(result))
        found = self._held_at(tenant_id, rows)
        if len(found) < len({row[1] for row in rows}):
            rows, found = await self._fetch_missing(
                tenant_id, self._sql.by_keys, (tenant_id, list(result)), tuple
            )
        for key, entity_id, _ in rows:
            result[key].append(copy_entity(found[entity_id]))
        return result

    def _held_at(self, tenant_id: TenantId, rows: Sequence[Any]) -> dict[EntityId, Entity]:
        """The held entities of `rows` whose revision is the row's."""
        found: dict[EntityId, Entity] = {}
        for _, entity_id, revision in rows:
            held = self._held.get((tenant_id, entity_id), revision)
            if held is not None:
                found[entity_id] = held
        return found

    async def _fetch_missing(
        self,
        tenant_id: TenantId,
        sql: str,
        arguments: Sequence[object],
        shape: Callable[[Any], tuple[Any, ...]],
    ) -> tuple[list[Any], dict[EntityId, Entity]]:
        """`sql`'s rows again and every entity they name, read from one snapshot.

        `shape` turns a row into `(anything, entity_id, revision)`.
        """
        client = await self._prepare()
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            rows = list(await connection.fetch(sql, *arguments))
            found = self._held_at(tenant_id, [shape(row) for row in rows])
            missing = list({shape(row)[1] for row in rows} - found.keys())
            fetched = await connection.fetch(self._sql.revisions_by_id, tenant_id, missing)
        for entity_id, revision, body in fetched:
            found[entity_id] = entity_from_json(body)
            self._held.put((tenant_id, entity_id), revision, found[entity_id])
        return rows, found

    def _parsed(self, tenant_id: TenantId, entity_id: EntityId, revision: int, body: str) -> Entity:
        """The entity `body` holds, parsed unless it is held at `revision` already."""
        held = self._held.get((tenant_id, entity_id), revision)
        if held is not None:
            return held
        entity = entity_from_json(body)
        self._held.put((tenant_id, entity_id), revision, entity)
        return entity

    async def _find_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        """Counted in process on the tenant's name index, held and checked on each lookup.

        The count is exactly the in-memory store's. Only candidates not held
        parsed at their indexed revision are fetched.
        """
        shared = await self._find_shared_name_candidates(units, tenant_id, limit)
        return [copy_entity(entity) for entity in shared]

    async def _find_shared_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        """The held entities `find_name_candidates` would copy, lent to a caller that only reads.

        See `SharedNameCandidateReader.find_shared_name_candidates`: change
        none of them, and hand out only copies.
        """
        return (await self._find_shared_name_candidates_of({"": units}, tenant_id, limit))[""]

    async def _find_shared_name_candidates_of(
        self, units_of: dict[str, list[str]], tenant_id: TenantId, limit: int
    ) -> dict[str, list[Entity]]:
        """`_find_shared_name_candidates` of each query's units, in one statement (ADR 0123)."""
        held_index = self._names.peek(tenant_id)
        if held_index is not None:
            # Counted on the index as held; then one statement reads the
            # tenant's generation with the candidates not held, from one
            # snapshot taken after this call began. Only when the generation
            # has moved is the index brought up and the count done again.
            generation, index = held_index.generation, held_index.value
            ids_of = {query: index.find(units, limit) for query, units in units_of.items()}
            found, missing = self._held_candidates(tenant_id, index, _every(ids_of))
            if missing:
                rows = await self._fetch(self._sql.generation_and_rows, tenant_id, missing)
                current = rows[0][0] or 0
            else:  # the plain statement: the join costs the server more than nothing
                rows = await self._fetch(self._sql.generation, tenant_id)
                current = rows[0][0] if rows else 0
            if current == generation:
                if missing:
                    self._take(tenant_id, found, [row[1:] for row in rows if row[1] is not None])
                return _lent(ids_of, found)
            index = await self._names_of(tenant_id, current)
        else:
            index = await self._names_of(tenant_id)
        ids_of = {query: index.find(units, limit) for query, units in units_of.items()}
        found, missing = self._held_candidates(tenant_id, index, _every(ids_of))
        if missing:
            self._take(
                tenant_id, found, await self._fetch(self._sql.revisions_by_id, tenant_id, missing)
            )
        return _lent(ids_of, found)

    def _held_candidates(
        self, tenant_id: TenantId, index: NameIndex, ids: Sequence[EntityId]
    ) -> tuple[dict[EntityId, Entity], list[EntityId]]:
        """The candidates held parsed at their indexed revision, and the ids of the others."""
        found: dict[EntityId, Entity] = {}
        missing: list[EntityId] = []
        for entity_id in ids:
            held = self._held.get((tenant_id, entity_id), index.revision_of(entity_id))
            if held is not None:
                found[entity_id] = held
            else:
                missing.append(entity_id)
        return found, missing

    def _take(
        self, tenant_id: TenantId, found: dict[EntityId, Entity], rows: Sequence[Any]
    ) -> None:
        """Add each fetched `(id, revision, body)` row to `found`, parsed."""
        for row_id, revision, body in rows:
            entity_id = EntityId(UUID(bytes=row_id.bytes))
            found[entity_id] = self._parsed(tenant_id, entity_id, revision, body)

    async def _names_of(self, tenant_id: TenantId, generation: int | None = None) -> NameIndex:
        """The tenant's name index, brought up to `generation` or what the database has committed.

        A held index is checked by the lookup itself, which comes here only
        when there is none or it has fallen behind.
        """
        client = await self._prepare()
        return (await self._names.current(client, self._replica_sql, tenant_id, generation)).value

    def _apply_names(
        self, tenant_id: TenantId, index: NameIndex, rows: Sequence[Any], deleted: list[UUID]
    ) -> None:
        """Bring `index` up by the rows written and the ids deleted since it was current."""
        for entity_id in deleted:
            index.remove(EntityId(entity_id))
        for row_id, revision, body in rows:
            entity_id = EntityId(UUID(bytes=row_id.bytes))
            index.put(self._parsed(tenant_id, entity_id, revision, body), revision)

    async def _get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        """The relationship, or `None`."""
        rows = await self._fetch(self._sql.relationship, tenant_id, relationship_id)
        return Relationship.model_validate_json(rows[0][0]) if rows else None

    async def _get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, relationship_type: str | None
    ) -> list[Relationship]:
        """Relationships with the entity at either end, ordered by `str(id)`."""
        rows = await self._fetch(self._sql.relationships, tenant_id, entity_id, relationship_type)
        return [Relationship.model_validate_json(row[1]) for row in rows]

    async def _relationships_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        """One query for every requested id's relationships, each parsed per end it is listed at."""
        rows = await self._fetch(self._sql.touching_with_ids, tenant_id, entity_ids)
        wanted = set(entity_ids)
        found: dict[EntityId, list[Relationship]] = {}
        for _, body in rows:  # by `str(id)`, so each list is too
            first = Relationship.model_validate_json(body)
            ends = {first.source_entity_id, first.target_entity_id} & wanted
            for index, end in enumerate(sorted(ends, key=str)):
                copy = first if index == 0 else Relationship.model_validate_json(body)
                found.setdefault(end, []).append(copy)
        return found

    async def _neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, depth: int
    ) -> list[Entity]:
        """Entities within `depth` hops, either direction, excluding the start.

        Ordered by hop count, then `str(id)`; read from one snapshot.

        Raises:
            ValueError: `depth` is less than 1.
        """
        client = await self._prepare()
        seen = {entity_id}
        frontier = [entity_id]
        layers: list[list[EntityId]] = []
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            for _ in range(depth):
                layer: set[EntityId] = set()
                for ends in await connection.fetch(self._sql.step, tenant_id, frontier):
                    layer.update(other for other in ends if other not in seen)
                if not layer:
                    break
                seen |= layer
                frontier = sorted(layer, key=str)
                layers.append(frontier)
            rows = await connection.fetch(
                self._sql.entities_by_id, tenant_id, list(seen - {entity_id})
            )
        by_id = {entity.id: entity for entity in (entity_from_json(row[0]) for row in rows)}
        return [by_id[other] for layer_ids in layers for other in layer_ids if other in by_id]


def _every(ids_of: dict[str, list[EntityId]]) -> list[EntityId]:
    """Each id any query found, once, in the order first found."""
    return list(dict.fromkeys(entity_id for ids in ids_of.values() for entity_id in ids))


def _lent(
    ids_of: dict[str, list[EntityId]], found: dict[EntityId, Entity]
) -> dict[str, list[Entity]]:
    """Each query's found entities in its order.

    An id another writer deleted since the index was brought up is left out.
    """
    return {
        query: [found[entity_id] for entity_id in ids if entity_id in found]
        for query, ids in ids_of.items()
    }
