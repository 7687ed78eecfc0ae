"""A chunk writer killed by SIGKILL in the middle of a batch, and what it must leave behind."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from redstring.domain.ids import ChunkId
from redstring.testing.chunk_store import found, reference_search
from redstring.testing.factories import TENANT
from tests.killing import kill_inside_second_batch

if TYPE_CHECKING:
    from redstring.ports.chunk_store import ChunkStore

#: Writes `batches` batches of `size` chunks, announcing each; the store is built from argv.
WRITER = """
import asyncio, sys
from uuid import UUID
from redstring.chunks.adapters.postgres import PostgresChunkStore
from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.domain.chunk import Chunk
from redstring.domain.ids import ChunkId, SourceId, TenantId

kind, where, schema = sys.argv[1], sys.argv[2], sys.argv[3]
batches, size, tenant = int(sys.argv[4]), int(sys.argv[5]), TenantId(UUID(sys.argv[6]))

def batch(number):
    chunks = []
    for n in range(size):
        text = f"batch{number} word{n % 97} common text number {n}"
        chunks.append(Chunk(
            id=ChunkId(UUID(int=number * size + n + 1)), tenant_id=tenant,
            source_id=SourceId(f"source-{number}-{n % 50}"), ordinal=n // 50,
            text=text, start=0, end=len(text),
        ))
    return chunks

async def main():
    if kind == "sqlite":
        store = SqliteChunkStore(where)
    else:
        store = PostgresChunkStore(where, schema=schema)
    async with store:
        await store.count_chunks(tenant)  # open the store first
        for number in range(batches):
            chunks = batch(number)
            print("writing", number, flush=True)
            await store.put_chunks(chunks)
            print("wrote", number, flush=True)

asyncio.run(main())
"""
BATCHES = 5
BATCH_SIZE = 10_000


async def kill_a_writer_mid_batch(kind: str, where: str, schema: str = "-") -> None:
    """Start the writer on a `kind` store at `where`; kill it inside its second batch."""
    await kill_inside_second_batch(
        WRITER, kind, where, schema, str(BATCHES), str(BATCH_SIZE), str(TENANT)
    )


async def assert_each_batch_whole_or_absent(store: ChunkStore) -> None:
    """Every batch the killed writer began is all there or not there, statistics included."""
    counts = [
        len(await store.search(f"batch{number}", TENANT, k=BATCH_SIZE + 1))
        for number in range(BATCHES)
    ]
    assert counts[0] == BATCH_SIZE
    assert all(count in (0, BATCH_SIZE) for count in counts), counts
    assert await store.count_chunks(TENANT) == sum(counts)
    held = await store.get_chunks(
        [ChunkId(UUID(int=n + 1)) for n in range(BATCHES * BATCH_SIZE)], TENANT
    )
    assert len(held) == sum(counts)
    assert found(await store.search("common word5 batch0", TENANT, k=30)) == (
        reference_search(held, "common word5 batch0", k=30)
    )
