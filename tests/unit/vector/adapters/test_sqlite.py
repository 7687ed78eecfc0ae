"""The SQLite vector store: the shared contract, plus files, processes, crashes and caching."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sqlite3
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any
from uuid import UUID

import numpy as np
import pytest

from redstring.domain.exceptions import (
    ClosedError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StoreError,
)
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vector import Vector, VectorRecord
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorStore
from redstring.testing.factories import OTHER_TENANT, TENANT
from redstring.testing.vector_store import (
    DIMENSION,
    VectorStoreCompliance,
    basis,
    entity_id,
    towards,
)
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from redstring.domain.vector import VectorMatch

type Opener = Callable[..., SqliteVectorStore]


@pytest.fixture
def opened() -> Iterator[list[SqliteVectorStore]]:
    """Stores to close after the test, on a loop of their own (tests may run their own)."""
    stores: list[SqliteVectorStore] = []
    yield stores

    async def close_each() -> None:
        for store in stores:
            await store.close()

    with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
        runner.run(close_each())


@pytest.fixture
def open_store(opened: list[SqliteVectorStore]) -> Opener:
    """Open a store on a path, closed after the test."""

    def open_(path: Path, dimension: int = DIMENSION) -> SqliteVectorStore:
        store = SqliteVectorStore(path, dimension=dimension)
        opened.append(store)
        return store

    return open_


class TestSqliteVectorStore(VectorStoreCompliance):
    @pytest.fixture(autouse=True)
    def _fresh_file_per_store(self, tmp_path: Path, opened: list[SqliteVectorStore]) -> None:
        self._directory = tmp_path
        self._opened = opened

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        path = self._directory / f"vectors-{len(self._opened)}.db"
        store = SqliteVectorStore(path, dimension=dimension)
        self._opened.append(store)
        return store

    def test_it_satisfies_the_port_and_the_lifetime(self) -> None:
        store = self.new_store()
        assert isinstance(store, VectorStore)
        assert isinstance(store, AsyncClosable)


# -- construction and files --------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -3, True, 2.0])
def test_a_non_positive_or_non_integer_dimension_is_refused(bad: object, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dimension"):
        SqliteVectorStore(tmp_path / "vectors.db", dimension=bad)  # type: ignore[arg-type]


def test_the_constructor_and_closing_an_unused_store_touch_no_file(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "vectors.db", dimension=4)
    asyncio.run(store.close())
    assert list(tmp_path.iterdir()) == []


async def test_a_closed_store_refuses_to_work(open_store: Opener, tmp_path: Path) -> None:
    store = open_store(tmp_path / "vectors.db")
    await store.upsert(entity_id(1), basis(0), TENANT)
    await store.close()
    with pytest.raises(ClosedError, match=r"vectors\.db'\) is closed"):
        await store.get(entity_id(1), TENANT)


async def test_vectors_and_metadata_survive_closing_and_reopening(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    async with SqliteVectorStore(path, dimension=DIMENSION) as store:
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "org"})
        await store.upsert_many(
            [
                VectorRecord(
                    entity_id=entity_id(2),
                    tenant_id=TENANT,
                    vector=towards(1, 0.5),
                    metadata={"entity_type": "person", "aliases": ["Ada", "A. L."]},
                ),
                VectorRecord(entity_id=entity_id(1), tenant_id=OTHER_TENANT, vector=basis(3)),
            ]
        )
    reopened = open_store(path)
    record = await reopened.get(entity_id(2), TENANT)
    assert record is not None
    assert record.vector == pytest.approx(towards(1, 0.5), rel=1e-6)
    assert record.metadata == {"entity_type": "person", "aliases": ["Ada", "A. L."]}
    matches = await reopened.search(basis(0), TENANT, k=5, entity_types=["person", "org"])
    assert [match.entity_id for match in matches] == [entity_id(1), entity_id(2)]
    other = await reopened.get(entity_id(1), OTHER_TENANT)
    assert other is not None
    assert other.vector == basis(3)


async def test_the_file_remembers_its_embedding_model_and_refuses_another(
    tmp_path: Path,
) -> None:
    """Vectors of two models share no space; mixing them must fail loudly."""
    path = tmp_path / "vectors.db"
    assert await SqliteVectorStore.stored_settings(path) is None
    async with SqliteVectorStore(path, dimension=8, model="acme/embed-1") as store:
        await store.upsert(entity_id(1), basis(0, dimension=8), TENANT)
    assert await SqliteVectorStore.stored_settings(path) == (8, "acme/embed-1")
    async with SqliteVectorStore(path, dimension=8, model="acme/embed-2") as other:
        with pytest.raises(EmbeddingModelMismatchError) as raised:
            await other.get(entity_id(1), TENANT)
    assert (raised.value.expected, raised.value.actual) == ("acme/embed-1", "acme/embed-2")
    async with SqliteVectorStore(path, dimension=8) as unnamed:
        assert await unnamed.get(entity_id(1), TENANT) is not None


async def test_a_model_named_later_is_recorded_for_the_next_store(tmp_path: Path) -> None:
    path = tmp_path / "vectors.db"
    async with SqliteVectorStore(path, dimension=8) as store:
        await store.upsert(entity_id(1), basis(0, dimension=8), TENANT)
    assert await SqliteVectorStore.stored_settings(path) == (8, None)
    async with SqliteVectorStore(path, dimension=8, model="acme/embed-1") as store:
        await store.get(entity_id(1), TENANT)
    assert await SqliteVectorStore.stored_settings(path) == (8, "acme/embed-1")


async def test_stored_settings_of_a_file_without_vectors_is_none(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    path.write_bytes(b"")
    assert await SqliteVectorStore.stored_settings(path) is None
    with pytest.raises(ValueError, match="blank"):
        SqliteVectorStore(path, dimension=8, model="  ")


async def test_reopening_with_another_dimension_names_both(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    async with SqliteVectorStore(path, dimension=8) as store:
        await store.upsert(entity_id(1), basis(0, dimension=8), TENANT)
    wrong = open_store(path, dimension=16)
    with pytest.raises(DimensionMismatchError) as raised:
        await wrong.search(basis(0, dimension=16), TENANT)
    assert (raised.value.expected, raised.value.actual) == (8, 16)
    with pytest.raises(DimensionMismatchError):
        await wrong.get(entity_id(1), TENANT)


async def test_a_file_from_a_newer_schema_is_refused(open_store: Opener, tmp_path: Path) -> None:
    path = tmp_path / "vectors.db"
    async with SqliteVectorStore(path, dimension=4) as store:
        await store.get(entity_id(1), TENANT)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE vector_meta SET value = 99 WHERE key = 'schema_version'")
    connection.close()
    with pytest.raises(StoreError, match="schema version 99"):
        await open_store(path, dimension=4).get(entity_id(1), TENANT)


async def test_the_file_is_shared_with_other_tables_it_leaves_alone(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "shared.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE graph_entities (id TEXT PRIMARY KEY)")
        connection.execute("INSERT INTO graph_entities VALUES ('kept')")
    connection.close()
    store = open_store(path)
    await store.upsert(entity_id(1), basis(0), TENANT)
    assert await store.delete_by_tenant(TENANT) == 1
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT id FROM graph_entities").fetchall() == [("kept",)]
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    connection.close()


async def test_a_batch_failing_partway_through_the_write_leaves_nothing(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "vectors.db")
    good = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(0))
    # Built without validation, so only the database refuses it, after `good` is written.
    unstorable = VectorRecord.model_construct(
        entity_id=entity_id(2),
        tenant_id=TENANT,
        vector=Vector(basis(1)),
        metadata={"name": "\ud800"},
    )
    with pytest.raises(ValueError, match="surrogate"):
        await store.upsert_many([good, unstorable])
    assert await store.get(entity_id(1), TENANT) is None
    assert await store.search(basis(0), TENANT) == []


async def test_metadata_that_is_not_json_is_refused_before_writing(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "vectors.db")
    good = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(0))
    odd = VectorRecord.model_construct(
        entity_id=entity_id(2), tenant_id=TENANT, vector=Vector(basis(1)), metadata={"tags": {"a"}}
    )
    with pytest.raises(ValueError, match=r"records\[1\]\.metadata"):
        await store.upsert_many([good, odd])
    assert await store.get(entity_id(1), TENANT) is None


async def test_a_stored_vector_of_the_wrong_size_is_reported_as_damage(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    store = open_store(path, dimension=4)
    await store.upsert(entity_id(1), [1.0, 0.0, 0.0, 0.0], TENANT)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE vector_records SET vector = zeroblob(12)")
    connection.close()
    with pytest.raises(StoreError, match="damaged"):
        await store.get(entity_id(1), TENANT)
    with pytest.raises(StoreError, match="damaged"):
        await store.search([1.0, 0.0, 0.0, 0.0], TENANT)


async def test_a_driver_failure_is_a_store_error_naming_the_path(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path)  # a directory, not a database file
    with pytest.raises(StoreError, match=re.escape(str(tmp_path))) as raised:
        await store.get(entity_id(1), TENANT)
    assert isinstance(raised.value.__cause__, sqlite3.Error)


# -- caching ---------------------------------------------------------------------------


async def test_a_search_sees_this_stores_own_writes_after_a_search(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "vectors.db")
    await store.upsert(entity_id(1), towards(1, 1.0), TENANT)
    await store.upsert(entity_id(1), towards(1, 1.0), OTHER_TENANT)
    assert [m.entity_id for m in await store.search(basis(0), TENANT)] == [entity_id(1)]
    assert len(await store.search(basis(0), OTHER_TENANT)) == 1

    await store.upsert(entity_id(2), basis(0), TENANT)
    assert [m.entity_id for m in await store.search(basis(0), TENANT)] == [
        entity_id(2),
        entity_id(1),
    ]
    await store.upsert_many(
        [VectorRecord(entity_id=entity_id(3), tenant_id=TENANT, vector=basis(0, scale=-1.0))]
    )
    assert len(await store.search(basis(0), TENANT)) == 3
    assert await store.delete(entity_id(2), TENANT)
    assert [m.entity_id for m in await store.search(basis(0), TENANT)] == [
        entity_id(1),
        entity_id(3),
    ]
    assert await store.delete_by_tenant(TENANT) == 2
    assert await store.search(basis(0), TENANT) == []
    assert len(await store.search(basis(0), OTHER_TENANT)) == 1


async def test_concurrent_calls_on_one_store_all_land(open_store: Opener, tmp_path: Path) -> None:
    store = open_store(tmp_path / "vectors.db")
    await asyncio.gather(
        *(store.upsert(entity_id(n), towards(n, 0.01 * n), TENANT) for n in range(1, 41)),
        *(store.search(basis(0), TENANT, k=3) for _ in range(10)),
    )
    matches = await store.search(basis(0), TENANT, k=100)
    assert [match.entity_id for match in matches] == [entity_id(n) for n in range(1, 41)]


# -- other processes ------------------------------------------------------------------

#: Opens the store at argv[1] (dimension argv[2]) and runs one command.
PROCESS = """
import asyncio, json, sys
from uuid import UUID
from redstring.vector.adapters.sqlite import SqliteVectorStore

