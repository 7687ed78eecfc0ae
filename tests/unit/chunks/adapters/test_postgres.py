"""The Postgres chunk store against the shared `ChunkStore` contract, plus sharing."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

import pytest

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.chunks.adapters.postgres import PostgresChunkStore
from redstring.domain.exceptions import StoreError
from redstring.domain.ids import ChunkId, SourceId
from redstring.ports.chunk_store import ChunkStore
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.chunk_store import (
    ChunkStoreCompliance,
    found,
    reference_search,
    source_chunks,
)
from redstring.testing.factories import TENANT
from tests.unit.chunks.adapters.killed import (
    assert_each_batch_whole_or_absent,
    kill_a_writer_mid_batch,
)
from tests.unit.chunks.adapters.version2 import CHUNKS, QUERIES, version_2

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas


class TestPostgresChunkStore(ChunkStoreCompliance):
    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_store(self) -> ChunkStore:
        return self._postgres.chunk_store()

    def test_it_satisfies_the_port_and_the_lifetime(self) -> None:
        store = PostgresChunkStore("postgresql://localhost/unused")
        assert isinstance(store, ChunkStore)
        assert isinstance(store, AsyncClosable)
        assert repr(store) == "PostgresChunkStore(schema='redstring', open)"


async def test_chunks_survive_closing_and_are_read_by_another_store(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    chunks = source_chunks("doc-1", "apple banana", "apple", "cherry")
    async with postgres.chunk_store(schema) as store:
        await store.put_chunks(chunks)
    async with postgres.chunk_store(schema) as reopened:
        assert await reopened.get_source_chunks(SourceId("doc-1"), TENANT) == chunks
        assert found(await reopened.search("apple", TENANT)) == reference_search(chunks, "apple")


async def test_concurrent_writers_of_one_tenant_keep_its_statistics_exact(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    stores = [postgres.chunk_store(schema) for _ in range(4)]
    await stores[0].count_chunks(TENANT)  # create the tables once
    batches = [
        source_chunks(f"doc-{n}", f"apple {n}", "apple pie", first=10 * n) for n in range(12)
    ]
    await asyncio.gather(*(stores[n % 4].put_chunks(batch) for n, batch in enumerate(batches)))
    every = [chunk for batch in batches for chunk in batch]
    memory = InMemoryChunkStore()
    await memory.put_chunks(every)
    assert await stores[1].search("apple pie 3", TENANT, k=30) == await memory.search(
        "apple pie 3", TENANT, k=30
    )
    assert await stores[2].count_chunks(TENANT) == len(every)


async def test_a_schema_of_a_newer_layout_is_refused(postgres: PostgresSchemas) -> None:
    schema = postgres.new_schema()
    async with postgres.chunk_store(schema) as store:
        await store.count_chunks(TENANT)
    connection = await postgres.connect()
    try:
        await connection.execute(
            f"UPDATE \"{schema}\".meta SET value = '9' WHERE component = 'chunk_store'"
        )
    finally:
        await connection.close()
    async with postgres.chunk_store(schema) as store:
        with pytest.raises(StoreError, match="version 9"):
            await store.count_chunks(TENANT)


async def test_a_search_sees_what_another_store_on_the_schema_wrote_since(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    reader, writer = postgres.chunk_store(schema), postgres.chunk_store(schema)
    first = source_chunks("doc-1", "apple banana", "apple")
    await writer.put_chunks(first)
    assert found(await reader.search("apple", TENANT)) == reference_search(first, "apple")
    later = source_chunks("doc-2", "apple apple", first=10)
    await writer.put_chunks(later)
    assert found(await reader.search("apple", TENANT)) == reference_search(
        [*first, *later], "apple"
    )
    await writer.delete_by_tenant(TENANT)
    await writer.put_chunks(first[:1])
    assert found(await reader.search("apple", TENANT)) == reference_search(first[:1], "apple")


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_a_process_killed_mid_batch_leaves_each_batch_whole_or_absent(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    await kill_a_writer_mid_batch("postgres", postgres.dsn, schema)
    await assert_each_batch_whole_or_absent(postgres.chunk_store(schema))


#: The tables of a version 2 layout (ADR 0084) that version 3 replaces: postings per term.
_VERSION_2 = (
    "CREATE TABLE {s}.meta (component text NOT NULL, key text NOT NULL, value text NOT NULL, "
    "PRIMARY KEY (component, key))",
    "INSERT INTO {s}.meta VALUES ('chunk_store', 'schema_version', '2')",
    "CREATE TABLE {s}.chunk_tenants (tenant_id uuid PRIMARY KEY, chunk_count bigint NOT NULL, "
    "total_length bigint NOT NULL, next_slot bigint NOT NULL, next_write bigint NOT NULL)",
    "CREATE TABLE {s}.chunk_chunks (tenant_id uuid NOT NULL, chunk_id uuid NOT NULL, "
    "slot integer NOT NULL, source_id text NOT NULL, ordinal integer NOT NULL, "
    'start integer NOT NULL, "end" integer NOT NULL, length integer NOT NULL, '
    "text text NOT NULL, metadata text NOT NULL, "
    "PRIMARY KEY (tenant_id, chunk_id), UNIQUE (tenant_id, slot))",
    "CREATE INDEX chunk_chunks_by_source ON {s}.chunk_chunks (tenant_id, source_id)",
    "CREATE TABLE {s}.chunk_terms (tenant_id uuid NOT NULL, term text NOT NULL, "
    "df integer NOT NULL, sizes bytea NOT NULL, version bigint NOT NULL, "
    "PRIMARY KEY (tenant_id, term))",
    "CREATE TABLE {s}.chunk_postings (tenant_id uuid NOT NULL, term text NOT NULL, "
    "position integer NOT NULL, entries bytea NOT NULL, "
    "PRIMARY KEY (tenant_id, term, position))",
    "CREATE TABLE {s}.chunk_mentions (tenant_id uuid NOT NULL, chunk_id uuid NOT NULL, "
    'kind smallint NOT NULL, target_id uuid NOT NULL, start integer NOT NULL, "end" integer '
    'NOT NULL, PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end"))',
)


async def _version_2_schema(postgres: PostgresSchemas) -> str:
    """A new schema holding `version2`'s chunks in layout version 2."""
    schema = postgres.new_schema()
    s, rows = f'"{schema}"', version_2()
    connection = await postgres.connect()
    try:
        await connection.execute(f"CREATE SCHEMA {s}")
        for statement in _VERSION_2:
            await connection.execute(statement.format(s=s))
        await connection.executemany(
            f"INSERT INTO {s}.chunk_chunks VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '{{}}')",
            [(TENANT, *row) for row in rows.chunks],
        )
        await connection.executemany(
            f"INSERT INTO {s}.chunk_terms VALUES ($1, $2, $3, '', 3)",
            [(TENANT, *row) for row in rows.terms],
        )
        await connection.executemany(
            f"INSERT INTO {s}.chunk_postings VALUES ($1, $2, $3, $4)",
            [(TENANT, *row) for row in rows.postings],
        )
        await connection.execute(
            f"INSERT INTO {s}.chunk_tenants VALUES ($1, $2, $3, $4, $5)", TENANT, *rows.tenant
        )
    finally:
        await connection.close()
    return schema


