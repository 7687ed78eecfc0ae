"""The SQLite graph store: a persistent `GraphStore` in one database file.

Uses only the standard library's `sqlite3`. Every table is prefixed `graph_`,
so other stores may keep their own tables in the same file:

- `graph_meta`: the schema version (see `_sqlite_schema`, which migrates
  older files when first opened).
- `graph_entities`: one row per `(tenant_id, id)`, under a `row` the store
  chooses, the entity as the JSON `model_dump_json` gives, with
  `normalize_name(name)` and `entity_type` in indexed columns.
- `graph_key_postings` and `graph_name_postings`: for each `(tenant_id,
  key)` and each `(tenant_id, unit)` of `redstring.domain.names`, blobs of
  little-endian 64-bit signed rows: `row` where the term gained the
  entity, `-row` where it lost it; the term's entities are the rows whose
  signs sum to 1. A write appends one blob per term it changes; a term at
  `MAX_POSTING_SEGMENTS` blobs has them merged. Lookups read the blobs and
  count with numpy. ADR 0033 records why, and what it measured.
- `graph_relationships`: one row per `(tenant_id, id)`, the relationship as
  JSON, with both endpoints indexed.

Ids are stored as the text of the UUID, whose byte order is `str(id)` order.
There are no foreign keys: `delete_entity` removes an entity's keys and
relationships itself, and endpoints are checked explicitly so that
`MissingEntityError` can name the missing id.

Every read builds new models from rows, so copy-on-read needs no copying.
Entities are parsed without re-running `Entity`'s Python validators (see
`entity_from_json`), which keeps a blocking-key read within twice the cost
of the in-memory store's; relationships, read less often, are validated.
"""

from __future__ import annotations

import functools
import os  # noqa: TC003 - the public surface test resolves the signature at runtime
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

import numpy as np

from redstring.domain.exceptions import MissingEntityError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.validation import (
    check_path,
)
from redstring.graph.adapters._sqlite_merges import forget_merges, merge_into, resolve_chain
from redstring.graph.adapters._sqlite_postings import (
    MAX_POSTING_SEGMENTS,
    ROW,
    Changes,
    count_rows,
    net_rows,
    select_terms,
)
from redstring.graph.adapters._sqlite_rows import (
    UPSERT_RELATIONSHIP,
    put_entities,
    relationship_row,
    select_by_ids,
    select_rows,
)
from redstring.graph.adapters._sqlite_schema import SCHEMA_VERSION, check_to_read, prepare
from redstring.graph.stored import entity_from_json
from redstring.ports.graph_store import GraphStoreBase
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.sqlite import (
    SqliteWorker,
    chunks,
    held_tenants,
    parameter_limit,
    placeholders,
    tenant_rows,
)
from redstring.storage.adapters.sqlite import read_transaction as _read_transaction
from redstring.storage.adapters.sqlite import write_transaction as _write_transaction

__all__ = ["MAX_POSTING_SEGMENTS", "SCHEMA_VERSION", "SqliteGraphStore"]

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Collection, Mapping, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import RelationshipId


# -- work done on the store's thread -----------------------------------------