path, dimension, command, argument = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

async def main() -> None:
    async with SqliteVectorStore(path, dimension=dimension) as store:
        if command == "search":
            tenant, vector = json.loads(argument)
            matches = await store.search(vector, UUID(tenant), k=10)
            print(json.dumps([[str(m.entity_id), m.score, m.metadata] for m in matches]))
        elif command == "upsert":
            tenant, entity, vector, metadata = json.loads(argument)
            await store.upsert(UUID(entity), vector, UUID(tenant), metadata=metadata)
        elif command == "delete":
            tenant, entity = json.loads(argument)
            await store.delete(UUID(entity), UUID(tenant))

asyncio.run(main())
"""


async def in_another_process(path: Path, dimension: int, command: str, *argument: Any) -> str:
    """Run one store command in a fresh interpreter; its standard output."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(PROCESS),
        str(path),
        str(dimension),
        command,
        json.dumps([str(each) if isinstance(each, UUID) else each for each in argument]),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, stderr.decode()
    return stdout.decode()


async def test_a_reader_in_another_process_sees_committed_writes(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    writer = open_store(path, dimension=4)  # left open while the other process reads
    await writer.upsert(entity_id(1), [1.0, 0.0, 0.0, 0.0], TENANT, metadata={"entity_type": "a"})
    await writer.upsert(entity_id(2), [0.0, 1.0, 0.0, 0.0], TENANT)
    await writer.upsert(entity_id(3), [1.0, 0.0, 0.0, 0.0], OTHER_TENANT)

    seen = await in_another_process(path, 4, "search", TENANT, [1.0, 0.0, 0.0, 0.0])
    assert json.loads(seen) == [
        [str(entity_id(1)), 1.0, {"entity_type": "a"}],
        [str(entity_id(2)), 0.5, {}],
    ]


async def test_a_long_lived_reader_sees_another_processs_later_writes(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    reader = open_store(path, dimension=4)
    await reader.upsert(entity_id(1), [1.0, 1.0, 0.0, 0.0], TENANT)
    await reader.upsert(entity_id(1), [1.0, 0.0, 0.0, 0.0], OTHER_TENANT)
    assert [m.entity_id for m in await reader.search([1.0, 0.0, 0.0, 0.0], TENANT)] == [
        entity_id(1)
    ]
    assert len(await reader.search([1.0, 0.0, 0.0, 0.0], OTHER_TENANT)) == 1

    await in_another_process(
        path, 4, "upsert", TENANT, entity_id(2), [1.0, 0.0, 0.0, 0.0], {"entity_type": "new"}
    )
    matches = await reader.search([1.0, 0.0, 0.0, 0.0], TENANT)
    assert [(m.entity_id, m.metadata) for m in matches] == [
        (entity_id(2), {"entity_type": "new"}),
        (entity_id(1), {}),
    ]
    assert len(await reader.search([1.0, 0.0, 0.0, 0.0], OTHER_TENANT)) == 1

    await in_another_process(path, 4, "delete", TENANT, entity_id(2))
    matches = await reader.search([1.0, 0.0, 0.0, 0.0], TENANT)
    assert [m.entity_id for m in matches] == [entity_id(1)]


#: Writes batches of `size` records to the store at argv[1], announcing each.
BATCH_WRITER = """
import asyncio, sys
from uuid import UUID
from redstring.domain.vector import VectorRecord
from redstring.vector.adapters.sqlite import SqliteVectorStore

path, batches, size, tenant = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), UUID(sys.argv[4])

async def main() -> None:
    async with SqliteVectorStore(path, dimension=8) as store:
        await store.get(UUID(int=0), tenant)  # open the file before the first batch
        for number in range(batches):
            records = [
                VectorRecord(
                    entity_id=UUID(int=number * size + n + 1),
                    tenant_id=tenant,
                    vector=[1.0, float(n), 0.5, 0.0, 0.0, 0.0, 0.0, float(number)],
                    metadata={"batch": number},
                )
                for n in range(size)
            ]
            print("started", number, flush=True)
            await store.upsert_many(records)
            print("finished", number, flush=True)

asyncio.run(main())
"""
BATCHES = 3
BATCH_SIZE = 20_000


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.9])
async def test_a_process_killed_mid_batch_leaves_each_batch_whole_or_absent(
    open_store: Opener, tmp_path: Path, fraction: float
) -> None:
    path = tmp_path / "vectors.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(BATCH_WRITER),
        str(path),
        str(BATCHES),
        str(BATCH_SIZE),
        str(TENANT),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    stdout = process.stdout

    async def reported(expected: str) -> float:
        line = await asyncio.wait_for(stdout.readline(), timeout=60)
        assert line.decode().strip() == expected
        return time.perf_counter()

    # Time one whole batch, then kill the process part of the way into the next.
    started = await reported("started 0")
    batch_seconds = await reported("finished 0") - started
    await reported("started 1")
    await asyncio.sleep(fraction * batch_seconds)
    process.send_signal(signal.SIGKILL)
    assert await process.wait() == -signal.SIGKILL

    store = open_store(path, dimension=8)
    matches = await store.search([1.0] * 8, TENANT, k=BATCHES * BATCH_SIZE)
    counts = [0] * BATCHES
    for match in matches:
        counts[match.metadata["batch"]] += 1
    assert counts[0] == BATCH_SIZE
    assert all(count in (0, BATCH_SIZE) for count in counts), f"killed at {fraction}: {counts}"
    assert counts == sorted(counts, reverse=True)


