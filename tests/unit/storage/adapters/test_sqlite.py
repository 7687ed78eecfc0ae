"""The SQLite worker every SQLite adapter runs on: each of its rules, tested once here."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import TYPE_CHECKING
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.exceptions import ClosedError, StoreError
from redstring.storage.adapters.sqlite import (
    SqliteWorker,
    read_transaction,
    uuid_texts,
    write_transaction,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path


def make_table(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS items (value INTEGER NOT NULL)")


def new_worker(
    path: Path, setup: Callable[[sqlite3.Connection], None] = make_table
) -> SqliteWorker:
    return SqliteWorker(path, store=f"test store {path}", resource="TestStore", setup=setup)


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[SqliteWorker]:
    opened = new_worker(tmp_path / "worker.db")
    yield opened
    await opened.close()


def values(connection: sqlite3.Connection) -> list[int]:
    return [value for (value,) in connection.execute("SELECT value FROM items ORDER BY rowid")]


# -- thread and connection -----------------------------------------------------------


def test_an_unused_worker_starts_no_thread_and_touches_no_file(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    unused = new_worker(tmp_path / "worker.db")
    asyncio.run(unused.close())
    assert set(threading.enumerate()) - before == set()
    assert list(tmp_path.iterdir()) == []


async def test_every_call_runs_on_one_thread_of_its_own_in_call_order(
    worker: SqliteWorker,
) -> None:
    def record(value: int) -> Callable[[sqlite3.Connection], str]:
        def work(connection: sqlite3.Connection) -> str:
            with write_transaction(connection):
                connection.execute("INSERT INTO items (value) VALUES (?)", (value,))
            return threading.current_thread().name

        return work

    names = await asyncio.gather(*(worker.run(record(value)) for value in range(20)))
    assert len(set(names)) == 1
    assert names[0].startswith("redstring-sqlite")
    assert names[0] != threading.current_thread().name
    assert await worker.run(values) == list(range(20))


async def test_the_connection_is_in_wal_mode_with_the_documented_pragmas(
    worker: SqliteWorker,
) -> None:
    def pragmas(connection: sqlite3.Connection) -> tuple[object, ...]:
        return tuple(
            connection.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "synchronous", "busy_timeout", "cache_size")
        )

    # synchronous 1 is NORMAL; a negative cache size is in KiB.
    assert await worker.run(pragmas) == ("wal", 1, 30_000, -64 * 1024)
    assert await worker.run(lambda connection: connection.autocommit) is True


async def test_a_new_file_gets_16_kib_pages_and_an_existing_file_keeps_its_own(
    tmp_path: Path,
) -> None:
    def page_size(connection: sqlite3.Connection) -> int:
        return int(connection.execute("PRAGMA page_size").fetchone()[0])

    created = new_worker(tmp_path / "new.db")
    try:
        assert await created.run(page_size) == 16_384
    finally:
        await created.close()
    with sqlite3.connect(tmp_path / "new.db") as connection:
        assert page_size(connection) == 16_384
    connection.close()
    # A file written with SQLite's default pages, as every earlier version wrote them.
    with sqlite3.connect(tmp_path / "old.db") as connection:
        connection.execute("PRAGMA page_size = 4096")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("CREATE TABLE items (value INTEGER NOT NULL)")
        connection.execute("INSERT INTO items VALUES (7)")
    connection.close()
    existing = new_worker(tmp_path / "old.db")
    try:

        def write_and_read(connection: sqlite3.Connection) -> list[tuple[int]]:
            with write_transaction(connection):
                connection.execute("INSERT INTO items VALUES (8)")
            return connection.execute("SELECT value FROM items ORDER BY value").fetchall()

        assert await existing.run(write_and_read) == [(7,), (8,)]
        assert await existing.run(page_size) == 4_096
    finally:
        await existing.close()


async def test_setup_runs_once_per_connection_and_a_failed_one_is_retried(
    tmp_path: Path,
) -> None:
    attempts: list[int] = []

    def flaky_setup(connection: sqlite3.Connection) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("not yet")
        make_table(connection)

    flaky = new_worker(tmp_path / "worker.db", flaky_setup)
    try:
        with pytest.raises(ValueError, match="not yet"):
            await flaky.run(values)
        assert await flaky.run(values) == []
        assert await flaky.run(values) == []
        assert len(attempts) == 2
    finally:
        await flaky.close()


async def test_opening_waits_while_another_connection_holds_the_write_lock(
    worker: SqliteWorker, tmp_path: Path
) -> None:
    # SQLite refuses the switch to WAL at once, without the busy timeout,
    # while another connection holds a write lock on a file not yet in WAL.
    holder = sqlite3.connect(tmp_path / "worker.db", autocommit=True)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN IMMEDIATE")
    asyncio.get_running_loop().call_later(0.2, holder.execute, "COMMIT")
    try:
        assert await worker.run(values) == []
    finally:
        holder.close()


# -- errors --------------------------------------------------------------------------


async def test_a_sqlite_error_becomes_a_store_error_naming_the_path(
    worker: SqliteWorker, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match=r"test store .*worker\.db: no such table") as raised:
        await worker.run(lambda connection: connection.execute("SELECT * FROM missing"))
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
    assert raised.value.store == f"test store {tmp_path / 'worker.db'}"


async def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    not_a_database = tmp_path / "worker.db"
    not_a_database.write_bytes(b"not sqlite at all, but long enough to read a header" * 4)
    broken = new_worker(not_a_database)
    try:
        with pytest.raises(StoreError, match="not a database") as raised:
            await broken.run(values)
        assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)
    finally:
        await broken.close()


async def test_a_path_that_cannot_be_opened_is_a_store_error_at_once(tmp_path: Path) -> None:
    directory = new_worker(tmp_path)  # a directory, not a database file
    try:
        with pytest.raises(StoreError, match="unable to open") as raised:
            await directory.run(values)
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
    finally:
        await directory.close()


async def test_any_other_exception_passes_through_unchanged(worker: SqliteWorker) -> None:
    def refuse(connection: sqlite3.Connection) -> None:
        raise LookupError("the caller's own error")

    with pytest.raises(LookupError, match="the caller's own error"):
        await worker.run(refuse)


# -- transactions --------------------------------------------------------------------


async def test_a_write_transaction_that_raises_writes_nothing(worker: SqliteWorker) -> None:
    def half_then_fail(connection: sqlite3.Connection) -> None:
        with write_transaction(connection):
            connection.execute("INSERT INTO items (value) VALUES (1)")
            raise ValueError("second half refused")

    with pytest.raises(ValueError, match="second half refused"):
        await worker.run(half_then_fail)
    assert await worker.run(values) == []
    assert await worker.run(lambda connection: connection.in_transaction) is False


def test_a_failing_rollback_never_hides_the_error_that_caused_it(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "direct.db", autocommit=True)
    make_table(connection)

    def write_then_lose_the_connection() -> None:
        with write_transaction(connection):
            connection.execute("INSERT INTO items (value) VALUES (1)")
            connection.close()  # now both in_transaction and ROLLBACK fail
            raise ValueError("the real cause")

    with pytest.raises(ValueError, match="the real cause"):
        write_then_lose_the_connection()


async def test_a_read_transaction_reads_one_snapshot(worker: SqliteWorker, tmp_path: Path) -> None:
    other = sqlite3.connect(tmp_path / "worker.db", autocommit=True, check_same_thread=False)

    def read_twice_around_a_write(connection: sqlite3.Connection) -> tuple[list[int], list[int]]:
        with read_transaction(connection):
            first = values(connection)
            other.execute("INSERT INTO items (value) VALUES (7)")
            return first, values(connection)

    try:
        await worker.run(values)  # create the table
        assert await worker.run(read_twice_around_a_write) == ([], [])
        assert await worker.run(values) == [7]
    finally:
        other.close()


# -- close ---------------------------------------------------------------------------


async def test_close_waits_for_calls_already_made_then_closes_the_connection(
    worker: SqliteWorker,
) -> None:
    started = threading.Event()
    release = threading.Event()

    def slow(connection: sqlite3.Connection) -> sqlite3.Connection:
        started.set()
        assert release.wait(timeout=30)
        return connection

    call = asyncio.ensure_future(worker.run(slow))
    assert await asyncio.to_thread(started.wait, 30)
    closing = asyncio.ensure_future(worker.close())
    await asyncio.sleep(0)
    assert worker.closed
    assert not closing.done()
    release.set()
    connection = await call
    await closing
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        connection.total_changes  # noqa: B018 - reading it is the check


async def test_a_call_after_close_raises_closed_error_and_close_is_idempotent(
    worker: SqliteWorker,
) -> None:
    await worker.run(values)
    await worker.close()
    await worker.close()
    with pytest.raises(ClosedError, match="TestStore is closed"):
        await worker.run(values)


# -- id texts ---------------------------------------------------------------------


@given(st.lists(st.uuids(), min_size=2))
@example([UUID(int=0), UUID(int=(1 << 128) - 1)])
@example([UUID("0123456789abcdef0123456789abcdef"), UUID("fedcba98-7654-3210-fedc-ba9876543210")])
def test_uuid_texts_are_each_ids_own_text_in_order(ids: list[UUID]) -> None:
    assert uuid_texts(ids) == [str(each) for each in ids]


def test_uuid_texts_of_no_ids_or_one_id() -> None:
    assert uuid_texts([]) == []
    assert uuid_texts([UUID(int=255)]) == ["00000000-0000-0000-0000-0000000000ff"]
