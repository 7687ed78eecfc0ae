"""The SQLite chunk store against the shared `ChunkStore` contract, plus files and crashes."""

from __future__ import annotations

import sqlite3
import sys
from typing import TYPE_CHECKING

import pytest

from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.domain.exceptions import StoreError
from redstring.domain.ids import SourceId
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.ports.chunk_store import ChunkStore
from redstring.testing.chunk_store import (
    ChunkStoreCompliance,
    found,
    reference_search,
    source_chunks,
)
from redstring.testing.factories import TENANT, make_entity
from tests.unit.chunks.adapters.killed import (
    assert_each_batch_whole_or_absent,
    kill_a_writer_mid_batch,
)
from tests.unit.chunks.adapters.version2 import CHUNKS, QUERIES, version_2

if TYPE_CHECKING:
    from pathlib import Path

    from redstring.domain.chunk import Chunk


class TestSqliteChunkStore(ChunkStoreCompliance):
    @pytest.fixture(autouse=True)
    def _directory(self, tmp_path: Path) -> None:
        self._tmp = tmp_path
        self._count = 0

    def new_store(self) -> ChunkStore:
        self._count += 1
        return SqliteChunkStore(self._tmp / f"chunks-{self._count}.db")

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(self.new_store(), ChunkStore)


async def test_chunks_survive_reopening_the_file_and_share_it_with_the_graph(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    chunks = source_chunks("doc-1", "apple banana", "apple", "cherry")
    async with SqliteGraphStore(path) as graph, SqliteChunkStore(path) as store:
        await graph.upsert_entity(make_entity())
        await store.put_chunks(chunks)
    async with SqliteChunkStore(path) as store:
        assert await store.get_source_chunks("doc-1", TENANT) == chunks  # type: ignore[arg-type]
        assert found(await store.search("apple", TENANT)) == reference_search(chunks, "apple")


async def test_a_file_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SqliteChunkStore(path) as store:
        await store.count_chunks(TENANT)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE chunks_meta SET value = '9' WHERE name = 'schema_version'")
    connection.close()
    async with SqliteChunkStore(path) as store:
        with pytest.raises(StoreError, match="version 9"):
            await store.count_chunks(TENANT)


async def test_a_tenant_written_many_times_keeps_a_bounded_number_of_segments(
    tmp_path: Path,
) -> None:
    async with SqliteChunkStore(tmp_path / "store.db") as store:
        for n in range(20):
            await store.put_chunks(source_chunks(f"doc-{n}", f"apple {n}", first=10 * n))
        with sqlite3.connect(tmp_path / "store.db") as connection:
            segments, apples = connection.execute(
                "SELECT count(DISTINCT segment), count(*) FILTER (WHERE term = 'apple') "
                "FROM chunks_segments"
            ).fetchone()
        connection.close()
        sources = [SourceId(f"doc-{n}") for n in range(20)]
        chunks = [chunk for s in sources for chunk in await store.get_source_chunks(s, TENANT)]
        assert found(await store.search("apple", TENANT, k=30)) == reference_search(
            chunks, "apple", k=30
        )
    # Tiers of 16: the first sixteen segments of two entries merged, four after them.
    assert segments == 5
    assert apples == segments


def test_the_repr_names_the_path_and_state(tmp_path: Path) -> None:
    store = SqliteChunkStore(tmp_path / "x.db")
    assert repr(store) == f"SqliteChunkStore({str(tmp_path / 'x.db')!r}, open)"


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_a_process_killed_mid_batch_leaves_each_batch_whole_or_absent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chunks.db"
    await kill_a_writer_mid_batch("sqlite", str(path))
    async with SqliteChunkStore(path) as store:
        await assert_each_batch_whole_or_absent(store)


async def test_a_search_sees_what_another_store_on_the_file_wrote_since(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    first = source_chunks("doc-1", "apple banana", "apple")
    async with SqliteChunkStore(path) as reader, SqliteChunkStore(path) as writer:
        await writer.put_chunks(first)
        assert found(await reader.search("apple", TENANT)) == reference_search(first, "apple")
        later = source_chunks("doc-2", "apple apple", first=10)
        await writer.put_chunks(later)
        assert found(await reader.search("apple", TENANT)) == reference_search(
            [*first, *later], "apple"
        )
        await writer.delete_by_tenant(TENANT)
        again = source_chunks("doc-1", "apple banana", "apple")
        await writer.put_chunks(again[:1])
        assert found(await reader.search("apple", TENANT)) == reference_search(again[:1], "apple")


#: The tables of a version 2 file (ADR 0084) that version 3 replaces: postings per term.
_VERSION_2 = (
    "CREATE TABLE chunks_meta (name TEXT PRIMARY KEY, value TEXT)",
    "INSERT INTO chunks_meta VALUES ('schema_version', '2')",
    "CREATE TABLE chunks_tenants (tenant_id TEXT PRIMARY KEY, chunk_count INTEGER NOT NULL, "
    "total_length INTEGER NOT NULL, next_slot INTEGER NOT NULL, next_write INTEGER NOT NULL)",
    "CREATE TABLE chunks_chunks (tenant_id TEXT NOT NULL, chunk_id TEXT NOT NULL, "
    "slot INTEGER NOT NULL, source_id TEXT NOT NULL, ordinal INTEGER NOT NULL, "
    'start INTEGER NOT NULL, "end" INTEGER NOT NULL, length INTEGER NOT NULL, '
    "text TEXT NOT NULL, metadata TEXT NOT NULL, "
    "PRIMARY KEY (tenant_id, chunk_id)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX chunks_by_slot ON chunks_chunks (tenant_id, slot)",
    "CREATE INDEX chunks_by_source ON chunks_chunks (tenant_id, source_id)",
    "CREATE TABLE chunks_terms (tenant_id TEXT NOT NULL, term TEXT NOT NULL, "
    "df INTEGER NOT NULL, sizes BLOB NOT NULL, version INTEGER NOT NULL, "
    "PRIMARY KEY (tenant_id, term)) WITHOUT ROWID",
    "CREATE TABLE chunks_postings (tenant_id TEXT NOT NULL, term TEXT NOT NULL, "
    "position INTEGER NOT NULL, entries BLOB NOT NULL, "
    "PRIMARY KEY (tenant_id, term, position)) WITHOUT ROWID",
    "CREATE TABLE chunks_mentions (tenant_id TEXT NOT NULL, "
    "chunk_id TEXT NOT NULL, kind INTEGER NOT NULL, target_id TEXT NOT NULL, "
    'start INTEGER NOT NULL, "end" INTEGER NOT NULL, '
    'PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end")) WITHOUT ROWID',
)


def write_version_2(path: Path) -> None:
    """A version 2 file holding `version2.CHUNKS`, as version 2 wrote them."""
    tenant, rows = str(TENANT), version_2()
    connection = sqlite3.connect(path)
    for statement in _VERSION_2:
        connection.execute(statement)
    connection.executemany(
        "INSERT INTO chunks_chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')",
        [(tenant, str(row[0]), *row[1:]) for row in rows.chunks],
    )
    connection.executemany(
        "INSERT INTO chunks_terms VALUES (?, ?, ?, x'', 3)", [(tenant, *row) for row in rows.terms]
    )
    connection.executemany(
        "INSERT INTO chunks_postings VALUES (?, ?, ?, ?)", [(tenant, *row) for row in rows.postings]
    )
    connection.execute("INSERT INTO chunks_tenants VALUES (?, ?, ?, ?, ?)", (tenant, *rows.tenant))
    connection.commit()
    connection.close()


async def test_a_version_2_file_is_migrated_and_ranks_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    write_version_2(path)
    async with SqliteChunkStore(path) as store:
        assert await store.count_chunks(TENANT) == len(CHUNKS)
        for query in QUERIES:
            assert found(await store.search(query, TENANT)) == reference_search(CHUNKS, query)
        later = source_chunks("doc-2", "apple pie", first=20)
        await store.put_chunks(later)
        assert found(await store.search("apple pie", TENANT)) == reference_search(
            [*CHUNKS, *later], "apple pie"
        )
    with sqlite3.connect(path) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        (version,) = connection.execute(
            "SELECT value FROM chunks_meta WHERE name = 'schema_version'"
        ).fetchone()
    connection.close()
    assert version == "3"
    assert "chunks_terms" not in tables
    assert "chunks_postings" not in tables


async def test_a_utf16_file_merges_its_segments_in_python_and_ranks_the_same(
    tmp_path: Path,
) -> None:
    path = tmp_path / "utf16.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA encoding = 'UTF-16le'")
        connection.execute("CREATE TABLE other (x)")  # the encoding is fixed once a table exists
    connection.close()
    held: list[Chunk] = []
    async with SqliteChunkStore(path) as store:
        for n in range(40):
            chunks = source_chunks(f"doc-{n}", f"apple {n}", "apple pie élan", first=10 * n)
            await store.put_chunks(chunks)
            held += chunks
            if n % 3 == 0:
                await store.delete_source(SourceId(f"doc-{n}"), TENANT)
                held = [chunk for chunk in held if chunk.source_id != f"doc-{n}"]
        for query in ("apple", "pie 7", "élan 12"):
            assert found(await store.search(query, TENANT, k=50)) == reference_search(
                held, query, k=50
            )
    with sqlite3.connect(path) as connection:
        ((encoding,),) = connection.execute("PRAGMA encoding").fetchall()
        (segments,) = connection.execute(
            "SELECT count(DISTINCT segment) FROM chunks_segments"
        ).fetchone()
    connection.close()
    assert encoding == "UTF-16le"
    assert segments < 40  # merged