# -- the same answers as the reference ---------------------------------------------------


def dataset(rng: np.random.Generator, count: int, dimension: int) -> list[VectorRecord]:
    """Records with ties, duplicates, a shared id across tenants and awkward types."""
    grid = rng.integers(-2, 3, size=(count, dimension)).astype(float)
    grid[grid.any(axis=1) == 0, 0] = 1.0
    grid[count // 2 :: 7] = grid[0]  # exact duplicates of one vector
    types: list[Any] = ["person", "org", "place", 7, None]
    records = []
    for n, row in enumerate(grid.tolist()):
        entity_type = types[n % len(types)]
        metadata = {} if entity_type is None else {"entity_type": entity_type, "n": n}
        tenant = OTHER_TENANT if n % 5 == 4 else TENANT
        records.append(
            VectorRecord(
                entity_id=EntityId(UUID(int=int(rng.integers(1, 40)) if n % 9 == 0 else n + 100)),
                tenant_id=tenant,
                vector=row,
                metadata=metadata,
            )
        )
    return records


def answers(matches: list[VectorMatch]) -> list[tuple[EntityId, float, dict[str, Any]]]:
    return [(match.entity_id, match.score, match.metadata) for match in matches]


async def test_search_answers_exactly_what_the_in_memory_store_answers(
    open_store: Opener, tmp_path: Path
) -> None:
    rng = np.random.default_rng(20240611)
    dimension = 12
    reference = InMemoryVectorStore(dimension=dimension)
    store = open_store(tmp_path / "vectors.db", dimension=dimension)
    for part in np.array_split(np.arange(600), 3):
        records = dataset(rng, len(part), dimension)
        await reference.upsert_many(records)
        await store.upsert_many(records)
    for removed in (EntityId(UUID(int=105)), EntityId(UUID(int=140))):
        assert await reference.delete(removed, TENANT) == await store.delete(removed, TENANT)

    queries = rng.integers(-2, 3, size=(12, dimension)).astype(float)
    queries[queries.any(axis=1) == 0, 0] = 1.0
    filters: list[dict[str, Any]] = [
        {"k": 1},
        {"k": 10},
        {"k": 10_000},
        {"k": 5, "entity_types": ["person"]},
        {"k": 20, "entity_types": ["org", "place", "absent"]},
        {"k": 20, "entity_types": ["7"]},
        {"k": 15, "min_score": 0.7},
        {"k": 15, "min_score": 0.7, "entity_types": ["org"]},
    ]
    for tenant in (TENANT, OTHER_TENANT, TenantId(UUID(int=3))):
        for query in [*queries.tolist(), basis(0, dimension)]:
            for arguments in filters:
                expected = await reference.search(query, tenant, **arguments)
                assert answers(await store.search(query, tenant, **arguments)) == answers(
                    expected
                ), (tenant, query, arguments)


async def test_stored_settings_of_a_file_that_is_not_sqlite_is_a_store_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is not a database, just some text " * 100)
    with pytest.raises(StoreError, match=r"notes\.db"):
        await SqliteVectorStore.stored_settings(path)


# -- the cache of searched tenants ---------------------------------------------------


def _ids(matches: list[VectorMatch]) -> list[EntityId]:
    return [match.entity_id for match in matches]


@pytest.mark.parametrize("cached_tenants", [1, 2])
async def test_writes_applied_to_the_cached_tenant_answer_as_memory_does(
    opened: list[SqliteVectorStore], tmp_path: Path, cached_tenants: int
) -> None:
    store = SqliteVectorStore(
        tmp_path / "vectors.db", dimension=DIMENSION, cached_tenants=cached_tenants
    )
    opened.append(store)
    memory = InMemoryVectorStore(dimension=DIMENSION)
    rng = np.random.default_rng(5)
    steps: list[tuple[str, int, TenantId]] = [
        (action, int(rng.integers(1, 12)), tenant)
        for action, tenant in zip(
            rng.choice(["upsert", "upsert", "batch", "delete"], 120),
            rng.choice([TENANT, OTHER_TENANT], 120),
            strict=True,
        )
    ]
    for step, (action, n, tenant) in enumerate(steps):
        vector = rng.standard_normal(DIMENSION).astype(np.float32)
        metadata = {"entity_type": "abc"[n % 3], "step": step}
        for each in (store, memory):
            if action == "upsert":
                await each.upsert(entity_id(n), vector, tenant, metadata=metadata)
            elif action == "batch":
                records = [
                    VectorRecord(entity_id=entity_id(n), tenant_id=tenant, vector=vector),
                    VectorRecord(
                        entity_id=entity_id(n + 1),
                        tenant_id=tenant,
                        vector=-vector,
                        metadata=metadata,
                    ),
                ]
                await each.upsert_many(records)
            else:
                assert await each.delete(entity_id(n), tenant) in (True, False)
        query = rng.standard_normal(DIMENSION)
        for searched in (TENANT, OTHER_TENANT):
            for types in (None, ["a", "b"]):
                assert await store.search(
                    query, searched, k=5, entity_types=types
                ) == await memory.search(query, searched, k=5, entity_types=types)


async def test_a_write_by_another_connection_before_this_stores_write_is_not_lost(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    mine, theirs = open_store(path), open_store(path)
    await mine.upsert(entity_id(1), basis(1), TENANT)
    assert _ids(await mine.search(basis(0), TENANT)) == [entity_id(1)]
    # Theirs commits; mine writes the same tenant before searching again, so
    # applying only its own write to its cached rows would lose theirs.
    await theirs.upsert(entity_id(2), towards(1, 0.5), TENANT)
    await mine.upsert(entity_id(3), towards(1, 0.1), TENANT)
    assert _ids(await mine.search(basis(0), TENANT)) == [entity_id(3), entity_id(2), entity_id(1)]
    await theirs.delete(entity_id(3), TENANT)
    await mine.delete(entity_id(1), TENANT)
    assert _ids(await mine.search(basis(0), TENANT)) == [entity_id(2)]


async def test_a_refused_batch_leaves_the_cached_tenant_as_it_was(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "vectors.db")
    await store.upsert(entity_id(1), basis(0), TENANT)
    assert _ids(await store.search(basis(0), TENANT)) == [entity_id(1)]
    good = VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=basis(0))
    bad = VectorRecord(entity_id=entity_id(3), tenant_id=TENANT, vector=[1e300] * DIMENSION)
    with pytest.raises(ValueError, match=r"records\[1\]"):
        await store.upsert_many([good, bad])
    assert _ids(await store.search(basis(0), TENANT)) == [entity_id(1)]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "8"])