def _write_entities(connection: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    with _write_transaction(connection):
        put_entities(connection, entities)


def _write_relationships(
    connection: sqlite3.Connection, relationships: Sequence[Relationship]
) -> None:
    rows = [relationship_row(relationship) for relationship in relationships]
    with _write_transaction(connection):
        _check_endpoints(connection, relationships)
        connection.executemany(UPSERT_RELATIONSHIP, rows)


def _check_endpoints(connection: sqlite3.Connection, relationships: Sequence[Relationship]) -> None:
    """Raise `MissingEntityError` for the first endpoint, in batch order, its tenant lacks."""
    wanted: defaultdict[str, set[str]] = defaultdict(set)
    for relationship in relationships:
        wanted[str(relationship.tenant_id)].update(
            (str(relationship.source_entity_id), str(relationship.target_entity_id))
        )
    held = {
        tenant: {entity_id for (entity_id,) in select_by_ids(connection, "id", tenant, ids)}
        for tenant, ids in wanted.items()
    }
    for relationship in relationships:
        for endpoint in (relationship.source_entity_id, relationship.target_entity_id):
            if str(endpoint) not in held[str(relationship.tenant_id)]:
                raise MissingEntityError(entity_id=endpoint, tenant_id=relationship.tenant_id)


def _delete_tenant(connection: sqlite3.Connection, tenant_id: TenantId) -> int:
    tenant = (str(tenant_id),)
    with _write_transaction(connection):
        count = connection.execute(
            "DELETE FROM graph_entities WHERE tenant_id = ?", tenant
        ).rowcount
        connection.execute("DELETE FROM graph_key_postings WHERE tenant_id = ?", tenant)
        connection.execute("DELETE FROM graph_name_postings WHERE tenant_id = ?", tenant)
        connection.execute("DELETE FROM graph_merges WHERE tenant_id = ?", tenant)
        connection.execute("DELETE FROM graph_relationships WHERE tenant_id = ?", tenant)
    return count


#: Every id whose chain of merges ends at an entity (none when it is merged away itself).
_MERGED_INTO: Final = """
    WITH RECURSIVE merged (id) AS (
        SELECT ? WHERE NOT EXISTS (
            SELECT 1 FROM graph_merges WHERE tenant_id = ? AND merged_id = ?)
        UNION SELECT merge.merged_id FROM graph_merges AS merge JOIN merged
            ON merge.tenant_id = ? AND merge.canonical_id = merged.id
    )
    SELECT id FROM merged
"""

#: Forgets every merge into an entity, and merges into those, transitively.
_FORGET_MERGES_INTO: Final = """
    WITH RECURSIVE gone (id) AS (
        SELECT ?
        UNION SELECT merge.merged_id FROM graph_merges AS merge JOIN gone
            ON merge.tenant_id = ? AND merge.canonical_id = gone.id
    )
    DELETE FROM graph_merges WHERE tenant_id = ? AND merged_id IN (SELECT id FROM gone)
"""


def _delete_entity(
    connection: sqlite3.Connection, entity_id: EntityId, tenant_id: TenantId
) -> bool:
    tenant = str(tenant_id)
    with _write_transaction(connection):
        # The entity the id reads as goes, and so does every merge into it.
        entity = resolve_chain(connection, tenant, [str(entity_id)])[str(entity_id)]
        connection.execute(_FORGET_MERGES_INTO, (entity, tenant, tenant))
        found = connection.execute(
            "DELETE FROM graph_entities WHERE tenant_id = ? AND id = ? RETURNING row, body",
            (tenant, entity),
        ).fetchone()
        if found is None:
            return False
        changes = Changes()
        changes.remove(found[0], entity_from_json(found[1]))
        changes.apply(connection, tenant)
        connection.execute(
            "DELETE FROM graph_relationships WHERE tenant_id = ?"
            " AND (source_entity_id = ? OR target_entity_id = ?)",
            (tenant, entity, entity),
        )
    return True


def _read_entities(
    connection: sqlite3.Connection, tenant_id: TenantId, entity_ids: Collection[str]
) -> list[Entity]:
    """The held entities among `entity_ids` (merges followed, distinct), in no particular order."""
    canonical = set(resolve_chain(connection, str(tenant_id), list(entity_ids)).values())
    return [
        entity_from_json(body)
        for (body,) in select_by_ids(connection, "body", str(tenant_id), canonical)
    ]


def _read_entity_list(
    connection: sqlite3.Connection, sql: str, parameters: Sequence[object]
) -> list[Entity]:
    return [entity_from_json(body) for (body,) in connection.execute(sql, parameters)]


def _read_by_keys(
    connection: sqlite3.Connection, keys: Sequence[str], tenant_id: TenantId
) -> dict[str, list[Entity]]:
    tenant = str(tenant_id)
    blobs_of: defaultdict[str, list[np.ndarray[Any, np.dtype[np.int64]]]] = defaultdict(list)
    with _read_transaction(connection):
        for key, blob in select_terms(
            connection,
            "SELECT key, entity_rows FROM graph_key_postings WHERE tenant_id = ? AND key IN ({})",
            tenant,
            list(dict.fromkeys(keys)),
        ):
            blobs_of[key].append(np.frombuffer(blob, dtype=ROW))
        rows_of = {
            key: net_rows(np.concatenate(blobs), keep_removals=False).tolist()
            for key, blobs in blobs_of.items()
        }
        wanted = list({row for rows in rows_of.values() for row in rows})
        found = {
            row: (entity_id, body)
            for row, entity_id, body in select_rows(connection, "row, id, body", tenant, wanted)
        }
    result: dict[str, list[Entity]] = {key: [] for key in keys}
    for key, rows in rows_of.items():
        ordered = sorted((found[row] for row in rows if row in found), key=lambda held: held[0])
        result[key] = [entity_from_json(body) for _, body in ordered]
    return result


def _read_name_candidates_of(
    connection: sqlite3.Connection,
    units_of: Mapping[str, Sequence[str]],
    tenant_id: TenantId,
    limit: int,
) -> dict[str, list[Entity]]:
    """The best `limit` entities by distinct shared units, then `str(id)`, for each query.

    Read from one snapshot: the postings of every distinct unit in one
    statement and the candidates of every query in another. Each candidate
    is parsed once, however many queries find it (ADR 0123).
    """
    tenant = str(tenant_id)
    wanted = sorted({unit for units in units_of.values() for unit in units})
    with _read_transaction(connection):
        # A unit may have several posting blobs (ADR 0033): each is kept.
        postings: dict[str, list[np.ndarray[Any, np.dtype[np.int64]]]] = defaultdict(list)
        for chunk in chunks(wanted, parameter_limit(connection) - 1):
            for unit, blob in connection.execute(
                "SELECT unit, entity_rows FROM graph_name_postings "
                f"WHERE tenant_id = ? AND unit IN ({placeholders(len(chunk))})",
                (tenant, *chunk),
            ):
                postings[unit].append(np.frombuffer(blob, dtype=ROW))
        counts_of = {
            query: _shared_counts(
                [blob for unit in units for blob in postings.get(unit, ())], limit
            )
            for query, units in units_of.items()
        }
        rows = sorted({row for count_of in counts_of.values() for row in count_of})
        held = {
            row: (entity_id, body)
            for row, entity_id, body in select_rows(connection, "row, id, body", tenant, rows)
        }
    parsed: dict[int, Entity] = {}

    def entity(row: int) -> Entity:
        if row not in parsed:
            parsed[row] = entity_from_json(held[row][1])
        return parsed[row]

    return {
        query: [
            entity(row)
            for row in sorted(
                (row for row in count_of if row in held),
                key=lambda row: (-count_of[row], held[row][0]),
            )[:limit]
        ]
        for query, count_of in counts_of.items()
    }


def _shared_counts(blobs: list[np.ndarray[Any, np.dtype[np.int64]]], limit: int) -> dict[int, int]:
    """Each row that could be among the best `limit`, with the units it shares."""
    if not blobs:
        return {}
    found, shared = count_rows(np.concatenate(blobs))
    if found.size > limit:
        # Keep every row that could be among the best `limit`: all those
        # sharing at least the `limit`-th largest count.
        cut = np.partition(shared, found.size - limit)[found.size - limit]
        found, shared = found[shared >= cut], shared[shared >= cut]
    return dict(zip(found.tolist(), shared.tolist(), strict=True))


def _read_relationships(
    connection: sqlite3.Connection,
    entity_id: EntityId,
    tenant_id: TenantId,
    relationship_type: str | None,
) -> list[Relationship]:
    type_filter = "" if relationship_type is None else " AND relationship_type = ?"
    type_parameter = () if relationship_type is None else (relationship_type,)
    end = (str(tenant_id), str(entity_id), *type_parameter)
    # UNION, not UNION ALL: a self-loop matches both halves and is returned once.
    # Ordered outside the union, so that each half can use its endpoint's index.
    cursor = connection.execute(
        "SELECT id, body FROM ("
        "SELECT id, body FROM graph_relationships "
        f"WHERE tenant_id = ? AND source_entity_id = ?{type_filter} "
        "UNION SELECT id, body FROM graph_relationships "
        f"WHERE tenant_id = ? AND target_entity_id = ?{type_filter}"
        ") ORDER BY id",
        (*end, *end),
    )
    return [Relationship.model_validate_json(body) for _, body in cursor]


def _walk(
    connection: sqlite3.Connection, entity_id: EntityId, tenant_id: TenantId, depth: int
) -> list[Entity]:
    tenant = str(tenant_id)
    seen = {str(entity_id)}
    frontier = [str(entity_id)]
    layers: list[list[str]] = []
    with _read_transaction(connection):
        for _ in range(depth):
            layer: set[str] = set()
            # Each chunk binds the tenant and the chunk twice, once per end.
            for chunk in chunks(frontier, (parameter_limit(connection) - 2) // 2):
                marks = placeholders(len(chunk))
                cursor = connection.execute(
                    "SELECT source_entity_id, target_entity_id FROM graph_relationships "
                    f"WHERE tenant_id = ? AND source_entity_id IN ({marks}) "
                    "UNION ALL SELECT source_entity_id, target_entity_id FROM graph_relationships "
                    f"WHERE tenant_id = ? AND target_entity_id IN ({marks})",
                    (tenant, *chunk, tenant, *chunk),
                )
                for ends in cursor:
                    layer.update(other for other in ends if other not in seen)
            if not layer:
                break
            seen |= layer
            frontier = sorted(layer)
            layers.append(frontier)
        by_id = {
            str(entity.id): entity
            for entity in _read_entities(connection, tenant_id, seen - {str(entity_id)})
        }
    return [by_id[other] for layer_ids in layers for other in layer_ids if other in by_id]


class SqliteGraphStore(AsyncClosable, GraphStoreBase):
    """A `GraphStore` persisted in one SQLite database file.

    The constructor does no I/O. The file, and the graph tables in it, are
    created on first use, with WAL journaling and `synchronous=NORMAL`: a
    committed write survives the process being killed (not necessarily a
    power loss). Other processes may open the same file; each sees what the
    others have committed, and writers wait for one another.

    All database work runs on the store's `SqliteWorker` (one thread, one
    connection; see `redstring.storage.adapters.sqlite`), so no call blocks
    the event loop, and the calls of one store run one at a time in the
    order they were made. Each call is one transaction, so a batch is
    written whole or not at all, even if the process is killed mid-batch; a
    call whose awaiting task is cancelled either never starts or runs its
    transaction to the end. Reads build new models from rows, so a caller
    can never reach what the store holds.

    With `read_only=True` the file is opened read-only and never created or
    changed: a file that holds no redstring graph, or an older schema
    version (which the first writable open migrates in place), is refused
    on first use with `StoreError`, and so is every write.

    Use it as an async context manager, or call `close()` when done: that
    closes the connection and ends the thread.

    Raises (from any method):
        ValueError: an argument is out of range.
        StoreError: the database failed, or the file holds a graph schema
            version this code does not read; the message names the path.
            The `sqlite3` error, if any, is the `__cause__`.
        ClosedError: the store has been closed.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self._path = check_path(path)
        self._worker = SqliteWorker(
            self._path,
            store=f"sqlite graph store {self._path}",
            resource=self._resource_name(),
            setup=(
                (lambda connection: check_to_read(connection, self._path))
                if read_only
                else (lambda connection: prepare(connection, self._path))
            ),
            read_only=read_only,
        )

    def _describe(self) -> str:
        return repr(self._path)

    async def _release(self) -> None:
        """Close the connection and end the store's thread."""
        await self._worker.close()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the store's thread with its connection, opening it if need be."""
        return await self._worker.run(work)

    # -- writes ---------------------------------------------------------------

    async def _upsert_entities(self, entities: Sequence[Entity]) -> None:
        batch = list(entities)
        await self._run(lambda connection: _write_entities(connection, batch))

    async def _upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        # Endpoints are checked inside the transaction, so no concurrent writer
        # can remove one between the check and the write.
        batch = list(relationships)
        await self._run(lambda connection: _write_relationships(connection, batch))

    async def _merge_entities(self, canonical: Entity, merged: list[EntityId]) -> None:
        await self._run(lambda connection: merge_into(connection, canonical, merged))

    async def _unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        ids = [str(entity_id) for entity_id in merged_ids]
        await self._run(lambda connection: forget_merges(connection, tenant_id, ids))

    async def _resolve(
        self, requested: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        texts = [str(entity_id) for entity_id in requested]
        found = await self._run(lambda connection: resolve_chain(connection, str(tenant_id), texts))
        return {
            EntityId(entity_id): EntityId(UUID(found[str(entity_id)])) for entity_id in requested
        }

    async def _merged_ids(self, entity_id: EntityId, tenant_id: TenantId) -> list[EntityId]:
        tenant, start = str(tenant_id), str(entity_id)
        rows = await self._run(
            lambda connection: connection.execute(
                _MERGED_INTO, (start, tenant, start, tenant)
            ).fetchall()
        )
        return [EntityId(UUID(row[0])) for row in rows]

    async def _merged_ids_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[EntityId]]:
        """One trip to the worker, one snapshot: `_MERGED_INTO` per id."""
        tenant = str(tenant_id)

        def read(connection: sqlite3.Connection) -> dict[EntityId, list[EntityId]]:
            found: dict[EntityId, list[EntityId]] = {}
            with _read_transaction(connection):
                for entity_id in entity_ids:
                    start = str(entity_id)
                    rows = connection.execute(_MERGED_INTO, (start, tenant, start, tenant))
                    found[entity_id] = [EntityId(UUID(row[0])) for row in rows]
            return found

        return await self._run(read)

    async def _delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        return await self._run(lambda connection: _delete_entity(connection, entity_id, tenant_id))

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        return await self._run(lambda connection: _delete_tenant(connection, tenant_id))

    # -- reads ----------------------------------------------------------------

    async def count_by_tenant(self) -> dict[TenantId, tuple[int, int]]:
        """`(entities, relationships)` per tenant that holds any entity, one query each."""

        def read(connection: sqlite3.Connection) -> dict[TenantId, tuple[int, int]]:
            with _read_transaction(connection):
                entities = connection.execute(
                    "SELECT tenant_id, count(*) FROM graph_entities GROUP BY tenant_id"
                ).fetchall()
                relationships = dict(
                    connection.execute(
                        "SELECT tenant_id, count(*) FROM graph_relationships GROUP BY tenant_id"
                    ).fetchall()
                )
            return {
                TenantId(UUID(tenant)): (count, relationships.get(tenant, 0))
                for tenant, count in entities
            }

        return await self._run(read)

    async def _held_tenants(self) -> list[TenantId]:
        return await self._run(lambda connection: held_tenants(connection, "graph_entities"))

    async def _count(self, tenant_id: TenantId) -> int:
        counted = functools.partial(tenant_rows, table="graph_entities", tenant=str(tenant_id))
        return await self._run(counted)

    async def _get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        ids = list(dict.fromkeys(str(entity_id) for entity_id in entity_ids))
        return await self._run(lambda connection: _read_entities(connection, tenant_id, ids))

    async def _find_entities(
        self, tenant_id: TenantId, name: str | None, entity_type: str | None, limit: int | None
    ) -> list[Entity]:
        conditions = ["tenant_id = ?"]
        parameters: list[object] = [str(tenant_id)]
        if name is not None:
            conditions.append("normalized_name = ?")
            parameters.append(normalize_name(name))
        if entity_type is not None:
            # With a name, `+` keeps SQLite on the name index: a type can hold
            # the whole tenant, a normalized name only a few entities.
            conditions.append("entity_type = ?" if name is None else "+entity_type = ?")
            parameters.append(entity_type)
        parameters.append(-1 if limit is None else limit)
        sql = (
            f"SELECT body FROM graph_entities WHERE {' AND '.join(conditions)} ORDER BY id LIMIT ?"
        )
        return await self._run(lambda connection: _read_entity_list(connection, sql, parameters))

    async def _find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        # One indexed query, split only past SQLite's limit on bound
        # parameters (32,766 by default); the parts then read one snapshot.
        requested = list(keys)
        return await self._run(lambda connection: _read_by_keys(connection, requested, tenant_id))

    async def _find_name_candidates(
        self, units: list[str], tenant_id: TenantId, limit: int
    ) -> list[Entity]:
        return (await self._find_name_candidates_of({"": units}, tenant_id, limit))[""]

    async def _find_name_candidates_of(
        self, units_of: dict[str, list[str]], tenant_id: TenantId, limit: int
    ) -> dict[str, list[Entity]]:
        # One worker trip and one snapshot for every query (ADR 0123).
        return await self._run(
            lambda connection: _read_name_candidates_of(connection, units_of, tenant_id, limit)
        )

    async def _get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:

        def read(connection: sqlite3.Connection) -> Relationship | None:
            row = connection.execute(
                "SELECT body FROM graph_relationships WHERE tenant_id = ? AND id = ?",
                (str(tenant_id), str(relationship_id)),
            ).fetchone()
            return None if row is None else Relationship.model_validate_json(row[0])

        return await self._run(read)

    async def _get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, relationship_type: str | None
    ) -> list[Relationship]:
        return await self._run(
            lambda connection: _read_relationships(
                connection, entity_id, tenant_id, relationship_type
            )
        )

    async def _relationships_of(
        self, entity_ids: list[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        """One trip to the worker, one snapshot: each id's relationships by its endpoint indexes."""

        def read(connection: sqlite3.Connection) -> dict[EntityId, list[Relationship]]:
            with _read_transaction(connection):
                return {
                    entity_id: _read_relationships(connection, entity_id, tenant_id, None)
                    for entity_id in entity_ids
                }

        return await self._run(read)

    async def _neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, depth: int
    ) -> list[Entity]:
        # Read from one snapshot.
        return await self._run(lambda connection: _walk(connection, entity_id, tenant_id, depth))
