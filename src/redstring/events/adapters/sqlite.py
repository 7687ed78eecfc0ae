"""The SQLite event log: a durable `EventLog`, in the same file as the SQLite stores.

Uses only the standard library's `sqlite3`, through the shared
`SqliteWorker`. Every table is prefixed `events_`, so the graph and vector
stores may keep theirs in the same file:

- `events_meta`: the schema version, as the row `('schema_version', '1')`.
- `events_log`: one row per event. `sequence` is the event's sequence
  number (the rowid); `event_id` is unique; `tenant_id`, `kind` and
  `version` are columns of their own; `body` is the event as
  `event_to_json` writes it, the stored format. Reads of one tenant use the
  index on `(tenant_id, sequence)`.
- `events_entities`: the index `EntityEventReader` reads, one row per
  `(tenant_id, entity_id, sequence)` for each entity a merge, an undoing
  or a delete names. Created on every connect, and filled from the log
  when a file written before it lacks it (ADR 0058).

Commits use `synchronous=FULL`: the log is the one record nothing can
rebuild, so an appended event survives a power loss, not only a killed
process. See [ADR 0019](../adr/0019-the-durable-event-log-shares-the-sqlite-file.md).
"""

from __future__ import annotations

import os  # noqa: TC003 - the public surface test resolves the signature at runtime
import sqlite3
from typing import TYPE_CHECKING, Final
from uuid import UUID  # noqa: TC003 - the public surface test resolves signatures