def test_a_non_positive_or_non_integer_cache_size_is_refused(bad: object, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cached_tenants"):
        SqliteVectorStore(tmp_path / "v.db", dimension=DIMENSION, cached_tenants=bad)  # type: ignore[arg-type]


async def test_a_write_failing_in_the_database_leaves_the_cached_tenant_unchanged(
    open_store: Opener, tmp_path: Path
) -> None:
    path = tmp_path / "vectors.db"
    store = open_store(path)
    await store.upsert(entity_id(1), basis(0), TENANT)
    assert _ids(await store.search(basis(0), TENANT)) == [entity_id(1)]
    with sqlite3.connect(path) as other:
        other.execute("ALTER TABLE vector_tenants RENAME TO moved_away")
    with pytest.raises(StoreError, match="vector_tenants"):
        await store.upsert(entity_id(2), basis(0), TENANT)
    with sqlite3.connect(path) as other:
        other.execute("ALTER TABLE moved_away RENAME TO vector_tenants")
    assert _ids(await store.search(basis(0), TENANT)) == [entity_id(1)]


async def test_metadata_sqlite_could_not_read_back_is_refused(
    open_store: Opener, tmp_path: Path
) -> None:
    store = open_store(tmp_path / "vectors.db")
    huge = {"entity_type": "person", "count": 10**5000}
    with pytest.raises(ValueError, match=r"^metadata\['count'\] is an integer outside"):
        await store.upsert(entity_id(1), basis(0), TENANT, metadata=huge)
    # The record refuses it too; `model_copy` skips that check, the store does not.
    record = VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=basis(0))
    record = record.model_copy(update={"metadata": huge})
    with pytest.raises(ValueError, match=r"records\[0\]\.metadata"):
        await store.upsert_many([record])
    assert await store.search(basis(0), TENANT) == []


