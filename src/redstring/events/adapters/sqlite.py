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

Commits use `synchronous=FULL`: the log is the one record nothing can
rebuild, so an appended event survives a power loss, not only a killed
process. See [ADR 0019](../adr/0019-the-durable-event-log-shares-the-sqlite-file.md).
"""

from __future__ import annotations

import os  # noqa: TC003 - the public surface test resolves the signature at runtime
from typing import TYPE_CHECKING, Final

from redstring.domain.events import (
    event_from_json,
    event_to_json,
)
from redstring.domain.exceptions import StoreError
from redstring.domain.validation import (
    check_path,
)
from redstring.ports.event_log import EventLogBase, StoredEvent
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
    import sqlite3
    from collections.abc import Callable, Sequence

    from redstring.domain.events import Event
    from redstring.domain.ids import TenantId

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


class SqliteEventLog(AsyncClosable, EventLogBase):
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
            setup=lambda connection: _ensure_schema(connection, self._store),
            synchronous="FULL",
        )

    def _describe(self) -> str:
        return repr(self._path)

    async def _release(self) -> None:
        """Close the connection and end the log's thread."""
        await self._worker.close()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._worker.run(work)

    async def _append_many(self, events: Sequence[Event]) -> list[int]:
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

    def _stored(self, sequence: int, body: str) -> StoredEvent:
        try:
            event = event_from_json(body)
        except ValueError as exc:
            raise StoreError(
                store=self._store,
                reason=f"event {sequence} cannot be read by this redstring: {exc}",
            ) from exc
        return StoredEvent(sequence=sequence, event=event)
