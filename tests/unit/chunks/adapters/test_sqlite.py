"""The SQLite chunk store against the shared `ChunkStore` contract, plus files and crashes."""

from __future__ import annotations

import sqlite3
import sys
from typing import TYPE_CHECKING

import pytest

from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.domain.exceptions import StoreError
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

if TYPE_CHECKING:
    from pathlib import Path


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


async def test_a_term_written_many_times_keeps_a_bounded_number_of_segments(
    tmp_path: Path,
) -> None:
    async with SqliteChunkStore(tmp_path / "store.db") as store:
        for n in range(20):
            await store.put_chunks(source_chunks(f"doc-{n}", f"apple {n}", first=10 * n))
    with sqlite3.connect(tmp_path / "store.db") as connection:
        (segments,) = connection.execute(
            "SELECT count(*) FROM chunks_postings WHERE term = 'apple'"
        ).fetchone()
    connection.close()
    assert 1 <= segments <= 8  # tiers of 8: at most 7 one-entry segments and their merge


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
