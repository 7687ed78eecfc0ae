"""The SQLite worker: one thread and one connection for one SQLite adapter.

Every SQLite adapter (the graph store, the vector store, the event log) runs
its database work through a `SqliteWorker`, so all of them open, use, fail
and close the same way:

- **Thread.** One worker thread per adapter, created on the first call (a
  worker never used starts no thread and touches no file). Calls run one at
  a time, in the order they were made, so no call blocks the event loop.
- **Connection.** Opened on the worker thread by the first call, in
  autocommit mode (transactions are explicit), with pages of `PAGE_BYTES`
  in a file it creates (a file that exists keeps its own), WAL journaling,
  `synchronous=NORMAL` (`FULL` where the adapter asks), a busy timeout of
  `BUSY_TIMEOUT_SECONDS`, up to `MMAP_BYTES` of the file mapped for reads
  and a page cache of `CACHE_KIBIBYTES`. Then the adapter's `setup` runs (its schema check).
  If opening or `setup` fails, the connection is closed and the next call
  tries again.
- **WAL switch.** SQLite answers a journal-mode change on a busy file with
  `SQLITE_BUSY` at once, without the busy timeout, so the switch is retried
  for up to `BUSY_TIMEOUT_SECONDS`: two processes may open a new file together.
- **Errors.** Translated on the worker thread: a `sqlite3.Error` becomes a
  `StoreError` naming the adapter and its path, with the `sqlite3` error as
  `__cause__`. Any other exception (a `ValueError`, a `MissingEntityError`)
  passes through unchanged.
- **Transactions.** `write_transaction` takes the write lock at its first
  statement (`BEGIN IMMEDIATE`) and commits, or rolls back on any exception;
  `read_transaction` reads one snapshot. A failing `ROLLBACK` never hides
  the exception that caused it.
- **Close.** `close()` queues the disconnect behind every call already
  made, waits for it, then lets the thread end without blocking the event
  loop. A call after `close()` raises `ClosedError`; `close()` is
  idempotent. A call whose awaiting task is cancelled either never starts
  or runs to the end.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Final, Literal
from uuid import UUID

import numpy as np

from redstring.domain.exceptions import ClosedError, StoreError
from redstring.domain.ids import TenantId

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

#: How long a statement waits for another connection's write lock, in seconds.
BUSY_TIMEOUT_SECONDS: Final = 30.0
#: The page size of a file a worker creates: a 384-dimension vector row is
#: about 1.7 KB, which 4 KiB pages hold two at a time (ADR 0046).
PAGE_BYTES: Final = 16_384
#: How much of the file reads may map into memory instead of copying it, in bytes.
MMAP_BYTES: Final = 1 << 30
#: The page cache of each connection: large enough that a batch of 100,000
#: vectors at 384 dimensions writes about a third faster than with SQLite's 2 MiB.
CACHE_KIBIBYTES: Final = 64 * 1024

_WAL_RETRY_SECONDS: Final = 0.01

_HEX_DIGITS: Final = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
#: Where the first hex digit of each of a UUID's 16 bytes goes in its text.
_HEX_AT: Final = np.array([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34])
#: The length of a UUID's text, `8-4-4-4-12` hex digits.
_UUID_TEXT: Final = 36


def uuid_texts(ids: Sequence[UUID]) -> list[str]:
    """`[str(id) for id in ids]`, the text SQLite adapters key rows by, all at once.

    Formatted for the whole batch with numpy: about three times faster than
    `str` one id at a time, which a batch of 100,000 entities notices.
    """
    raw = np.frombuffer(b"".join([each.bytes for each in ids]), dtype=np.uint8).reshape(-1, 16)
    text = np.full((len(raw), _UUID_TEXT), ord("-"), dtype=np.uint8)
    text[:, _HEX_AT] = _HEX_DIGITS[raw >> 4]
    text[:, _HEX_AT + 1] = _HEX_DIGITS[raw & 15]
    joined = text.tobytes().decode("ascii")
    return [joined[start : start + _UUID_TEXT] for start in range(0, len(joined), _UUID_TEXT)]


@contextmanager
def write_transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """Hold the write lock from the first statement; commit, or roll back on any error."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (or the connection be unusable):
        # the error that got here is the one to raise.
        with suppress(sqlite3.Error):
            if connection.in_transaction:
                connection.execute("ROLLBACK")
        raise