async def test_a_version_2_schema_is_migrated_and_ranks_as_before(
    postgres: PostgresSchemas,
) -> None:
    schema = await _version_2_schema(postgres)
    async with postgres.chunk_store(schema) as store:
        assert await store.count_chunks(TENANT) == len(CHUNKS)
        for query in QUERIES:
            assert found(await store.search(query, TENANT)) == reference_search(CHUNKS, query)
        later = source_chunks("doc-2", "apple pie", first=20)
        await store.put_chunks(later)
        assert found(await store.search("apple pie", TENANT)) == reference_search(
            [*CHUNKS, *later], "apple pie"
        )
    async with postgres.chunk_store(schema) as reopened:  # migrated once, then only read
        assert await reopened.count_chunks(TENANT) == len(CHUNKS) + 1


async def test_two_stores_opening_a_version_2_schema_at_once_migrate_it_once(
    postgres: PostgresSchemas,
) -> None:
    # Both read version 2 before either migrates; the second to lock the version row finds 3.
    schema = await _version_2_schema(postgres)
    async with postgres.chunk_store(schema) as one, postgres.chunk_store(schema) as two:
        counts = await asyncio.gather(one.count_chunks(TENANT), two.count_chunks(TENANT))
        assert list(counts) == [len(CHUNKS), len(CHUNKS)]
        for query in QUERIES:
            expected = reference_search(CHUNKS, query)
            assert found(await one.search(query, TENANT)) == expected
            assert found(await two.search(query, TENANT)) == expected


async def test_a_search_racing_writes_sees_one_state_of_the_tenant(
    postgres: PostgresSchemas,
) -> None:
    """Searches need no transaction of their own: each reads the state after some write."""
    schema = postgres.new_schema()
    writer, reader = postgres.chunk_store(schema), postgres.chunk_store(schema)
    batches = [
        source_chunks(f"doc-{n}", f"apple {n}", "apple pie " * (n % 3 + 1), first=10 * n)
        for n in range(24)
    ]
    states = [
        reference_search([c for batch in batches[:m] for c in batch], "apple pie", k=60)
        for m in range(len(batches) + 1)
    ]
    await writer.put_chunks(batches[0])
    seen: list[list[tuple[ChunkId, float]]] = []

    async def write() -> None:
        for batch in batches[1:]:
            await writer.put_chunks(batch)

    async def search() -> None:
        for _ in range(60):
            seen.append(found(await reader.search("apple pie", TENANT, k=60)))

    await asyncio.gather(write(), search())
    assert all(result in states for result in seen)
