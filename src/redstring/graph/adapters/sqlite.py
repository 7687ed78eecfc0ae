"""The SQLite graph store: a persistent `GraphStore` in one database file.

Uses only the standard library's `sqlite3`. Every table is prefixed `graph_`,
so other stores may keep their own tables in the same file:

- `graph_meta`: the schema version, as the row `('schema_version', '3')`.
  A version 1 file (no name index) or version 2 file (one row per name
  unit) is migrated when first opened: both posting tables are created and
  filled from the stored entities, and the old one-row-per-term tables
  (`graph_entity_keys`, version 2's `graph_name_units`) are dropped.
  `PRAGMA user_version` is left alone, since it belongs to the whole file.
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

import os  # noqa: TC003 - the public surface test resolves the signature at runtime
import sqlite3
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from uuid import UUID

import numpy as np

from redstring.domain.exceptions import MissingEntityError, StoreError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.merging import check_merge, repoint
from redstring.domain.names import (
    MIN_SHARED_UNITS,
    NAME_CANDIDATE_LIMIT,
    entity_name_units,
    query_name_units,
)
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.validation import (
    check_depth,
    check_entities,
    check_entity_id,
    check_entity_ids,
    check_limit,
    check_names,
    check_optional_limit,
    check_optional_name,
    check_path,
    check_relationship_id,
    check_relationships,
    check_tenant_id,
)
from redstring.graph.stored import entity_from_json
from redstring.ports.graph_store import GraphStore
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.sqlite import SqliteWorker, uuid_texts
from redstring.storage.adapters.sqlite import read_transaction as _read_transaction
from redstring.storage.adapters.sqlite import write_transaction as _write_transaction

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import RelationshipId

#: The schema this module reads and writes, recorded in `graph_meta`.
SCHEMA_VERSION: Final = 3
#: How many blobs may hold one term's postings before a write merges them.
MAX_POSTING_SEGMENTS: Final = 8
#: A term's largest blob is rewritten once the others hold an eighth of its size.
_MERGE_FRACTION: Final = 8
#: How an entity row is packed in a posting blob.
_ROW: Final = np.dtype("<i8")
#: Postings are counted in an array spanning their rows while that span is
#: at most this many slots per posting, plus `_BINCOUNT_SPAN`; else sorted.
_BINCOUNT_SPAN_PER_ROW: Final = 8
_BINCOUNT_SPAN: Final = 1 << 16


class _Index(NamedTuple):
    """A posting table: per `(tenant_id, term)`, blobs of entity rows."""

    table: str
    term: str


_UNITS: Final = _Index("graph_name_postings", "unit")
_KEYS: Final = _Index("graph_key_postings", "key")

_POSTINGS_SCHEMA: Final = tuple(
    statement
    for index in (_KEYS, _UNITS)
    for statement in (
        f"""CREATE TABLE IF NOT EXISTS {index.table} (
            tenant_id TEXT NOT NULL,
            {index.term} TEXT NOT NULL,
            entity_rows BLOB NOT NULL
        )""",
        f"""CREATE INDEX IF NOT EXISTS {index.table}_by_{index.term}
            ON {index.table} (tenant_id, {index.term})""",
    )
)

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS graph_entities (
        row INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        normalized_name TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (tenant_id, id)
    )""",
    """CREATE INDEX IF NOT EXISTS graph_entities_by_name
        ON graph_entities (tenant_id, normalized_name, id)""",
    """CREATE INDEX IF NOT EXISTS graph_entities_by_type
        ON graph_entities (tenant_id, entity_type, id)""",
    *_POSTINGS_SCHEMA,
    """CREATE TABLE IF NOT EXISTS graph_relationships (
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        source_entity_id TEXT NOT NULL,
        target_entity_id TEXT NOT NULL,
        relationship_type TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (tenant_id, id)
    )""",
    """CREATE INDEX IF NOT EXISTS graph_relationships_by_source
        ON graph_relationships (tenant_id, source_entity_id)""",
    """CREATE INDEX IF NOT EXISTS graph_relationships_by_target
        ON graph_relationships (tenant_id, target_entity_id)""",
)