@contextmanager
def read_transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """One snapshot for a read that takes several statements."""
    connection.execute("BEGIN")
    try:
        yield
    finally:
        with suppress(sqlite3.Error):
            connection.execute("ROLLBACK")


def enable_wal(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL journaling, retrying while another connection holds it."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(_WAL_RETRY_SECONDS)
        else:
            return


def schema_version(
    connection: sqlite3.Connection, meta_table: str, *, key_column: str = "name"
) -> int | None:
    """The version `meta_table` records, or `None` when it was never created or records none."""
    if not connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (meta_table,)
    ).fetchone():
        return None
    row = connection.execute(
        f"SELECT value FROM {meta_table} WHERE {key_column} = 'schema_version'"
    ).fetchone()
    return None if row is None else int(row[0])


def ensure_schema(
    connection: sqlite3.Connection,
    *,
    meta_schema: str,
    meta_table: str,
    version: int,
    statements: Sequence[str],
    store: str,
    what: str,
    key_column: str = "name",
    migrations: Mapping[int, Callable[[sqlite3.Connection], None]] | None = None,
    on_create: Callable[[sqlite3.Connection], None] | None = None,
) -> None:
    """Create an adapter's tables on first use; migrate an older version; refuse any other.

    Every SQLite adapter's `setup` (graph, vector, events) runs its schema
    through this one rule, in one write transaction: a file whose
    `meta_table` (created by `meta_schema`) records no `schema_version`
    gets `statements`, the version row and whatever `on_create` writes; one
    recording a version in `migrations` is migrated by it (which records
    `version`); any other version is a `StoreError` on `store`, saying
    whether a newer redstring wrote it. `what` names the tables' kind in
    that message (`"graph"`, `"event log"`). A file already at `version`
    is read once and left alone.
    """
    if schema_version(connection, meta_table, key_column=key_column) == version:
        return
    with write_transaction(connection):
        connection.execute(meta_schema)
        found = schema_version(connection, meta_table, key_column=key_column)
        if found is None:
            for statement in statements:
                connection.execute(statement)
            connection.execute(
                f"INSERT INTO {meta_table} ({key_column}, value) VALUES ('schema_version', ?)",
                (version,),
            )
            if on_create is not None:
                on_create(connection)
        elif migrations and found in migrations:
            migrations[found](connection)
        elif found != version:
            newer = " (written by a newer redstring)" if found > version else ""
            raise StoreError(
                store=store,
                reason=f"the file holds {what} schema version {found}{newer}; "
                f"this redstring reads only version {version}",
            )


def check_schema_to_read(
    connection: sqlite3.Connection,
    *,
    meta_table: str,
    version: int,
    store: str,
    what: str,
    held: str,
    key_column: str = "name",
) -> None:
    """Refuse, without writing, a file that holds no such tables or another schema version.

    `held` names what a file without them lacks (`"graph"`: "the file holds
    no redstring graph"); an older version is refused with the advice to
    open it once writable, which migrates it.
    """
    found = schema_version(connection, meta_table, key_column=key_column)
    if found is None:
        raise StoreError(store=store, reason=f"the file holds no redstring {held}")
    if found < version:
        raise StoreError(
            store=store,
            reason=f"the file holds {what} schema version {found}, older than this "
            f"redstring's version {version}; open it once without read_only "
            "to migrate it in place",
        )
    if found != version:
        raise StoreError(
            store=store,
            reason=f"the file holds {what} schema version {found} (written by a newer "
            f"redstring); this redstring reads only version {version}",
        )


