"""The SQLite event log: the shared contract, plus files, other processes and crashes."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import sys
import textwrap
from typing import TYPE_CHECKING
from uuid import UUID, uuid4

import pytest

from redstring.domain.events import event_to_json
from redstring.domain.exceptions import StoreError
from redstring.events.adapters.sqlite import SqliteEventLog
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.ports.event_log import EventLog
from redstring.testing.event_log import (
    EntityEventReaderCompliance,
    EventLogCompliance,
    event_in,
    make_document_extracted,
    make_entities_merged,
    make_entity_deleted,
    make_merge_undone,
)
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity
from redstring.vector.adapters.sqlite import SqliteVectorStore
from tests.killing import kill_inside_second_batch

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

type OpenLog = Callable[..., SqliteEventLog]


@pytest.fixture
async def open_log(tmp_path: Path) -> AsyncIterator[OpenLog]:
    """Opens a log on `path` (`store.db` by default); all are closed after the test."""
    opened: list[SqliteEventLog] = []

    def open_(path: Path = tmp_path / "store.db") -> SqliteEventLog:
        opened.append(SqliteEventLog(path))
        return opened[-1]

    yield open_
    for log in opened:
        await log.close()


class TestSqliteEventLog(EventLogCompliance):
    @pytest.fixture(autouse=True)
    def _fresh_files(self, tmp_path: Path, open_log: OpenLog) -> None:
        files = (tmp_path / f"log-{n}.db" for n in itertools.count())
        self._open_next: Callable[[], SqliteEventLog] = lambda: open_log(next(files))

    def new_log(self) -> EventLog:
        return self._open_next()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(self.new_log(), EventLog)

    async def test_something_that_is_not_an_event_is_refused_and_nothing_recorded(self) -> None:
        log = self.new_log()
        with pytest.raises(ValueError, match=r"events\[1\]"):
            await log.append_many([event_in(TENANT), "not an event"])  # type: ignore[list-item]
        assert await log.last_sequence() == 0

    @pytest.mark.parametrize("bad", [True, 1.0, "1"])
    async def test_a_non_integer_after_is_refused(self, bad: object) -> None:
        log = self.new_log()
        with pytest.raises(ValueError, match="after"):
            await log.read(after=bad)  # type: ignore[arg-type]


# -- files -------------------------------------------------------------------


def test_the_constructor_and_closing_an_unused_log_touch_no_file(tmp_path: Path) -> None:
    log = SqliteEventLog(tmp_path / "store.db")
    asyncio.run(log.close())
    assert list(tmp_path.iterdir()) == []


async def test_events_survive_closing_and_reopening_with_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    first, second, theirs = event_in(TENANT), event_in(TENANT), event_in(OTHER_TENANT)
    async with SqliteEventLog(path) as log:
        assert await log.append(first) == 1
        assert await log.append_many([theirs, second]) == [2, 3]
    assert repr(log).endswith("store.db', closed)")

    async with SqliteEventLog(str(path)) as reopened:
        assert await reopened.last_sequence() == 3
        assert [(s.sequence, s.event) for s in await reopened.read()] == [
            (1, first),
            (2, theirs),
            (3, second),
        ]
        assert [s.sequence for s in await reopened.read(tenant_id=TENANT)] == [1, 3]
        with pytest.raises(ValueError, match=str(first.event_id)):
            await reopened.append(first)
        assert await reopened.append(event_in(TENANT)) == 4


async def test_the_log_shares_one_file_with_both_stores(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    entity = make_entity(name="Ada Lovelace")
    async with (
        SqliteEventLog(path) as log,
        SqliteGraphStore(path) as graph,
        SqliteVectorStore(path, dimension=2) as vectors,
    ):
        await log.append(event_in(TENANT))
        await graph.upsert_entity(entity)
        await vectors.upsert(entity.id, [1.0, 0.0], TENANT)
        assert await log.last_sequence() == 1
        assert await graph.get_entity(entity.id, TENANT) == entity
    with sqlite3.connect(path) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
        version = connection.execute(
            "SELECT value FROM events_meta WHERE name = 'schema_version'"
        ).fetchone()
    connection.close()
    assert {"events_log", "events_meta", "graph_entities", "vector_records"} <= tables
    assert version == ("1",)


async def test_a_file_of_a_newer_schema_is_refused_naming_the_version(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SqliteEventLog(path) as log:
        await log.last_sequence()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE events_meta SET value = '2' WHERE name = 'schema_version'")
    connection.close()
    async with SqliteEventLog(path) as reopened:
        with pytest.raises(StoreError, match=r"schema version 2 \(written by a newer redstring\)"):
            await reopened.read()


async def test_a_stored_event_it_cannot_read_is_a_store_error_naming_its_number(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    async with SqliteEventLog(path) as log:
        await log.append_many([event_in(TENANT), event_in(TENANT)])
    with sqlite3.connect(path) as connection:
        body = json.loads(connection.execute("SELECT body FROM events_log").fetchone()[0])
        body["version"] = 99
        connection.execute("UPDATE events_log SET body = ? WHERE sequence = 2", (json.dumps(body),))
    connection.close()
    async with SqliteEventLog(path) as reopened:
        with pytest.raises(StoreError, match="event 2 cannot be read") as raised:
            await reopened.read()
        assert isinstance(raised.value.__cause__, ValueError)
        assert [stored.sequence for stored in await reopened.read(after=2)] == []


async def test_a_batch_is_stored_as_its_json_one_row_per_event(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    events = [event_in(TENANT), event_in(OTHER_TENANT)]
    async with SqliteEventLog(path) as log:
        await log.append_many(events)
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT sequence, event_id, tenant_id, kind, version, body FROM events_log"
        ).fetchall()
    connection.close()
    assert rows == [
        (n, str(e.event_id), str(e.tenant_id), "document_extracted", 1, event_to_json(e))
        for n, e in enumerate(events, start=1)
    ]


async def test_more_events_than_one_statement_binds_append_in_one_batch(
    open_log: OpenLog,
) -> None:
    log = open_log()
    events = [event_in(TENANT) for _ in range(33_000)]
    assert (await log.append_many(events))[-1] == 33_000
    with pytest.raises(ValueError, match=str(events[-1].event_id)):
        await log.append_many([event_in(TENANT), events[-1]])
    assert await log.last_sequence() == 33_000


async def test_logs_appending_to_one_file_at_once_never_share_a_number(
    open_log: OpenLog,
) -> None:
    writers = [open_log() for _ in range(4)]
    batches = [[event_in(TENANT) for _ in range(5)] for _ in range(12)]
    numbers = await asyncio.gather(
        *(writers[n % len(writers)].append_many(batch) for n, batch in enumerate(batches))
    )
    assert sorted(itertools.chain.from_iterable(numbers)) == list(range(1, 61))
    for batch_numbers in numbers:
        assert batch_numbers == list(range(batch_numbers[0], batch_numbers[0] + 5))
    assert await writers[0].last_sequence() == 60


# -- other processes -----------------------------------------------------------

READER = """
import asyncio, json, sys
from uuid import UUID, uuid4
from redstring.domain.ids import TenantId
from redstring.events.adapters.sqlite import SqliteEventLog

