"""Read-only chunk stores: what read commands open, never creating or changing anything."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest

from redstring.chunks.adapters.postgres import PostgresChunkStore
from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.domain.exceptions import StoreError
from redstring.domain.ids import EntityId
from redstring.testing.factories import TENANT, make_chunk
from tests.postgres import close_with_the_loop

if TYPE_CHECKING:
    from pathlib import Path

    from tests.postgres import PostgresSchemas


def _tables(path: Path) -> list[tuple[str]]:
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    connection.close()
    return tables


def _execute(path: Path, statement: str) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute(statement)
    connection.close()


async def test_a_read_only_sqlite_store_reads_and_searches_but_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chunks.db"
    chunk = make_chunk("Ada Lovelace wrote the first program.")
    async with SqliteChunkStore(path) as store:
        await store.put_chunks([chunk])
    before = path.read_bytes()
    async with SqliteChunkStore(path, read_only=True) as reader:
        assert await reader.get_chunks([chunk.id], TENANT) == [chunk]
        assert [found.chunk.id for found in await reader.search("program", TENANT)] == [chunk.id]
        other = make_chunk("Another passage.", source_id="other")
        for write in (reader.put_chunks([other]), reader.delete_source(chunk.source_id, TENANT)):
            with pytest.raises(StoreError, match="readonly"):
                await write
    assert path.read_bytes() == before


async def test_a_read_only_sqlite_store_refuses_a_file_without_chunks_creating_nothing(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other.db"
    _execute(other, "CREATE TABLE notes (body TEXT)")
    missing = tmp_path / "missing.db"
    for path, reason in ((other, "the file holds no chunk store"), (missing, "no such file")):
        async with SqliteChunkStore(path, read_only=True) as reader:
            with pytest.raises(StoreError, match=reason):
                await reader.count_chunks(TENANT)
    assert _tables(other) == [("notes",)]
    assert not missing.exists()


async def test_a_read_only_sqlite_store_refuses_another_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "chunks.db"
    writer = SqliteChunkStore(path)
    await writer.count_chunks(TENANT)
    await writer.close()
    _execute(path, "UPDATE chunks_meta SET value = '99' WHERE name = 'schema_version'")
    reader = SqliteChunkStore(path, read_only=True)
    try:
        with pytest.raises(StoreError, match="schema version 99"):
            await reader.count_chunks(TENANT)
    finally:
        await reader.close()


def test_read_only_must_be_a_bool(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read_only must be a bool, got 'yes'"):
        SqliteChunkStore(tmp_path / "x.db", read_only="yes")  # type: ignore[arg-type]


async def test_a_read_only_postgres_store_reads_and_creates_nothing(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    chunk = make_chunk("Ada Lovelace wrote the first program.")
    empty = close_with_the_loop(PostgresChunkStore(postgres.dsn, schema=schema, read_only=True))
    with pytest.raises(StoreError, match="holds no redstring chunk_store"):
        await empty.count_chunks(TENANT)
    connection = await postgres.connect()
    try:
        held = await connection.fetchval(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema
        )
    finally:
        await connection.close()
    assert held == 0
    writer = postgres.chunk_store(schema)
    await writer.put_chunks([chunk])
    reader = close_with_the_loop(PostgresChunkStore(postgres.dsn, schema=schema, read_only=True))
    assert [found.chunk.id for found in await reader.search("program", TENANT)] == [chunk.id]
    assert await reader.mentions_of(TENANT, entity_ids=[EntityId(chunk.id)]) == []
    with pytest.raises(StoreError, match="read-only"):
        await reader.delete_source(chunk.source_id, TENANT)
    assert await writer.count_chunks(TENANT) == 1
