"""The SQLite graph store: the shared contract, plus files, processes and crashes."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sqlite3
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
from pydantic import ValidationError

from redstring.domain.blocking import prefix_key, query_blocking_keys
from redstring.domain.entity import Entity
from redstring.domain.exceptions import ClosedError, StoreError
from redstring.domain.names import entity_name_units
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import MAX_POSTING_SEGMENTS, SqliteGraphStore
from redstring.ports.graph_store import GraphStore
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.graph_store import GraphStoreCompliance, entity_id
from tests.killing import kill_inside_second_batch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from redstring.domain.ids import TenantId

#: More `?` parameters than one SQLite statement binds by default (32,766).
OVER_PARAMETER_LIMIT = 40_000


def close_all(stores: list[SqliteGraphStore]) -> None:
    """Close every store on a private event loop, leaving the thread's loop alone."""
    loop = asyncio.new_event_loop()
    try:
        for store in stores:
            loop.run_until_complete(store.close())
    finally:
        loop.close()


type OpenStore = Callable[..., SqliteGraphStore]


@pytest.fixture
def open_store(tmp_path: Path) -> Iterator[OpenStore]:
    """Opens a store on `path` (`graph.db` by default); all are closed after the test."""
    opened: list[SqliteGraphStore] = []

    def open_(path: Path = tmp_path / "graph.db") -> SqliteGraphStore:
        opened.append(SqliteGraphStore(path))
        return opened[-1]

    yield open_
    close_all(opened)


class TestSqliteGraphStore(GraphStoreCompliance):
    @pytest.fixture(autouse=True)
    def _fresh_files(self, tmp_path: Path, open_store: OpenStore) -> None:
        files = (tmp_path / f"graph-{n}.db" for n in itertools.count())
        self._open_next: Callable[[], SqliteGraphStore] = lambda: open_store(next(files))

    def new_store(self) -> GraphStore:
        return self._open_next()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(self.new_store(), GraphStore)


# -- files -------------------------------------------------------------------


def test_the_constructor_touches_no_file(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "graph.db")
    assert list(tmp_path.iterdir()) == []
    close_all([store])
    assert list(tmp_path.iterdir()) == []


async def test_entities_keys_and_relationships_survive_closing_and_reopening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    ada = make_entity(id=entity_id(1), name="Ada Lovelace", properties={"born": 1815})
    charles = make_entity(id=entity_id(2), name="Charles Babbage")
    theirs = make_entity(id=entity_id(1), name="Someone Else", tenant_id=OTHER_TENANT)
    knows = make_relationship(ada, charles, relationship_type="knows")
    async with SqliteGraphStore(path) as store:
        await store.upsert_entities([ada, charles, theirs])
        await store.upsert_relationship(knows)

    async with SqliteGraphStore(str(path)) as reopened:
        assert await reopened.get_entity(ada.id, TENANT) == ada
        assert await reopened.get_entity(ada.id, OTHER_TENANT) == theirs
        assert await reopened.find_by_blocking_key(prefix_key(charles), TENANT) == [charles]
        assert await reopened.find_entities(TENANT, name="ADA  lovelace") == [ada]
        assert await reopened.get_relationships(charles.id, TENANT) == [knows]
        assert await reopened.neighbors(ada.id, TENANT) == [charles]


async def test_a_newer_schema_version_in_the_file_is_refused_with_a_clear_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(make_entity())
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE graph_meta SET value = '99' WHERE name = 'schema_version'")
    connection.close()

    async with SqliteGraphStore(path) as newer:
        with pytest.raises(StoreError, match=r"graph\.db.*version 99.*newer.*only version 3"):
            await newer.get_entity(entity_id(1), TENANT)


#: How versions 1 and 2 kept blocking keys, and version 2 name units: a row each.
OLD_INDEX = """CREATE TABLE graph_{table} (
    tenant_id TEXT NOT NULL,
    {term} TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    entity_row INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, {term}, entity_id)
) WITHOUT ROWID"""


