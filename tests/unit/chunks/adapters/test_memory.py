"""The in-memory chunk store against the shared `ChunkStore` contract."""

from __future__ import annotations

from uuid import uuid4

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.domain.ids import ChunkId, SourceId
from redstring.ports.chunk_store import ChunkStore
from redstring.testing.chunk_store import (
    ChunkStoreCompliance,
    found,
    reference_search,
    source_chunks,
)
from redstring.testing.factories import TENANT, make_chunk


class TestInMemoryChunkStore(ChunkStoreCompliance):
    def new_store(self) -> ChunkStore:
        return InMemoryChunkStore()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryChunkStore(), ChunkStore)

    async def test_a_tenant_renumbered_after_many_deletes_ranks_as_before(self) -> None:
        store = InMemoryChunkStore()
        kept = source_chunks("kept", "apple pie", "apple", "pie crust", first=1)
        await store.put_chunks(kept)
        for batch in range(3):
            chunks = [
                make_chunk(f"apple {n % 7} pie", id=ChunkId(uuid4()), source_id=f"gone-{batch}-{n}")
                for n in range(700)
            ]
            await store.put_chunks(chunks)
        for batch in range(3):
            for n in range(700):
                await store.delete_source(SourceId(f"gone-{batch}-{n}"), TENANT)
        assert await store.count_chunks(TENANT) == 3
        assert found(await store.search("apple pie crust", TENANT)) == reference_search(
            kept, "apple pie crust"
        )
        more = source_chunks("more", "crust apple", first=50)
        await store.put_chunks(more)
        assert found(await store.search("apple crust", TENANT)) == reference_search(
            [*kept, *more], "apple crust"
        )