async def test_equal_metadata_of_other_types_is_stored_as_each_records_own(
    open_store: Opener, tmp_path: Path
) -> None:
    # Equal in Python (`True == 1 == 1.0`, `0.0 == -0.0`), different in JSON.
    values: list[object] = [1, True, 1.0, 1, int("1"), 0.0, -0.0, False, 0, None, "1"]
    records = [
        VectorRecord(
            entity_id=entity_id(index + 1),
            tenant_id=TENANT,
            vector=basis(index % DIMENSION),
            metadata={"entity_type": "person", "n": value},
        )
        for index, value in enumerate(values)
    ]
    store = open_store(tmp_path / "vectors.db")
    await store.upsert_many(records)
    for index, value in enumerate(values):
        got = await store.get(entity_id(index + 1), TENANT)
        assert got is not None
        stored = got.metadata["n"]
        assert (type(stored), repr(stored)) == (type(value), repr(value)), index


class _LooseName(str):
    """A key equal to every string, hashing as `"entity_type"` does."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("entity_type")


async def test_metadata_keyed_by_a_string_subclass_is_stored_under_its_own_text(
    open_store: Opener, tmp_path: Path
) -> None:
    many = {f"key{index}": index for index in range(12)}
    metadata: list[dict[str, Any]] = [
        {"entity_type": "person"},
        {_LooseName("kind"): "person"},
        many,
        dict(many),
    ]
    records = [
        VectorRecord.model_construct(
            entity_id=entity_id(index + 1), tenant_id=TENANT, vector=Vector(basis(0)), metadata=each
        )
        for index, each in enumerate(metadata)
    ]
    store = open_store(tmp_path / "vectors.db")
    await store.upsert_many(records)
    stored = [await store.get(entity_id(index + 1), TENANT) for index in range(len(records))]
    assert [None if got is None else got.metadata for got in stored] == [
        {"entity_type": "person"},
        {"kind": "person"},
        many,
        many,
    ]
    assert [str(key) for key in stored[1].metadata] == ["kind"]  # type: ignore[union-attr]


async def test_a_bad_metadata_value_among_equal_good_ones_refuses_the_whole_batch(
    open_store: Opener, tmp_path: Path
) -> None:
    good = {"entity_type": "per" + "son"}
    metadata: list[dict[str, Any]] = [dict(good), dict(good), dict(good), dict(good)]
    metadata[2] = {"entity_type": "per\x00son"}
    metadata.append({"entity_type": "per\x00son"})
    records = [
        VectorRecord.model_construct(
            entity_id=entity_id(index + 1),
            tenant_id=TENANT,
            vector=Vector(basis(index % DIMENSION)),
            metadata=each,
        )
        for index, each in enumerate(metadata)
    ]
    store = open_store(tmp_path / "vectors.db")
    with pytest.raises(
        ValueError, match=r"^records\[2\]\.metadata\['entity_type'\] contains a NUL"
    ):
        await store.upsert_many(records)
    assert await store.count_by_tenant() == {}


async def test_a_batch_mixing_float32_arrays_and_float_lists_stores_each_at_float32(
    open_store: Opener, tmp_path: Path
) -> None:
    as_array = np.linspace(0.1, 0.9, DIMENSION, dtype=np.float32)
    as_list = [1 / (index + 3) for index in range(DIMENSION)]
    records = [
        VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=as_list),
        VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=as_array),
        VectorRecord(entity_id=entity_id(3), tenant_id=TENANT, vector=as_array.astype(np.float64)),
    ]
    store = open_store(tmp_path / "vectors.db")
    await store.upsert_many(records)
    expected = [np.asarray(as_list, dtype=np.float32), as_array, as_array]
    for index, vector in enumerate(expected):
        got = await store.get(entity_id(index + 1), TENANT)
        assert got is not None
        assert np.asarray(got.vector).tobytes() == np.asarray(vector, dtype=np.float32).tobytes()


# -- read-only, and counting ------------------------------------------------------


async def test_read_only_searches_what_was_written_and_refuses_every_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "vectors.db"
    async with SqliteVectorStore(path, dimension=DIMENSION, model="m") as store:
        await store.upsert(entity_id(1), basis(0), TENANT)
    before = path.read_bytes()
    async with SqliteVectorStore(path, dimension=DIMENSION, read_only=True) as reader:
        [match] = await reader.search(basis(0), TENANT)
        assert match.entity_id == entity_id(1)
        with pytest.raises(StoreError, match="readonly"):
            await reader.upsert(entity_id(2), basis(1), TENANT)
    async with SqliteVectorStore(path, dimension=DIMENSION, model="m", read_only=True) as reader:
        assert await reader.count_by_tenant() == {TENANT: 1}
    assert path.read_bytes() == before


async def test_read_only_refuses_a_missing_file_or_one_without_vectors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    async with SqliteVectorStore(missing, dimension=DIMENSION, read_only=True) as reader:
        with pytest.raises(StoreError, match="no such file"):
            await reader.count_by_tenant()
    assert not missing.exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()
    async with SqliteVectorStore(other, dimension=DIMENSION, read_only=True) as reader:
        with pytest.raises(StoreError, match="holds no redstring vectors"):
            await reader.count_by_tenant()


async def test_count_by_tenant_counts_vectors_per_tenant(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.db", dimension=DIMENSION) as store:
        assert await store.count_by_tenant() == {}
        await store.upsert(entity_id(1), basis(0), TENANT)
        await store.upsert(entity_id(2), basis(1), TENANT)
        await store.upsert(entity_id(1), basis(0), OTHER_TENANT)
        assert await store.count_by_tenant() == {TENANT: 2, OTHER_TENANT: 1}