#: Which merged id resolves to which canonical one. Created on every connect,
#: so files written before merges existed gain it without a new schema version.
_MERGES: Final = """CREATE TABLE IF NOT EXISTS graph_merges (
    tenant_id TEXT NOT NULL,
    merged_id TEXT NOT NULL,
    canonical_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, merged_id)
) WITHOUT ROWID"""

_INSERT_ENTITY: Final = """
    INSERT INTO graph_entities (row, tenant_id, id, normalized_name, entity_type, body)
    VALUES (?, ?, ?, ?, ?, ?)
"""
_UPDATE_ENTITY: Final = """
    UPDATE graph_entities SET normalized_name = ?, entity_type = ?, body = ? WHERE row = ?
"""
_UPSERT_RELATIONSHIP: Final = """
    INSERT INTO graph_relationships
        (tenant_id, id, source_entity_id, target_entity_id, relationship_type, body)
    VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, id) DO UPDATE SET
        source_entity_id = excluded.source_entity_id,
        target_entity_id = excluded.target_entity_id,
        relationship_type = excluded.relationship_type,
        body = excluded.body
"""


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def _chunks[T](items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _parameter_limit(connection: sqlite3.Connection) -> int:
    """How many `?` parameters one statement may bind on this connection."""
    return connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


def _prepare(connection: sqlite3.Connection, path: str) -> None:
    """The schema check, then the merges table, which files from before merges lack."""
    _ensure_schema(connection, path)
    connection.execute(_MERGES)


def _ensure_schema(connection: sqlite3.Connection, path: str) -> None:
    """Create the tables on first use; refuse a schema version this code does not know."""
    if _schema_version(connection) == SCHEMA_VERSION:
        return
    with _write_transaction(connection):
        connection.execute(
            "CREATE TABLE IF NOT EXISTS graph_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        version = _schema_version(connection)
        if version is None:
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO graph_meta (name, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif version in (1, 2):
            _migrate_to_postings(connection)
        elif version != SCHEMA_VERSION:
            newer = " (written by a newer redstring)" if version > SCHEMA_VERSION else ""
            raise StoreError(
                store=f"sqlite graph store {path}",
                reason=f"the file holds graph schema version {version}{newer}; "
                f"this redstring reads only version {SCHEMA_VERSION}",
            )


def _check_schema_to_read(connection: sqlite3.Connection, path: str) -> None:
    """Refuse, without writing, a file that holds no graph or another schema version."""
    version = _schema_version(connection)
    if version is None:
        raise StoreError(
            store=f"sqlite graph store {path}", reason="the file holds no redstring graph"
        )
    if version < SCHEMA_VERSION:
        raise StoreError(
            store=f"sqlite graph store {path}",
            reason=f"the file holds graph schema version {version}, older than this "
            f"redstring's version {SCHEMA_VERSION}; open it once without read_only "
            "to migrate it in place",
        )
    if version != SCHEMA_VERSION:
        raise StoreError(
            store=f"sqlite graph store {path}",
            reason=f"the file holds graph schema version {version}; "
            f"this redstring reads only version {SCHEMA_VERSION}",
        )


def _migrate_to_postings(connection: sqlite3.Connection) -> None:
    """Index a version 1 or 2 file's entities in the posting tables.

    Both versions keep blocking keys one row per key (`graph_entity_keys`);
    version 2 keeps name units one row per unit too (`graph_name_units`).
    Both tables are dropped.
    """
    # Posting tables a failed or foreign rebuild left are rebuilt too.
    for table in ("graph_name_units", "graph_entity_keys", _KEYS.table, _UNITS.table):
        connection.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _POSTINGS_SCHEMA:
        connection.execute(statement)
    cursor = connection.execute("SELECT tenant_id, row, body FROM graph_entities")
    while batch := cursor.fetchmany(50_000):
        changes: defaultdict[str, _Changes] = defaultdict(_Changes)
        for tenant, row, body in batch:
            changes[tenant].add(row, entity_from_json(body))
        for tenant, change in changes.items():
            change.apply(connection, tenant)
    connection.execute(
        "UPDATE graph_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),)
    )


def _schema_version(connection: sqlite3.Connection) -> int | None:
    """The recorded version, or `None` when the graph tables were never created."""
    if not connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'graph_meta'"
    ).fetchone():
        return None
    row = connection.execute(
        "SELECT value FROM graph_meta WHERE name = 'schema_version'"
    ).fetchone()
    return None if row is None else int(row[0])


# -- work done on the store's thread -----------------------------------------


def _write_entities(connection: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    with _write_transaction(connection):
        _put_entities(connection, entities)


def _put_entities(connection: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    # Keyed by the tenant's integer: a UUID hashes and prints in Python.
    by_tenant: defaultdict[int, dict[str, Entity]] = defaultdict(dict)
    for entity, entity_id in zip(
        entities, uuid_texts([entity.id for entity in entities]), strict=True
    ):
        by_tenant[entity.tenant_id.int][entity_id] = entity
    # Rows are chosen here, not by SQLite, so that the index rows can be
    # built without reading them back; the write lock is held.
    (last_row,) = connection.execute("SELECT max(row) FROM graph_entities").fetchone()
    next_row = 1 if last_row is None else last_row + 1
    for tenant in sorted(by_tenant):
        next_row = _put_tenant_entities(
            connection, str(UUID(int=tenant)), by_tenant[tenant], next_row
        )


def _put_tenant_entities(
    connection: sqlite3.Connection, tenant: str, latest: dict[str, Entity], next_row: int
) -> int:
    """Write one tenant's entities (the last of each id); return the next free row."""
    # Sorted, each statement walks its index in order instead of at random.
    ids = sorted(latest)
    held: dict[str, int] = {}
    changes = _Changes()
    for entity_id, row, body in _select_by_ids(connection, "id, row, body", tenant, ids):
        held[entity_id] = row
        changes.remove(row, entity_from_json(body))
    inserted: list[tuple[int, str, str, str, str, str]] = []
    updated: list[tuple[str, str, str, int]] = []
    for entity_id in ids:
        entity = latest[entity_id]
        name, entity_type, body = normalize_name(entity.name), entity.entity_type, _body(entity)
        row = held.get(entity_id)
        if row is None:
            row, next_row = next_row, next_row + 1
            inserted.append((row, tenant, entity_id, name, entity_type, body))
        else:
            updated.append((name, entity_type, body, row))
        changes.add(row, entity)
    connection.executemany(_UPDATE_ENTITY, updated)
    connection.executemany(_INSERT_ENTITY, inserted)
    changes.apply(connection, tenant)
    return next_row


def _body(entity: Entity) -> str:
    """`entity.model_dump_json()`, without the keyword handling a bulk write pays per entity."""
    return type(entity).__pydantic_serializer__.to_json(entity).decode()


class _Changes:
    """Rows to take out of, then put into, one tenant's posting tables."""

    __slots__ = ("added", "removed")

    def __init__(self) -> None:
        self.removed: dict[_Index, defaultdict[str, list[int]]] = {
            index: defaultdict(list) for index in (_KEYS, _UNITS)
        }
        self.added: dict[_Index, defaultdict[str, list[int]]] = {
            index: defaultdict(list) for index in (_KEYS, _UNITS)
        }

    def remove(self, row: int, entity: Entity) -> None:
        """Take `row` out of the postings of every key and unit `entity` has."""
        self._note(self.removed, row, entity)

    def add(self, row: int, entity: Entity) -> None:
        """Put `row` into the postings of every key and unit `entity` has."""
        self._note(self.added, row, entity)

    @staticmethod
    def _note(into: dict[_Index, defaultdict[str, list[int]]], row: int, entity: Entity) -> None:
        if entity.blocking_keys:
            keys = into[_KEYS]
            for key in entity.blocking_keys:
                keys[key].append(row)
        units = into[_UNITS]
        for unit in entity_name_units(entity):
            units[unit].append(row)

    def apply(self, connection: sqlite3.Connection, tenant: str) -> None:
        """Write the changes; removals first, so a row both removed and added stays."""
        for index in (_KEYS, _UNITS):
            _update_postings(connection, index, tenant, self.removed[index], self.added[index])


def _update_postings(
    connection: sqlite3.Connection,
    index: _Index,
    tenant: str,
    removed: Mapping[str, Sequence[int]],
    added: Mapping[str, Sequence[int]],
) -> None:
    """Take `removed` rows out of the tenant's postings in `index`, then add `added` ones.

    A blob holds signed rows: `row` where the term gained it, `-row` where
    it lost it, so a change appends one blob per term and a term's rows are
    those whose signs sum to 1. A row both removed and added is left alone.
    A term reaching `MAX_POSTING_SEGMENTS` blobs has them merged, see
    `_blobs_to_merge`.
    """
    table, term = index
    entries: dict[str, np.ndarray[Any, np.dtype[np.int64]]] = {}
    for each in sorted(removed.keys() | added.keys()):
        if each not in removed:
            entries[each] = np.asarray(added[each], dtype=_ROW)
            continue
        gone, came = set(removed[each]), set(added.get(each, ()))
        if gone != came:
            entries[each] = np.asarray(
                [*sorted(came - gone), *(-row for row in sorted(gone - came))], dtype=_ROW
            )
    # length() reads a blob's size from its row header, not the blob.
    sizes: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
    for each, rowid, size in _select_terms(
        connection,
        f"SELECT {term}, rowid, length(entity_rows) FROM {table} "
        f"WHERE tenant_id = ? AND {term} IN ({{}})",
        tenant,
        list(entries),
    ):
        sizes[each].append((rowid, size // _ROW.itemsize))
    merging = {
        each: _blobs_to_merge(sizes[each], entries[each].size)
        for each in entries
        if len(sizes.get(each, ())) >= MAX_POSTING_SEGMENTS - 1
    }
    read = dict(
        _select_blobs(
            connection, table, [rowid for rowids, _ in merging.values() for rowid in rowids]
        )
    )
    dropped: list[tuple[int]] = []
    blobs: list[tuple[str, str, bytes]] = []
    for each, new in entries.items():
        if each in merging:
            rowids, whole = merging[each]
            dropped.extend((rowid,) for rowid in rowids)
            new = _net(
                np.concatenate(
                    [*(np.frombuffer(read[rowid], dtype=_ROW) for rowid in rowids), new]
                ),
                keep_removals=not whole,
            )
        if new.size:
            blobs.append((tenant, each, new.tobytes()))
    connection.executemany(f"DELETE FROM {table} WHERE rowid = ?", dropped)
    connection.executemany(
        f"INSERT INTO {table} (tenant_id, {term}, entity_rows) VALUES (?, ?, ?)", blobs
    )


def _blobs_to_merge(sizes: Sequence[tuple[int, int]], new: int) -> tuple[list[int], bool]:
    """Which of a term's blobs (rowid, entries) to merge with `new` entries, and if all.

    The largest blob is left alone while the others, with `new`, hold less
    than an eighth of its entries: they are merged into one signed blob, so
    a term written one row at a time rewrites its small blobs, not its large
    one. Otherwise every blob is merged into plain rows.
    """
    base, base_size = max(sizes, key=lambda size: size[1])
    rest = [(rowid, size) for rowid, size in sizes if rowid != base]
    if _MERGE_FRACTION * (sum(size for _, size in rest) + new) < base_size:
        return [rowid for rowid, _ in rest], False
    return [rowid for rowid, _ in sizes], True


def _select_blobs(
    connection: sqlite3.Connection, table: str, rowids: Sequence[int]
) -> Iterator[tuple[int, bytes]]:
    for chunk in _chunks(rowids, _parameter_limit(connection)):
        yield from connection.execute(
            f"SELECT rowid, entity_rows FROM {table} WHERE rowid IN ({_placeholders(len(chunk))})",
            chunk,
        )


def _net(
    entries: np.ndarray[Any, np.dtype[np.int64]], *, keep_removals: bool
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The signed rows that `entries` come to: each row once, with its sign's sum."""
    rows, where = np.unique(np.abs(entries), return_inverse=True)
    net = np.bincount(where, weights=np.sign(entries), minlength=rows.size)
    if keep_removals:
        return np.concatenate([rows[net > 0], -rows[net < 0]])
    return rows[net > 0]


def _select_terms(
    connection: sqlite3.Connection, sql: str, tenant: str, terms: Sequence[str]
) -> Iterator[Any]:
    """The rows of `sql`, whose `{}` takes the placeholders of a chunk of `terms`."""
    for chunk in _chunks(terms, _parameter_limit(connection) - 1):
        yield from connection.execute(sql.format(_placeholders(len(chunk))), (tenant, *chunk))


def _resolve(
    connection: sqlite3.Connection, tenant: str, entity_ids: Sequence[str]
) -> dict[str, str]:
    """Each id's canonical id, following merges of merges; itself when never merged."""
    result = {entity_id: entity_id for entity_id in entity_ids}
    pending = set(result.values())
    seen = set(pending)
    redirect: dict[str, str] = {}
    while pending:
        found = dict(_select_merges(connection, tenant, pending))
        redirect.update(found)
        pending = {target for target in found.values() if target not in seen}
        seen |= pending
    for entity_id in result:
        current, hops = entity_id, {entity_id}
        while (target := redirect.get(current)) is not None and target not in hops:
            hops.add(target)
            current = target
        result[entity_id] = current
    return result


def _select_merges(
    connection: sqlite3.Connection, tenant: str, entity_ids: Collection[str]
) -> Iterator[tuple[str, str]]:
    for chunk in _chunks(list(entity_ids), _parameter_limit(connection) - 1):
        yield from connection.execute(
            "SELECT merged_id, canonical_id FROM graph_merges "
            f"WHERE tenant_id = ? AND merged_id IN ({_placeholders(len(chunk))})",
            (tenant, *chunk),
        )


def _merge(connection: sqlite3.Connection, canonical: Entity, merged: Sequence[EntityId]) -> None:
    tenant, canonical_id = str(canonical.tenant_id), str(canonical.id)
    with _write_transaction(connection):
        if _resolve(connection, tenant, [canonical_id])[canonical_id] != canonical_id:
            raise ValueError(f"canonical {canonical_id} is itself merged into another entity")
        merged_ids = [str(entity_id) for entity_id in merged]
        held = {entity_id for (entity_id,) in _select_by_ids(connection, "id", tenant, merged_ids)}
        resolved = _resolve(connection, tenant, merged_ids)
        for entity_id in merged:
            if str(entity_id) not in held and resolved[str(entity_id)] != canonical_id:
                raise MissingEntityError(entity_id=entity_id, tenant_id=canonical.tenant_id)
        _put_entities(connection, [canonical])
        absorbed = sorted(held)
        touching: dict[str, Relationship] = {}
        for chunk in _chunks(absorbed, (_parameter_limit(connection) - 2) // 2):
            marks = _placeholders(len(chunk))
            for relationship_id, body in connection.execute(
                "SELECT id, body FROM graph_relationships WHERE tenant_id = ? AND "
                f"(source_entity_id IN ({marks}) OR target_entity_id IN ({marks}))",
                (tenant, *chunk, *chunk),
            ):
                touching[relationship_id] = Relationship.model_validate_json(body)
        rewritten = []
        for relationship in touching.values():
            for entity_id in absorbed:
                relationship = repoint(relationship, EntityId(UUID(entity_id)), canonical.id)
            rewritten.append(relationship)
        connection.executemany(_UPSERT_RELATIONSHIP, [_relationship_row(r) for r in rewritten])
        changes = _Changes()
        for chunk in _chunks(absorbed, _parameter_limit(connection) - 1):
            for row, body in connection.execute(
                "DELETE FROM graph_entities "
                f"WHERE tenant_id = ? AND id IN ({_placeholders(len(chunk))}) RETURNING row, body",
                (tenant, *chunk),
            ).fetchall():
                changes.remove(row, entity_from_json(body))
        changes.apply(connection, tenant)
        connection.executemany(
            "INSERT INTO graph_merges (tenant_id, merged_id, canonical_id) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, merged_id) DO UPDATE SET canonical_id = excluded.canonical_id",
            [(tenant, entity_id, canonical_id) for entity_id in absorbed],
        )


def _unmerge(connection: sqlite3.Connection, tenant_id: TenantId, merged: Sequence[str]) -> None:
    with _write_transaction(connection):
        connection.executemany(
            "DELETE FROM graph_merges WHERE tenant_id = ? AND merged_id = ?",
            [(str(tenant_id), entity_id) for entity_id in merged],
        )


def _relationship_row(relationship: Relationship) -> tuple[str, str, str, str, str, str]:
    return (
        str(relationship.tenant_id),
        str(relationship.id),
        str(relationship.source_entity_id),
        str(relationship.target_entity_id),
        relationship.relationship_type,
        relationship.model_dump_json(),
    )


def _select_by_ids(
    connection: sqlite3.Connection, columns: str, tenant: str, entity_ids: Collection[str]
) -> Iterator[Any]:
    """`columns` of each entity the tenant holds among `entity_ids`, in no particular order."""
    for chunk in _chunks(list(entity_ids), _parameter_limit(connection) - 1):
        yield from connection.execute(
            f"SELECT {columns} FROM graph_entities "
            f"WHERE tenant_id = ? AND id IN ({_placeholders(len(chunk))})",
            (tenant, *chunk),
        )


def _write_relationships(
    connection: sqlite3.Connection, relationships: Sequence[Relationship]
) -> None:
    rows = [_relationship_row(relationship) for relationship in relationships]
    with _write_transaction(connection):
        _check_endpoints(connection, relationships)
        connection.executemany(_UPSERT_RELATIONSHIP, rows)


def _check_endpoints(connection: sqlite3.Connection, relationships: Sequence[Relationship]) -> None:
    """Raise `MissingEntityError` for the first endpoint, in batch order, its tenant lacks."""
    wanted: defaultdict[str, set[str]] = defaultdict(set)
    for relationship in relationships:
        wanted[str(relationship.tenant_id)].update(
            (str(relationship.source_entity_id), str(relationship.target_entity_id))
        )
    held = {
        tenant: {entity_id for (entity_id,) in _select_by_ids(connection, "id", tenant, ids)}
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
        entity = _resolve(connection, tenant, [str(entity_id)])[str(entity_id)]
        connection.execute(_FORGET_MERGES_INTO, (entity, tenant, tenant))
        found = connection.execute(
            "DELETE FROM graph_entities WHERE tenant_id = ? AND id = ? RETURNING row, body",
            (tenant, entity),
        ).fetchone()
        if found is None:
            return False
        changes = _Changes()
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
    canonical = set(_resolve(connection, str(tenant_id), list(entity_ids)).values())
    return [
        entity_from_json(body)
        for (body,) in _select_by_ids(connection, "body", str(tenant_id), canonical)
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
        for key, blob in _select_terms(
            connection,
            "SELECT key, entity_rows FROM graph_key_postings WHERE tenant_id = ? AND key IN ({})",
            tenant,
            list(dict.fromkeys(keys)),
        ):
            blobs_of[key].append(np.frombuffer(blob, dtype=_ROW))
        rows_of = {
            key: _net(np.concatenate(blobs), keep_removals=False).tolist()
            for key, blobs in blobs_of.items()
        }
        wanted = list({row for rows in rows_of.values() for row in rows})
        found = {
            row: (entity_id, body)
            for row, entity_id, body in _select_rows(connection, "row, id, body", tenant, wanted)
        }
    result: dict[str, list[Entity]] = {key: [] for key in keys}
    for key, rows in rows_of.items():
        ordered = sorted((found[row] for row in rows if row in found), key=lambda held: held[0])
        result[key] = [entity_from_json(body) for _, body in ordered]
    return result


def _read_name_candidates(
    connection: sqlite3.Connection, units: Sequence[str], tenant_id: TenantId, limit: int
) -> list[Entity]:
    """The best `limit` entities by distinct shared units, then `str(id)`."""
    tenant = str(tenant_id)
    with _read_transaction(connection):
        # A query has at most a few hundred units (MAX_NAME_CHARS bounds them),
        # far below the bound-parameter limit.
        blobs = [
            np.frombuffer(blob, dtype=_ROW)
            for (blob,) in connection.execute(
                "SELECT entity_rows FROM graph_name_postings "
                f"WHERE tenant_id = ? AND unit IN ({_placeholders(len(units))})",
                (tenant, *units),
            )
        ]
        if not blobs:
            return []
        found, shared = _count_rows(np.concatenate(blobs))
        if found.size > limit:
            # Keep every row that could be among the best `limit`: all those
            # sharing at least the `limit`-th largest count.
            cut = np.partition(shared, found.size - limit)[found.size - limit]
            found, shared = found[shared >= cut], shared[shared >= cut]
        count_of = dict(zip(found.tolist(), shared.tolist(), strict=True))
        ranked = sorted(
            _select_rows(connection, "row, id, body", tenant, list(count_of)),
            key=lambda row: (-count_of[row[0]], row[1]),
        )
    return [entity_from_json(body) for _, _, body in ranked[:limit]]


def _count_rows(
    entries: np.ndarray[Any, np.dtype[np.int64]],
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, np.dtype[np.int64]]]:
    """The rows sharing at least `MIN_SHARED_UNITS` units, and how many each shares.

    A unit's signed entries sum to 1 for each row it holds and 0 for any
    other, so the sum over the query's units is the units a row shares.
    """
    rows = np.abs(entries)
    weights = None if entries.min() > 0 else np.sign(entries)
    low, high = int(rows.min()), int(rows.max())
    if high - low > _BINCOUNT_SPAN_PER_ROW * rows.size + _BINCOUNT_SPAN:
        # Rows far apart (a tenant among many, or rows an older file assigned):
        # sorting them costs less than counting into a vast array.
        found, where = np.unique(rows, return_inverse=True)
        shared = np.bincount(where, weights=weights, minlength=found.size).astype(np.int64)
        enough = shared >= MIN_SHARED_UNITS
        return found[enough], shared[enough]
    counts = np.bincount(rows - low, weights=weights).astype(np.int64)
    found = np.flatnonzero(counts >= MIN_SHARED_UNITS)
    return found + low, counts[found]


def _select_rows(
    connection: sqlite3.Connection, columns: str, tenant: str, rows: Sequence[int]
) -> list[Any]:
    """`columns` of each of the tenant's entities among `rows`, in no particular order.

    Postings name only their tenant's rows; the tenant is checked all the
    same, so that no fault in them can ever answer with another tenant's
    entity. (`+` keeps SQLite on the rowid lookup.)
    """
    return [
        found
        for chunk in _chunks(rows, _parameter_limit(connection) - 1)
        for found in connection.execute(
            f"SELECT {columns} FROM graph_entities "
            f"WHERE row IN ({_placeholders(len(chunk))}) AND +tenant_id = ?",
            (*chunk, tenant),
        ).fetchall()
    ]


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
            for chunk in _chunks(frontier, (_parameter_limit(connection) - 2) // 2):
                marks = _placeholders(len(chunk))
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


class SqliteGraphStore(AsyncClosable, GraphStore):
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
                (lambda connection: _check_schema_to_read(connection, self._path))
                if read_only
                else (lambda connection: _prepare(connection, self._path))
            ),
            read_only=read_only,
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"{type(self).__name__}({self._path!r}, {state})"

    def _resource_name(self) -> str:
        return f"{type(self).__name__}({self._path!r})"

    async def _release(self) -> None:
        """Close the connection and end the store's thread."""
        await self._worker.close()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the store's thread with its connection, opening it if need be."""
        return await self._worker.run(work)

    # -- writes ---------------------------------------------------------------

    async def upsert_entity(self, entity: Entity) -> None:
        """Store the entity, replacing any with the same `(tenant_id, id)` and its keys."""
        await self.upsert_entities([entity])

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        """Store every entity in one transaction; a later one with the same key wins."""
        batch = list(check_entities(entities))
        if batch:
            await self._run(lambda connection: _write_entities(connection, batch))

    async def upsert_relationship(self, relationship: Relationship) -> None:
        """Store the relationship.

        Raises:
            MissingEntityError: an endpoint is not in the relationship's tenant.
        """
        await self.upsert_relationships([relationship])

    async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
        """Store every relationship in one transaction, or none of them.

        Endpoints are checked inside the transaction, so no concurrent writer
        can remove one between the check and the write.

        Raises:
            MissingEntityError: some endpoint is not in its relationship's
                tenant; it names the first such endpoint in batch order.
        """
        batch = list(check_relationships(relationships))
        if batch:
            await self._run(lambda connection: _write_relationships(connection, batch))

    async def merge_entities(self, canonical: Entity, merged_ids: Sequence[EntityId]) -> None:
        """Absorb `merged_ids` into `canonical` in one transaction; see `GraphMerge`."""
        [entity] = check_entities([canonical], argument="canonical")
        merged = check_merge(entity.id, merged_ids)
        await self._run(lambda connection: _merge(connection, entity, merged))

    async def unmerge_entities(self, merged_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        """Forget that `merged_ids` resolve elsewhere; see `GraphMerge`."""
        check_tenant_id(tenant_id)
        ids = [str(entity_id) for entity_id in check_entity_ids(merged_ids, argument="merged_ids")]
        if ids:
            await self._run(lambda connection: _unmerge(connection, tenant_id, ids))

    async def resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each id's canonical id; itself when it was never merged."""
        requested = list(check_entity_ids(entity_ids))
        check_tenant_id(tenant_id)
        if not requested:
            return {}
        texts = [str(entity_id) for entity_id in requested]
        found = await self._run(lambda connection: _resolve(connection, str(tenant_id), texts))
        return {
            EntityId(entity_id): EntityId(UUID(found[str(entity_id)])) for entity_id in requested
        }

    async def delete_entity(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity the id reads as, its keys, relationships and merges into it.

        One transaction; see `GraphWriter.delete_entity`. `True` if the tenant
        held the entity.
        """
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        return await self._run(lambda connection: _delete_entity(connection, entity_id, tenant_id))

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every entity, key and relationship of the tenant; return the entity count."""
        check_tenant_id(tenant_id)
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

    async def get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        """The entity, or `None` when the tenant holds no such id."""
        check_entity_id(entity_id)
        found = await self.get_entities([entity_id], tenant_id)
        return found[0] if found else None

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        """The held entities among `entity_ids`, each once, in unspecified order."""
        check_entity_ids(entity_ids), check_tenant_id(tenant_id)
        ids = list(dict.fromkeys(str(entity_id) for entity_id in entity_ids))
        if not ids:
            return []
        return await self._run(lambda connection: _read_entities(connection, tenant_id, ids))

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

    async def find_by_blocking_key(self, key: str, tenant_id: TenantId) -> list[Entity]:
        """Every entity of the tenant carrying `key`, ordered by `str(id)`."""
        return (await self.find_by_blocking_keys([key], tenant_id))[key]

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        """Entities per requested key, from one indexed query.

        Every requested key is present, `[]` when nothing carries it; an
        entity carrying several requested keys appears under each, as a
        separate object. Within a key, entities are ordered by `str(id)`.
        The query is split only past SQLite's limit on bound parameters
        (32,766 by default), and the parts then read one snapshot.
        """
        requested = list(check_names(keys, argument="keys"))
        check_tenant_id(tenant_id)
        if not requested:
            return {}
        return await self._run(lambda connection: _read_by_keys(connection, requested, tenant_id))

    async def find_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        """The entities sharing the most name units with `query`, best first, in one query.

        See `NameCandidateReader.find_name_candidates` for the contract.
        """
        check_tenant_id(tenant_id)
        check_limit(limit)
        units = query_name_units(query)
        if not units or limit == 0:
            return []
        return await self._run(
            lambda connection: _read_name_candidates(connection, units, tenant_id, limit)
        )

    async def get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        """The relationship, or `None`."""
        check_relationship_id(relationship_id), check_tenant_id(tenant_id)

        def read(connection: sqlite3.Connection) -> Relationship | None:
            row = connection.execute(
                "SELECT body FROM graph_relationships WHERE tenant_id = ? AND id = ?",
                (str(tenant_id), str(relationship_id)),
            ).fetchone()
            return None if row is None else Relationship.model_validate_json(row[0])

        return await self._run(read)

    async def get_relationships(
        self,
        entity_id: EntityId,
        tenant_id: TenantId,
        *,
        relationship_type: str | None = None,
    ) -> list[Relationship]:
        """Relationships with the entity at either end, ordered by `str(id)`."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        check_optional_name(relationship_type, argument="relationship_type")
        return await self._run(
            lambda connection: _read_relationships(
                connection, entity_id, tenant_id, relationship_type
            )
        )

    async def neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, *, depth: int = 1
    ) -> list[Entity]:
        """Entities within `depth` hops, either direction, excluding the start.

        Ordered by hop count, then `str(id)`; read from one snapshot.

        Raises:
            ValueError: `depth` is not an integer within `1..MAX_DEPTH`.
        """
        check_entity_id(entity_id), check_tenant_id(tenant_id), check_depth(depth)
        return await self._run(lambda connection: _walk(connection, entity_id, tenant_id, depth))