async def main() -> None:
    async with SqliteEventLog(sys.argv[1]) as log:
        mine = await log.read(tenant_id=TenantId(UUID(sys.argv[2])))
        last = await log.last_sequence()
    print(json.dumps({"mine": [[s.sequence, str(s.event.event_id)] for s in mine], "last": last}))

asyncio.run(main())
"""


async def test_a_reader_in_another_process_sees_committed_appends(
    open_log: OpenLog, tmp_path: Path
) -> None:
    path = tmp_path / "store.db"
    writer = open_log(path)  # still open while the other process reads
    mine, theirs = event_in(TENANT), event_in(OTHER_TENANT)
    await writer.append_many([theirs, mine])

    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(READER),
        str(path),
        str(TENANT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, stderr.decode()
    assert json.loads(stdout) == {"mine": [[2, str(mine.event_id)]], "last": 2}


#: A process that appends `BATCHES` batches of `BATCH_SIZE` events, announcing each.
WRITER = """
import asyncio, sys
from datetime import UTC, datetime
from uuid import UUID, uuid4
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.events import DocumentExtracted
from redstring.domain.ids import EntityId, TenantId
from redstring.events.adapters.sqlite import SqliteEventLog

path, batches, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tenant = TenantId(UUID(sys.argv[4]))