def downgrade(path: Path, version: int) -> None:
    """Rewrite the indexes the way `version` kept them: keys, and for 2 units, a row each."""
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE graph_name_postings")
        connection.execute("DROP TABLE graph_key_postings")
        connection.execute(OLD_INDEX.format(table="entity_keys", term="key"))
        if version == 2:
            connection.execute(OLD_INDEX.format(table="name_units", term="unit"))
        for tenant, entity_id, row, body in connection.execute(
            "SELECT tenant_id, id, row, body FROM graph_entities"
        ).fetchall():
            entity = Entity.model_validate_json(body)
            connection.executemany(
                "INSERT INTO graph_entity_keys VALUES (?, ?, ?, ?)",
                [(tenant, key, entity_id, row) for key in entity.blocking_keys or ()],
            )
            if version == 2:
                connection.executemany(
                    "INSERT INTO graph_name_units VALUES (?, ?, ?, ?)",
                    [(tenant, unit, entity_id, row) for unit in entity_name_units(entity)],
                )
        connection.execute(
            "UPDATE graph_meta SET value = ? WHERE name = 'schema_version'", (str(version),)
        )
    connection.close()


@pytest.mark.parametrize("version", [1, 2])
async def test_an_older_file_opens_and_gets_its_name_index_rebuilt(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "graph.db"
    ada = make_entity(id=entity_id(1), name="Ada Lovelace", properties={"aliases": ["Countess"]})
    theirs = make_entity(id=entity_id(1), name="Ada Byron", tenant_id=OTHER_TENANT)
    async with SqliteGraphStore(path) as store:
        await store.upsert_entities([ada, theirs])
    downgrade(path, version)

    async with SqliteGraphStore(path) as migrated:
        assert await migrated.find_name_candidates("countess", TENANT) == [ada]
        assert await migrated.find_name_candidates("Byron", TENANT) == []
        assert await migrated.find_name_candidates("Byron", OTHER_TENANT) == [theirs]
        assert await migrated.find_by_blocking_key(prefix_key(ada), TENANT) == [ada]
        babbage = make_entity(id=entity_id(2), name="Charles Babbage")
        await migrated.upsert_entity(babbage)
        assert await migrated.find_name_candidates("Babbage", TENANT) == [babbage]
    with sqlite3.connect(path) as connection:
        [(stored,)] = connection.execute(
            "SELECT value FROM graph_meta WHERE name = 'schema_version'"
        ).fetchall()
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    connection.close()
    assert stored == "3"
    assert not tables & {"graph_name_units", "graph_entity_keys"}


async def test_it_shares_a_file_with_other_tables_and_leaves_them_alone(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE vectors (entity_id TEXT, tenant_id TEXT)")
        connection.execute("INSERT INTO vectors VALUES ('e', ?)", (str(TENANT),))
        connection.execute("PRAGMA user_version = 7")
    connection.close()

    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(make_entity())
        assert await store.delete_by_tenant(TENANT) == 1

    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM vectors").fetchone() == (1,)
        assert connection.execute("PRAGMA user_version").fetchone() == (7,)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    connection.close()


async def test_a_closed_store_raises_closed_error_naming_its_path(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "graph.db")
    await store.upsert_entity(make_entity())
    assert repr(store).endswith("graph.db', open)")
    await store.close()
    assert repr(store).endswith("graph.db', closed)")
    await store.close()
    with pytest.raises(ClosedError, match=r"graph\.db'\) is closed"):
        await store.get_entity(entity_id(1), TENANT)


async def test_a_database_failure_is_a_runtime_error_naming_the_path(tmp_path: Path) -> None:
    async with SqliteGraphStore(tmp_path) as store:  # a directory, not a database file
        with pytest.raises(StoreError, match=str(tmp_path)) as raised:
            await store.get_entity(entity_id(1), TENANT)
    assert isinstance(raised.value.__cause__, sqlite3.Error)


# -- edges of the backend ------------------------------------------------------


async def test_more_keys_and_ids_than_one_statement_binds_are_all_answered(
    open_store: OpenStore,
) -> None:
    store = open_store()
    first = make_entity(id=entity_id(1), blocking_keys=frozenset({"k:0"}))
    last = make_entity(id=entity_id(2), blocking_keys=frozenset({f"k:{OVER_PARAMETER_LIMIT - 1}"}))
    await store.upsert_entities([first, last])

    keys = [f"k:{n}" for n in range(OVER_PARAMETER_LIMIT)]
    found = await store.find_by_blocking_keys(keys, TENANT)
    assert len(found) == OVER_PARAMETER_LIMIT
    assert found["k:0"] == [first]
    assert found[keys[-1]] == [last]
    assert sum(len(group) for group in found.values()) == 2

    ids = [entity_id(n) for n in range(1, OVER_PARAMETER_LIMIT + 1)]
    assert sorted(await store.get_entities(ids, TENANT), key=lambda e: str(e.id)) == [first, last]


async def test_neighbors_walk_a_frontier_larger_than_one_statement_binds(
    open_store: OpenStore,
) -> None:
    store = open_store()
    hub = make_entity(id=entity_id(1))
    leaves = [make_entity(id=entity_id(n), blocking_keys=None) for n in range(2, 16_502)]
    beyond = make_entity(id=entity_id(20_000), blocking_keys=None)
    await store.upsert_entities([hub, *leaves, beyond])
    await store.upsert_relationships(
        [make_relationship(hub, leaf) for leaf in leaves]
        + [make_relationship(beyond, leaves[-1])]  # reached only through the last chunk
    )
    assert await store.neighbors(hub.id, TENANT, depth=2) == [*leaves, beyond]


async def test_a_self_loop_is_one_relationship_and_no_neighbor(
    open_store: OpenStore,
) -> None:
    store = open_store()
    ada = make_entity(id=entity_id(1))
    loop = make_relationship(ada, ada)
    await store.upsert_entity(ada)
    await store.upsert_relationship(loop)
    assert await store.get_relationships(ada.id, TENANT) == [loop]
    assert await store.neighbors(ada.id, TENANT) == []


async def test_stores_writing_one_file_at_once_lose_nothing(open_store: OpenStore) -> None:
    writers = [open_store() for _ in range(4)]
    batches = [[make_entity(id=entity_id(100 * b + n)) for n in range(20)] for b in range(8)]
    await asyncio.gather(
        *(
            writers[number % len(writers)].upsert_entities(batch)
            for number, batch in enumerate(batches)
        )
    )
    for writer in writers:
        assert len(await writer.find_entities(TENANT)) == 160


async def test_reupserting_in_one_tenant_leaves_the_other_tenants_keys_alone(
    open_store: OpenStore,
) -> None:
    store = open_store()
    mine = make_entity(id=entity_id(1), name="Ada Lovelace")
    theirs = make_entity(id=entity_id(1), name="Ada Lovelace", tenant_id=OTHER_TENANT)
    await store.upsert_entities([mine, theirs])
    renamed = make_entity(id=entity_id(1), name="Charles Babbage")
    await store.upsert_entity(renamed)
    assert await store.find_by_blocking_key(prefix_key(mine), TENANT) == []
    assert await store.find_by_blocking_key(prefix_key(renamed), TENANT) == [renamed]
    assert await store.find_by_blocking_key(prefix_key(theirs), OTHER_TENANT) == [theirs]
    assert await store.find_by_blocking_key(prefix_key(renamed), OTHER_TENANT) == []


async def test_reads_are_ordered_by_id_not_by_when_rows_were_written(
    open_store: OpenStore,
) -> None:
    store = open_store()
    written = [
        make_entity(id=entity_id(n), name="Ada", blocking_keys=frozenset({"k"})) for n in (3, 2, 1)
    ]
    for entity in written:  # one call each: rows are numbered in this order
        await store.upsert_entity(entity)
    in_id_order = written[::-1]
    assert await store.find_by_blocking_keys(["k"], TENANT) == {"k": in_id_order}
    assert await store.find_entities(TENANT, name="ada") == in_id_order
    assert await store.find_entities(TENANT, entity_type="person") == in_id_order


async def test_each_row_stores_the_entitys_own_json_under_its_id_text(
    open_store: OpenStore, tmp_path: Path
) -> None:
    written = [
        make_entity(
            id=entity_id(1),
            name="Zoë  Ångström",
            description="line\nbreak",
            properties={"aliases": ["Zoe"], "nested": {"n": [1, 2.5, None]}},
        ),
        make_entity(id=entity_id(2), tenant_id=OTHER_TENANT, name="Москва", blocking_keys=None),
        make_entity(id=entity_id(2), name="Ada", entity_type="person"),
    ]
    await open_store().upsert_entities(written)
    with sqlite3.connect(tmp_path / "graph.db") as connection:
        stored = {
            (tenant, entity): body
            for tenant, entity, body in connection.execute(
                "SELECT tenant_id, id, body FROM graph_entities"
            )
        }
    connection.close()
    assert stored == {
        (str(entity.tenant_id), str(entity.id)): entity.model_dump_json() for entity in written
    }


async def test_a_read_entity_behaves_like_one_validated_from_the_same_json(
    open_store: OpenStore,
) -> None:
    store = open_store()
    written = make_entity(
        id=entity_id(1),
        name="Ada Lovelace",
        description="mathematician",
        source_id="doc-1",
        model="fake/canned-v1",
        confidence=0.5,
        properties={"aliases": ["Ada"], "born": 1815, "nested": {"ok": True, "x": None}},
    )
    await store.upsert_entity(written)
    read = await store.get_entity(written.id, TENANT)
    validated = Entity.model_validate_json(written.model_dump_json())
    assert type(read) is Entity
    assert read == validated == written
    assert read.model_fields_set == validated.model_fields_set
    assert read.model_dump() == validated.model_dump()
    assert read.model_dump_json() == written.model_dump_json()
    assert read.model_copy(update={"name": "Ada King"}).name == "Ada King"
    with pytest.raises(ValidationError, match="frozen"):
        read.name = "changed"  # type: ignore[misc]


# -- other processes -------------------------------------------------------------

READER = """
import asyncio, json, sys
from uuid import UUID
from redstring.domain.ids import TenantId
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import MAX_POSTING_SEGMENTS, SqliteGraphStore

async def main() -> None:
    tenant = TenantId(UUID(sys.argv[2]))
    async with SqliteGraphStore(sys.argv[1]) as store:
        [ada] = await store.find_entities(tenant, name="ada lovelace")
        groups = await store.find_by_blocking_keys(["p:ada l", "p:charl", "p:nobod"], tenant)
        relationships = await store.get_relationships(ada.id, tenant)
    print(json.dumps({
        "properties": ada.properties,
        "groups": {key: [e.name for e in group] for key, group in groups.items()},
        "relationships": [r.relationship_type for r in relationships],
    }))

asyncio.run(main())
"""


async def test_a_reader_in_another_process_sees_committed_writes(
    open_store: OpenStore, tmp_path: Path
) -> None:
    path = tmp_path / "graph.db"
    writer = open_store(path)  # still open while the other process reads
    ada = make_entity(name="Ada Lovelace", properties={"born": 1815})
    charles = make_entity(name="Charles Babbage")
    await writer.upsert_entities([ada, charles])
    await writer.upsert_relationship(make_relationship(ada, charles, relationship_type="knows"))

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
    assert json.loads(stdout) == {
        "properties": {"born": 1815},
        "groups": {"p:ada l": ["Ada Lovelace"], "p:charl": ["Charles Babbage"], "p:nobod": []},
        "relationships": ["knows"],
    }


#: A process that writes `BATCHES` batches of `BATCH_SIZE` entities, announcing each.
WRITER = """
import asyncio, sys
from uuid import UUID
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import EntityId, TenantId
from redstring.graph.adapters.sqlite import SqliteGraphStore

path, batches, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tenant = TenantId(UUID(sys.argv[4]))

def batch(number: int) -> list[Entity]:
    return [
        Entity(
            id=EntityId(UUID(int=number * size + n + 1)),
            tenant_id=tenant,
            name=f"batch {number} entity {n}",
            entity_type="marker",
            extraction_method=ExtractionMethod.MANUAL,
            confidence=1.0,
            blocking_keys=frozenset({f"b:{number}", f"e:{number}:{n}"}),
        )
        for n in range(size)
    ]

async def main() -> None:
    async with SqliteGraphStore(path) as store:
        await store.get_entity(EntityId(UUID(int=0)), tenant)  # open the file first
        for number in range(batches):
            entities = batch(number)
            print("writing", number, flush=True)
            await store.upsert_entities(entities)
            print("wrote", number, flush=True)

asyncio.run(main())
"""
BATCHES = 5
BATCH_SIZE = 20_000


def batch_counts(path: Path, number: int) -> tuple[int, int, int]:
    """(entities, batch keys, per-entity keys) of one batch, counted in the file."""
    postings = "SELECT coalesce(sum(length(entity_rows)), 0) / 8 FROM graph_key_postings"
    with sqlite3.connect(path) as connection:
        counts = connection.execute(
            f"""SELECT
                (SELECT count(*) FROM graph_entities WHERE normalized_name LIKE ?),
                ({postings} WHERE key = ?),
                ({postings} WHERE key LIKE ?)""",
            (f"batch {number} entity %", f"b:{number}", f"e:{number}:%"),
        ).fetchone()
    connection.close()
    return counts  # type: ignore[no-any-return]


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_a_process_killed_mid_batch_leaves_each_batch_whole_or_absent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    delay = await kill_inside_second_batch(
        WRITER, str(path), str(BATCHES), str(BATCH_SIZE), str(TENANT)
    )

    counts = [batch_counts(path, number) for number in range(BATCHES)]
    whole, absent = (BATCH_SIZE,) * 3, (0, 0, 0)
    written = [count == whole for count in counts]
    assert counts[0] == whole
    assert all(count in (whole, absent) for count in counts), (
        f"killed {delay:.3f}s into batch 1: {counts}"
    )
    assert written == sorted(written, reverse=True), f"a later batch without an earlier: {counts}"
    async with SqliteGraphStore(path) as store:
        assert len(await store.find_by_blocking_key(f"e:0:{BATCH_SIZE - 1}", TENANT)) == 1


# -- read-only, and counting ------------------------------------------------------


async def test_read_only_reads_what_was_written_and_refuses_every_write(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    ada = make_entity(id=entity_id(1))
    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(ada)
    before = path.read_bytes()
    async with SqliteGraphStore(path, read_only=True) as reader:
        assert await reader.get_entity(ada.id, TENANT) == ada
        with pytest.raises(StoreError, match="readonly"):
            await reader.upsert_entity(make_entity(id=entity_id(2)))
        with pytest.raises(StoreError, match="readonly"):
            await reader.delete_entity(ada.id, TENANT)
    assert path.read_bytes() == before


async def test_read_only_refuses_a_missing_file_or_one_without_a_graph_creating_nothing(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.db"
    async with SqliteGraphStore(missing, read_only=True) as reader:
        with pytest.raises(StoreError, match="no such file"):
            await reader.count_by_tenant()
    assert not missing.exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()
    async with SqliteGraphStore(other, read_only=True) as reader:
        with pytest.raises(StoreError, match="holds no redstring graph"):
            await reader.get_entity(entity_id(1), TENANT)
    with sqlite3.connect(other) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    connection.close()
    assert tables == [("notes",)]


async def test_read_only_refuses_another_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(make_entity())
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE graph_meta SET value = '99' WHERE name = 'schema_version'")
    connection.close()
    async with SqliteGraphStore(path, read_only=True) as reader:
        with pytest.raises(StoreError, match="schema version 99"):
            await reader.count_by_tenant()


async def test_count_by_tenant_counts_entities_and_relationships_per_tenant(
    tmp_path: Path,
) -> None:
    async with SqliteGraphStore(tmp_path / "graph.db") as store:
        assert await store.count_by_tenant() == {}
        ours = [make_entity(id=entity_id(n)) for n in (1, 2, 3)]
        theirs = make_entity(id=entity_id(1), tenant_id=OTHER_TENANT)
        await store.upsert_entities([*ours, theirs])
        await store.upsert_relationships(
            [make_relationship(ours[0], ours[1]), make_relationship(ours[1], ours[2])]
        )
        assert await store.count_by_tenant() == {TENANT: (3, 2), OTHER_TENANT: (1, 0)}


async def test_read_only_refuses_a_version_1_file_saying_how_to_migrate_it(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(make_entity())
    downgrade(path, 1)
    before = path.read_bytes()
    async with SqliteGraphStore(path, read_only=True) as reader:
        with pytest.raises(StoreError, match=r"version 1, older than .* without read_only"):
            await reader.count_by_tenant()
    assert path.read_bytes() == before


# -- the name index's posting blobs -------------------------------------------------


def posting_blobs(path: Path) -> dict[str, int]:
    """How many blobs hold each unit's postings, over every tenant."""
    with sqlite3.connect(path) as connection:
        counts = dict(
            connection.execute(
                "SELECT unit, count(*) FROM graph_name_postings GROUP BY unit"
            ).fetchall()
        )
    connection.close()
    return counts


async def test_one_write_at_a_time_keeps_each_unit_in_a_bounded_number_of_blobs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph.db"
    writes = 3 * MAX_POSTING_SEGMENTS
    entities = [make_entity(id=entity_id(n), name=f"Ada Lovelace {n}") for n in range(writes)]
    theirs = make_entity(id=entity_id(0), name="Ada Lovelace", tenant_id=OTHER_TENANT)
    async with SqliteGraphStore(path) as store:
        for entity in [*entities, theirs]:
            await store.upsert_entity(entity)
        blobs = posting_blobs(path)
        # " ad" is in every name, and is held by both tenants.
        assert 2 <= blobs[" ad"] <= MAX_POSTING_SEGMENTS + 1
        assert max(blobs.values()) <= MAX_POSTING_SEGMENTS + 1
        found = await store.find_name_candidates("Ada Lovelace", TENANT, limit=writes)
        assert sorted(entity.id for entity in found) == [entity.id for entity in entities]
        assert await store.find_name_candidates("Ada Lovelace", OTHER_TENANT) == [theirs]

        # A removal appends to the unit's blobs too, and the removed row is gone.
        assert await store.delete_entity(entities[5].id, TENANT)
        renamed = make_entity(id=entities[6].id, name="Charles Babbage")
        await store.upsert_entity(renamed)
        found = await store.find_name_candidates("Ada Lovelace", TENANT, limit=writes)
        assert sorted(entity.id for entity in found) == [
            entity.id for entity in entities if entity.id not in {entities[5].id, renamed.id}
        ]
        assert await store.find_name_candidates("Charles Babbage", TENANT) == [renamed]
        assert max(posting_blobs(path).values()) <= 2 * MAX_POSTING_SEGMENTS


async def test_rows_far_apart_are_ranked_as_near_ones_are(tmp_path: Path) -> None:
    """An older file may hold rows SQLite numbered far apart; the count must not care."""
    path = tmp_path / "graph.db"
    near = make_entity(id=entity_id(2), name="Ada Lovelace")
    far = make_entity(id=entity_id(1), name="Ada Lovelace")
    partial = make_entity(id=entity_id(3), name="Ada Byron")
    lone = make_entity(id=entity_id(4), name="Lax")  # shares one unit, "  l": too few
    async with SqliteGraphStore(path) as store:
        await store.upsert_entities([near, partial, lone])
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO graph_entities (row, tenant_id, id, normalized_name, entity_type, body)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (2**40, str(TENANT), str(far.id), "ada lovelace", "person", far.model_dump_json()),
        )
    connection.close()
    downgrade(path, 1)
    async with SqliteGraphStore(path) as store:
        assert await store.find_name_candidates("Ada Lovelace", TENANT) == [far, near, partial]
        assert await store.find_name_candidates("Ada Lovelace", TENANT, limit=1) == [far]


async def test_any_mix_of_writes_answers_as_the_in_memory_store_does(tmp_path: Path) -> None:
    """Adds, renames, deletes and merges, one at a time and in batches, in two tenants.

    Few names and the same ids in both tenants, so that units and keys
    gain and lose rows over and over, and every term's blobs are merged
    many times, the large one among them.
    """
    rng = random.Random(7)
    pool = ["Ada Lovelace", "Ada Byron", "Charles Babbage", "Grace Hopper", "Alan Turing"]
    tenants = [TENANT, OTHER_TENANT]
    memory = InMemoryGraphStore()
    held: dict[TenantId, set[int]] = {tenant: set() for tenant in tenants}
    # A merged id resolves to its canonical one from then on: never written again.
    free = {tenant: list(range(400)) for tenant in tenants}
    queries = [*pool, "Lovelace", "Babage", "Hoper Grace"]

    def entity(number: int, tenant: TenantId) -> Entity:
        return make_entity(id=entity_id(number), tenant_id=tenant, name=rng.choice(pool))

    async with SqliteGraphStore(tmp_path / "graph.db") as sqlite:
        # A large first batch, so that later writes merge small blobs beside a large one.
        for tenant in tenants:
            batch = [entity(number, tenant) for number in free[tenant]]
            for store in (memory, sqlite):
                await store.upsert_entities(batch)
            held[tenant].update(free[tenant])
        for step in range(300):
            tenant = rng.choice(tenants)
            action = rng.random()
            if action < 0.5:
                count = rng.choice([1, 1, 9])
                batch = [entity(rng.choice(free[tenant]), tenant) for _ in range(count)]
                for store in (memory, sqlite):
                    await store.upsert_entities(batch)
                held[tenant].update(entity.id.int for entity in batch)
            elif action < 0.8 and held[tenant]:
                number = rng.choice(sorted(held[tenant]))
                for store in (memory, sqlite):
                    assert await store.delete_entity(entity_id(number), tenant)
                held[tenant].discard(number)
            elif len(held[tenant]) > 2:
                canonical, merged = rng.sample(sorted(held[tenant]), 2)
                survivor = entity(canonical, tenant)
                for store in (memory, sqlite):
                    await store.merge_entities(survivor, [entity_id(merged)])
                held[tenant].discard(merged)
                free[tenant].remove(merged)
            if step % 10 == 0:
                for tenant in tenants:
                    for query in queries:
                        expected = await memory.find_name_candidates(query, tenant, limit=20)
                        assert await sqlite.find_name_candidates(query, tenant, limit=20) == (
                            expected
                        ), (step, query)
                    keys = sorted({key for name in pool for key in query_blocking_keys(name)})
                    assert await sqlite.find_by_blocking_keys(keys, tenant) == (
                        await memory.find_by_blocking_keys(keys, tenant)
                    ), step
        assert max(posting_blobs(tmp_path / "graph.db").values()) <= 2 * MAX_POSTING_SEGMENTS


async def test_a_batch_failing_in_its_last_statement_leaves_nothing_written(
    tmp_path: Path,
) -> None:
    """The name index is written last; a failure there must take the entities back too."""
    path = tmp_path / "graph.db"
    ada = make_entity(id=entity_id(1), name="Ada Lovelace")
    async with SqliteGraphStore(path) as store:
        await store.upsert_entity(ada)
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TRIGGER refuse_zed BEFORE INSERT ON graph_name_postings "
            "WHEN NEW.unit = 'zed' BEGIN SELECT RAISE(ABORT, 'no zed here'); END"
        )
    connection.close()
    before = posting_blobs(path)
    renamed = make_entity(id=ada.id, name="Ada Byron")
    async with SqliteGraphStore(path) as store:
        with pytest.raises(StoreError, match="no zed here"):
            await store.upsert_entities(
                [
                    make_entity(id=entity_id(2), name="Charles Babbage"),
                    renamed,
                    make_entity(id=entity_id(3), name="Zed"),
                ]
            )
        assert await store.find_entities(TENANT) == [ada]
        assert await store.find_name_candidates("Ada Lovelace", TENANT) == [ada]
        assert await store.find_name_candidates("Babbage", TENANT) == []
        assert await store.find_by_blocking_key(prefix_key(ada), TENANT) == [ada]
    assert posting_blobs(path) == before


async def test_a_term_whose_rows_all_went_keeps_no_blob_once_merged(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    async with SqliteGraphStore(path) as store:
        for step in range(2 * MAX_POSTING_SEGMENTS):
            name = "Quxley" if step % 2 == 0 else "Ada Lovelace"
            await store.upsert_entity(make_entity(id=entity_id(1), name=name))
        assert await store.find_name_candidates("Quxley", TENANT) == []
        # Sixteen writes gained and lost "qux"; its blobs were merged into nothing.
        assert posting_blobs(path).get("qux", 0) < MAX_POSTING_SEGMENTS - 1
        await store.upsert_entity(make_entity(id=entity_id(1), name="Quxley"))
        assert len(await store.find_name_candidates("Quxley", TENANT)) == 1


async def test_a_posting_naming_another_tenants_row_never_answers_with_it(
    tmp_path: Path,
) -> None:
    """A fault in the index (here written by hand) must not cross tenants."""
    path = tmp_path / "graph.db"
    ours = make_entity(id=entity_id(1), name="Ada Lovelace")
    theirs = make_entity(id=entity_id(1), name="Ada Lovelace", tenant_id=OTHER_TENANT)
    async with SqliteGraphStore(path) as store:
        await store.upsert_entities([ours, theirs])
    with sqlite3.connect(path) as connection:
        [(row,)] = connection.execute(
            "SELECT row FROM graph_entities WHERE tenant_id = ?", (str(OTHER_TENANT),)
        ).fetchall()
        stray = row.to_bytes(8, "little")
        for table, term in (
            ("graph_key_postings", prefix_key(ours)),
            ("graph_name_postings", "ada"),
            ("graph_name_postings", " ad"),
        ):
            connection.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", (str(TENANT), term, stray))
    connection.close()
    async with SqliteGraphStore(path) as store:
        assert await store.find_by_blocking_key(prefix_key(ours), TENANT) == [ours]
        assert await store.find_name_candidates("Ada Lovelace", TENANT) == [ours]