def held_tenants(connection: sqlite3.Connection, table: str) -> list[TenantId]:
    """The distinct `tenant_id`s of `table`'s rows, in `str(id)` order."""
    sql = f"SELECT DISTINCT tenant_id FROM {table} ORDER BY tenant_id"
    return [TenantId(UUID(tenant)) for (tenant,) in connection.execute(sql)]


def tenant_rows(connection: sqlite3.Connection, *, table: str, tenant: str, via: str = "") -> int:
    """How many of `table`'s rows are `tenant`'s; `via` names an index (`INDEXED BY ...`)."""
    sql = f"SELECT count(*) FROM {table} {via} WHERE tenant_id = ?"
    return int(connection.execute(sql, (tenant,)).fetchone()[0])


def placeholders(count: int) -> str:
    """`?, ?, ...`: `count` bound parameters for an `IN (...)` list."""
    return ", ".join("?" * count)


def chunks[T](items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def parameter_limit(connection: sqlite3.Connection) -> int:
    """How many `?` parameters one statement may bind on this connection."""
    return connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


class SqliteWorker:
    """One thread and one lazily opened connection, serving one SQLite adapter.

    `store` names the adapter in every `StoreError` (`"sqlite graph store
    /path/file.db"`); `resource` names it in `ClosedError`. `setup` runs on
    each new connection before any work, inside no transaction; it creates
    or checks the adapter's tables. `synchronous` is `NORMAL` (a commit
    survives the process being killed) or `FULL` (it survives a power loss
    too, for an fsync per commit). With `read_only`, the file is opened
    read-only (never created, never switched to WAL, every write refused by
    SQLite) and a missing file is a `StoreError`. The constructor does no I/O.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        store: str,
        resource: str,
        setup: Callable[[sqlite3.Connection], None],
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        read_only: bool = False,
    ) -> None:
        self._path = os.fspath(path)
        self._read_only = read_only
        self._synchronous = synchronous
        self._store = store
        self._resource = resource
        self._setup = setup
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._connection: sqlite3.Connection | None = None  # used only on the worker thread

    @property
    def closed(self) -> bool:
        """Whether `close()` has been called."""
        return self._closed

    def error(self, reason: str) -> StoreError:
        """A `StoreError` naming this worker's adapter and path."""
        return StoreError(store=self._store, reason=reason)

    async def run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the worker thread with the open connection; return its result.

        Raises:
            ClosedError: the worker is closed.
            StoreError: SQLite failed; the `sqlite3` error is the `__cause__`.
        """
        if self._closed:
            raise ClosedError(resource=self._resource)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="redstring-sqlite")
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._call, work)

    async def close(self) -> None:
        """Close the connection after every call already made, and end the thread.

        Safe to call more than once.

        Raises:
            StoreError: SQLite failed to close the connection; the worker is
                closed all the same.
        """
        if self._closed:
            return
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(executor, self._disconnect)
        finally:
            # The disconnect was the last job, so the thread is idle and ends at once.
            executor.shutdown(wait=False)

    # -- the worker thread -----------------------------------------------------

    def _call[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        return self._translated(lambda: work(self._connection or self._connect()))

    def _translated[T](self, work: Callable[[], T]) -> T:
        try:
            return work()
        except sqlite3.Error as exc:
            raise self.error(str(exc)) from exc

    def _connect(self) -> sqlite3.Connection:
        if self._read_only:
            if not os.path.isfile(self._path):
                raise self.error("no such file")
            uri = "file:" + urllib.parse.quote(os.path.abspath(self._path)) + "?mode=ro"
            connection = sqlite3.connect(
                uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS, autocommit=True
            )
        else:
            connection = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_SECONDS, autocommit=True)
        try:
            if not self._read_only:
                # Only a file with no pages yet takes it; any other keeps its own.
                connection.execute(f"PRAGMA page_size = {PAGE_BYTES}")
                enable_wal(connection)
                connection.execute(f"PRAGMA synchronous = {self._synchronous}")
            connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            connection.execute(f"PRAGMA cache_size = -{CACHE_KIBIBYTES}")
            self._setup(connection)
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._translated(connection.close)