def event(number: int, n: int) -> DocumentExtracted:
    entity = Entity(
        id=EntityId(UUID(int=n + 1)),
        tenant_id=tenant,
        name=f"batch {number} entity {n}",
        entity_type="marker",
        extraction_method=ExtractionMethod.MANUAL,
        confidence=1.0,
    )
    return DocumentExtracted(
        event_id=UUID(int=number * size + n + 1),
        tenant_id=tenant,
        source_id=f"batch-{number}",
        occurred_at=datetime(2024, 1, 1, tzinfo=UTC),
        domain="general",
        model="fake/canned-v1",
        entities=(entity,),
        relationships=(),
    )

async def main() -> None:
    async with SqliteEventLog(path) as log:
        await log.last_sequence()  # open the file first
        for number in range(batches):
            events = [event(number, n) for n in range(size)]
            print("writing", number, flush=True)
            await log.append_many(events)
            print("wrote", number, flush=True)

asyncio.run(main())
"""
BATCHES = 5
BATCH_SIZE = 4_000


def batch_counts(path: Path) -> list[int]:
    """How many events of each batch the file holds, read without redstring."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT sequence, event_id FROM events_log").fetchall()
    connection.close()
    counts = [0] * BATCHES
    for sequence, event_id in rows:
        number = (UUID(event_id).int - 1) // BATCH_SIZE
        assert sequence == UUID(event_id).int, "an event numbered out of its batch's order"
        counts[number] += 1
    return counts


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_a_process_killed_mid_batch_leaves_each_batch_whole_or_absent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    delay = await kill_inside_second_batch(
        WRITER, str(path), str(BATCHES), str(BATCH_SIZE), str(TENANT)
    )

    counts = batch_counts(path)
    assert counts[0] == BATCH_SIZE
    assert all(count in (BATCH_SIZE, 0) for count in counts), f"killed {delay:.3f}s in: {counts}"
    written = [count == BATCH_SIZE for count in counts]
    assert written == sorted(written, reverse=True), f"a later batch without an earlier: {counts}"
    async with SqliteEventLog(path) as log:
        assert await log.last_sequence() == sum(counts)
        assert len(await log.read()) == sum(counts)


class TestSqliteEntityEventReader(EntityEventReaderCompliance):
    @pytest.fixture(autouse=True)
    def _fresh_files(self, tmp_path: Path, open_log: OpenLog) -> None:
        files = (tmp_path / f"log-{n}.db" for n in itertools.count())
        self._open_next: Callable[[], SqliteEventLog] = lambda: open_log(next(files))

    def new_log(self) -> EventLog:
        return self._open_next()


async def test_a_file_written_before_the_entity_index_gains_it_filled(
    tmp_path: Path, open_log: OpenLog
) -> None:
    """The index is built from the stored events the first time a newer log opens the file."""
    a, b, c = make_entity(name="Ada"), make_entity(name="Ada L"), make_entity(name="Bob")
    merge = make_entities_merged(a, [b])
    undo = make_merge_undone(merge)
    deleted = make_entity_deleted(c.id)
    path = tmp_path / "old.db"
    async with SqliteEventLog(path) as log:
        await log.append_many([make_document_extracted([a, b, c]), merge, undo, deleted])
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE events_entities")
    connection.close()
    reopened = open_log(path)
    assert [s.event for s in await reopened.read_naming([b.id], tenant_id=TENANT)] == [merge, undo]
    assert [s.event for s in await reopened.read_naming([a.id, c.id], tenant_id=TENANT)] == [
        merge,
        undo,
        deleted,
    ]


async def test_more_ids_than_sqlite_binds_at_once_are_read_in_chunks(open_log: OpenLog) -> None:
    log = open_log()
    deletes = [make_entity_deleted(make_entity().id) for _ in range(3)]
    await log.append_many(deletes)
    many = [make_entity().id for _ in range(40_000)] + [deletes[2].entity_id]
    assert [s.event for s in await log.read_naming(many, tenant_id=TENANT)] == [deletes[2]]
    events = [uuid4() for _ in range(40_000)] + [deletes[0].event_id]
    assert [s.event for s in await log.read_events(events, tenant_id=TENANT)] == [deletes[0]]