from redstring.domain.events import (
    event_from_json,
    event_to_json,
)
from redstring.domain.exceptions import StoreError
from redstring.domain.limits import MAX_JSON_INT
from redstring.domain.validation import (
    check_entity_ids,
    check_integer,
    check_path,
    check_tenant_id,
)
from redstring.ports.event_log import EntityEventReader, EventLogBase, StoredEvent, entities_named
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.sqlite import (
    SqliteWorker,
    chunks,
    ensure_schema,
    parameter_limit,
    placeholders,
    read_transaction,
    write_transaction,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId

#: The schema this module reads and writes, recorded in `events_meta`.
SCHEMA_VERSION: Final = 1

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS events_log (
        sequence INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        tenant_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        version INTEGER NOT NULL,
        body TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_log_by_tenant ON events_log (tenant_id, sequence)",
)
_INDEX: Final = """CREATE TABLE events_entities (
    tenant_id TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, entity_id, sequence)
) WITHOUT ROWID"""

#: Fills `events_entities` from the stored events, for a file written before it.
_BACKFILL: Final = """
    INSERT OR IGNORE INTO events_entities (tenant_id, entity_id, sequence)
    SELECT tenant_id, json_extract(body, '$.canonical.id'), sequence
        FROM events_log WHERE kind = 'entities_merged'
    UNION ALL SELECT tenant_id, json_extract(body, '$.canonical_id'), sequence
        FROM events_log WHERE kind = 'merge_undone'
    UNION ALL SELECT log.tenant_id, merged.value, log.sequence
        FROM events_log AS log, json_each(log.body, '$.merged_ids') AS merged
        WHERE log.kind IN ('entities_merged', 'merge_undone')
    UNION ALL SELECT tenant_id, json_extract(body, '$.entity_id'), sequence
        FROM events_log WHERE kind = 'entity_deleted'
"""
_INSERT_NAMED: Final = (
    "INSERT OR IGNORE INTO events_entities (tenant_id, entity_id, sequence) VALUES (?, ?, ?)"
)

_INSERT: Final = """
    INSERT INTO events_log (sequence, event_id, tenant_id, kind, version, body)
    VALUES (?, ?, ?, ?, ?, ?)
"""


def _ensure_schema(connection: sqlite3.Connection, store: str) -> None:
    """Create the tables on first use; refuse a schema version this code does not know."""
    ensure_schema(
        connection,
        meta_schema=(
            "CREATE TABLE IF NOT EXISTS events_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        ),
        meta_table="events_meta",
        version=SCHEMA_VERSION,
        statements=_SCHEMA,
        store=store,
        what="event log",
    )


def _held_ids(connection: sqlite3.Connection, event_ids: Sequence[str]) -> set[str]:
    """The ids among `event_ids` that the log already holds."""
    return {
        event_id
        for chunk in chunks(event_ids, parameter_limit(connection))
        for (event_id,) in connection.execute(
            f"SELECT event_id FROM events_log WHERE event_id IN ({placeholders(len(chunk))})",
            chunk,
        )
    }


def _last_sequence(connection: sqlite3.Connection) -> int:
    (last,) = connection.execute("SELECT coalesce(max(sequence), 0) FROM events_log").fetchone()
    return int(last)


def _ensure_index(connection: sqlite3.Connection) -> None:
    """Create and fill `events_entities` when the file lacks it."""
    exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_entities'"
    if connection.execute(exists).fetchone():
        return
    with write_transaction(connection):
        if not connection.execute(exists).fetchone():
            connection.execute(_INDEX)
            connection.execute(_BACKFILL)


class SqliteEventLog(AsyncClosable, EventLogBase, EntityEventReader):
    """An `EventLog` persisted in one SQLite database file, which it may share.

    The constructor does no I/O; the file and the `events_` tables are
    created on first use. Each `append_many` is one transaction that takes
    the file's write lock before it numbers the batch, so a batch is recorded
    whole or not at all, even if the process is killed mid-batch, and two
    processes appending to one file never share a sequence number. Every
    read sees each batch committed before it started, from any process.
    Reads parse the stored text anew, so a caller can never reach what the
    log holds.

    All database work runs on the log's `SqliteWorker` (one thread, one
    connection; see `redstring.storage.adapters.sqlite`), so no call blocks
    the event loop.

    Raises (from any method):
        StoreError: the database failed, the file holds an event log schema
            version this code does not read, or a stored event cannot be
            read; the message names the path. The `sqlite3` error, if any, is
            the `__cause__`.
        ClosedError: the log has been closed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = check_path(path)
        self._store = f"sqlite event log {self._path}"
        self._worker = SqliteWorker(
            self._path,
            store=self._store,
            resource=self._resource_name(),
            setup=self._setup,
            synchronous="FULL",
        )

    def _describe(self) -> str:
        return repr(self._path)

    def _setup(self, connection: sqlite3.Connection) -> None:
        _ensure_schema(connection, self._store)
        _ensure_index(connection)

    async def _release(self) -> None:
        """Close the connection and end the log's thread."""
        await self._worker.close()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._worker.run(work)

    async def _append_many(self, events: Sequence[Event]) -> list[int]:
        named = [
            [str(entity_id) for entity_id in dict.fromkeys(entities_named(event))]
            for event in events
        ]
        rows = [
            (
                str(event.event_id),
                str(event.tenant_id),
                event.kind,
                event.version,
                event_to_json(event),
            )
            for event in events
        ]

        def write(connection: sqlite3.Connection) -> list[int]:
            with write_transaction(connection):
                held = _held_ids(connection, [row[0] for row in rows])
                for event_id, *_ in rows:
                    if event_id in held:
                        raise ValueError(f"the log already holds event {event_id}")
                first = _last_sequence(connection) + 1
                numbers = list(range(first, first + len(rows)))
                connection.executemany(
                    _INSERT, [(number, *row) for number, row in zip(numbers, rows, strict=True)]
                )
                connection.executemany(
                    _INSERT_NAMED,
                    [
                        (row[1], entity_id, number)
                        for number, row, ids in zip(numbers, rows, named, strict=True)
                        for entity_id in ids
                    ],
                )
            return numbers

        return await self._run(write)

    async def _read(self, after: int, tenant_id: TenantId | None) -> list[StoredEvent]:
        if tenant_id is None:
            sql = "SELECT sequence, body FROM events_log WHERE sequence > ? ORDER BY sequence"
            parameters: tuple[object, ...] = (after,)
        else:
            sql = (
                "SELECT sequence, body FROM events_log "
                "WHERE tenant_id = ? AND sequence > ? ORDER BY sequence"
            )
            parameters = (str(tenant_id), after)

        def fetch(connection: sqlite3.Connection) -> list[StoredEvent]:
            with read_transaction(connection):
                rows = connection.execute(sql, parameters).fetchall()
            return [self._stored(sequence, body) for sequence, body in rows]

        return await self._run(fetch)

    async def last_sequence(self) -> int:
        """The number of the last event recorded; 0 when the log is empty."""
        return await self._run(_last_sequence)

    async def read_events(
        self, event_ids: Sequence[UUID], *, tenant_id: TenantId
    ) -> list[StoredEvent]:
        """Copies of the tenant's events among `event_ids`, in order; see `EntityEventReader`."""
        ids = [str(event_id) for event_id in check_entity_ids(event_ids, argument="event_ids")]
        check_tenant_id(tenant_id)
        return await self._run(
            lambda connection: self._select_in(
                connection,
                "SELECT sequence, body FROM events_log WHERE tenant_id = ? AND event_id IN ({})",
                str(tenant_id),
                ids,
            )
        )

    async def read_naming(
        self, entity_ids: Sequence[EntityId], *, tenant_id: TenantId, after: int = 0
    ) -> list[StoredEvent]:
        """Copies of the tenant's events above `after` naming one of `entity_ids`, in order."""
        ids = [str(entity_id) for entity_id in check_entity_ids(entity_ids)]
        check_tenant_id(tenant_id)
        check_integer(after, argument="after", minimum=0, maximum=MAX_JSON_INT)
        sql = (
            "SELECT sequence, body FROM events_log WHERE sequence IN ("
            "SELECT sequence FROM events_entities WHERE tenant_id = ? AND sequence > "
            f"{int(after)} AND entity_id IN ({{}}))"
        )
        return await self._run(
            lambda connection: self._select_in(connection, sql, str(tenant_id), ids)
        )

    def _select_in(
        self, connection: sqlite3.Connection, sql: str, tenant: str, ids: Sequence[str]
    ) -> list[StoredEvent]:
        """The events `sql` selects for `tenant` and each chunk of `ids`, in sequence order."""
        size = connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - 1
        rows: dict[int, str] = {}
        with read_transaction(connection):
            for start in range(0, len(ids), size):
                chunk = ids[start : start + size]
                statement = sql.format(", ".join("?" * len(chunk)))
                rows.update(connection.execute(statement, (tenant, *chunk)).fetchall())
        return [self._stored(sequence, rows[sequence]) for sequence in sorted(rows)]

    def _stored(self, sequence: int, body: str) -> StoredEvent:
        try:
            event = event_from_json(body)
        except ValueError as exc:
            raise StoreError(
                store=self._store,
                reason=f"event {sequence} cannot be read by this redstring: {exc}",
            ) from exc
        return StoredEvent(sequence=sequence, event=event)
