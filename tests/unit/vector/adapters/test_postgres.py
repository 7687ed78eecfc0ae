"""The Postgres vector store: the shared contract, plus caching, HNSW, schemas and pools."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import asyncpg
import numpy as np
import pytest

from redstring.domain.exceptions import (
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StoreError,
)
from redstring.domain.vector import VectorRecord
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
from redstring.vector.adapters.postgres import (
    _COPY_MESSAGE_BYTES,
    HnswIndex,
    PostgresVectorStore,
    _chunked,
)

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    from redstring.domain.ids import EntityId, TenantId
    from tests.postgres import PostgresSchemas


class TestPostgresVectorStore(VectorStoreCompliance):
    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        return self._postgres.vector_store(dimension)

    async def test_it_satisfies_the_port_and_the_lifetime(self) -> None:
        store = self.new_store()
        assert isinstance(store, VectorStore)
        assert isinstance(store, AsyncClosable)


class TestPostgresVectorStoreWithAnHnswIndex(VectorStoreCompliance):
    """The whole contract holds on the index too: these stores are small enough to be exact."""

    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        return self._postgres.vector_store(dimension, index=HnswIndex())


# -- schema settings -------------------------------------------------------------


async def test_reopening_with_another_dimension_names_both(postgres: PostgresSchemas) -> None:
    schema = postgres.new_schema()
    await postgres.vector_store(4, schema).upsert(entity_id(1), [1.0, 0, 0, 0], TENANT)
    with pytest.raises(DimensionMismatchError) as raised:
        await postgres.vector_store(8, schema).search([1.0] * 8, TENANT)
    assert (raised.value.expected, raised.value.actual) == (4, 8)


async def test_a_schema_of_another_embedding_model_is_refused(postgres: PostgresSchemas) -> None:
    schema = postgres.new_schema()
    await postgres.vector_store(4, schema, model="e5-small").search([1.0, 0, 0, 0], TENANT)
    await postgres.vector_store(4, schema).search([1.0, 0, 0, 0], TENANT)
    await postgres.vector_store(4, schema, model="e5-small").search([1.0, 0, 0, 0], TENANT)
    with pytest.raises(EmbeddingModelMismatchError) as raised:
        await postgres.vector_store(4, schema, model="other-model").search([1.0, 0, 0, 0], TENANT)
    assert (raised.value.expected, raised.value.actual) == ("e5-small", "other-model")


async def test_a_schema_without_a_model_records_the_first_one_named(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    await postgres.vector_store(4, schema).search([1.0, 0, 0, 0], TENANT)
    await postgres.vector_store(4, schema, model="first").search([1.0, 0, 0, 0], TENANT)
    with pytest.raises(EmbeddingModelMismatchError):
        await postgres.vector_store(4, schema, model="second").search([1.0, 0, 0, 0], TENANT)


@pytest.mark.parametrize("bad", ["", "   "])
def test_a_blank_model_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="model"):
        PostgresVectorStore("postgresql://localhost/x", dimension=4, model=bad)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"m": 1}, "m must be"),
        ({"m": True}, "m must be"),
        ({"ef_construction": 5000}, "ef_construction must be"),
        ({"ef_search": 0}, "ef_search must be"),
        ({"m": 40, "ef_construction": 64}, r"at least 2 \* m"),
        ({"build_memory_mb": 0}, "build_memory_mb must be"),
        ({"build_memory_mb": 2_097_152}, "build_memory_mb must be"),
        ({"build_memory_mb": "1GB"}, "build_memory_mb must be"),
        ({"build_workers": -1}, "build_workers must be"),
        ({"build_workers": 1_025}, "build_workers must be"),
        ({"build_workers": False}, "build_workers must be"),
    ],
)
def test_an_hnsw_index_outside_pgvectors_range_is_refused(
    arguments: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        HnswIndex(**arguments)


def test_an_index_must_be_an_hnsw_index_of_at_most_2000_dimensions() -> None:
    with pytest.raises(ValueError, match="HnswIndex"):
        PostgresVectorStore("postgresql://x/y", dimension=4, index="hnsw")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2000"):
        PostgresVectorStore("postgresql://x/y", dimension=2001, index=HnswIndex())
    PostgresVectorStore("postgresql://x/y", dimension=2000, index=HnswIndex())


def test_an_hnsw_index_takes_its_build_settings_at_their_bounds() -> None:
    assert HnswIndex(build_memory_mb=1, build_workers=0).build_workers == 0
    assert HnswIndex(build_memory_mb=2_097_151, build_workers=1_024).build_memory_mb == 2_097_151
    assert HnswIndex().build_memory_mb is None


# -- the exact search's held copy, kept current ----------------------------------------


async def test_a_search_sees_what_another_store_wrote_changed_and_deleted(
    postgres: PostgresSchemas,
) -> None:
    """Two stores on one schema, as two processes would be; the reader's copy keeps up."""
    schema = postgres.new_schema()
    reader, writer = (
        postgres.vector_store(DIMENSION, schema),
        postgres.vector_store(DIMENSION, schema),
    )

    async def ids(tenant: TenantId = TENANT) -> list[EntityId]:
        return [match.entity_id for match in await reader.search(basis(0), tenant, k=10)]

    assert await ids() == []
    await writer.upsert(entity_id(1), towards(1, 0.1), TENANT)
    await writer.upsert(entity_id(2), towards(2, 0.5), TENANT)
    await writer.upsert(entity_id(1), basis(0), OTHER_TENANT)
    assert await ids() == [entity_id(1), entity_id(2)]
    await writer.upsert(entity_id(1), towards(1, 0.9), TENANT, metadata={"entity_type": "x"})
    assert await ids() == [entity_id(2), entity_id(1)]
    assert await writer.delete(entity_id(2), TENANT)
    assert await ids() == [entity_id(1)]
    [match] = await reader.search(basis(0), TENANT, k=1, entity_types=["x"])
    assert match.metadata == {"entity_type": "x"}
    await writer.upsert(entity_id(2), basis(0), TENANT)
    assert await ids() == [entity_id(2), entity_id(1)]
    assert await writer.delete_by_tenant(TENANT) == 2
    assert await ids() == []
    await writer.upsert(entity_id(3), basis(0), TENANT)
    assert await ids() == [entity_id(3)]
    assert await ids(OTHER_TENANT) == [entity_id(1)]


async def test_a_held_tenant_fetches_only_what_changed(postgres: PostgresSchemas) -> None:
    schema = postgres.new_schema()
    store = postgres.vector_store(4, schema)
    records = [
        VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=[1.0, n, 0.0, 0.0])
        for n in range(1, 51)
    ]
    await store.upsert_many(records)
    await store.search([1.0, 0, 0, 0], TENANT)
    held = store._tenants.peek(TENANT)
    assert held is not None
    await store.upsert(entity_id(51), [1.0, 0.0, 0.0, 0.0], TENANT)
    [best] = await store.search([1.0, 0, 0, 0], TENANT, k=1)
    assert best.entity_id == entity_id(51)
    assert store._tenants.peek(TENANT) is held
    assert len(held.value) == 51


# -- HNSW --------------------------------------------------------------------------


async def test_a_tenant_filtered_index_search_still_returns_k(postgres: PostgresSchemas) -> None:
    """Another tenant's 2,000 closer vectors crowd the index; the iterative scan gets past them.

    The table is analysed so that the planner, knowing the tenant is large,
    searches by the index rather than scanning the tenant (seen red with the
    iterative scan turned off: no match at all).
    """
    schema = postgres.new_schema()
    store = postgres.vector_store(4, schema, index=HnswIndex(ef_search=10))
    rng = np.random.default_rng(3)
    crowd = [
        VectorRecord(
            entity_id=entity_id(n),
            tenant_id=OTHER_TENANT,
            vector=[1.0, *(rng.normal(size=3) * 0.01).tolist()],
        )
        for n in range(1, 2001)
    ]
    mine = [
        VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=[0.0, 1.0, n, 0.0])
        for n in range(1, 1001)
    ]
    await store.upsert_many(crowd + mine)
    connection = await postgres.connect()
    try:
        await connection.execute(f"ANALYZE {schema}.vector_records")
    finally:
        await connection.close()
    matches = await store.search([1.0, 0.0, 0.0, 0.0], TENANT, k=12)
    assert len(matches) == 12
    assert {match.entity_id for match in matches} <= {record.entity_id for record in mine}


async def test_an_index_search_reads_on_when_ties_outnumber_what_it_reads_first(
    postgres: PostgresSchemas,
) -> None:
    """Sixty equal nearest vectors, more than the `k` + 32 candidates a search reads first.

    Every candidate read is within the margin of the k-th, so the search
    reads all it visited and breaks the tie by `str(entity_id)`, as exact
    search does (seen red with that second read removed). Stored in
    descending id order, so the first candidates read are not the smallest.
    """
    store = postgres.vector_store(4, index=HnswIndex())
    tied = [
        VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=[1.0, 0.0, 0.0, 0.0])
        for n in range(60, 0, -1)
    ]
    farther = [
        VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=[0.0, 1.0, 0.0, 0.0])
        for n in range(61, 101)
    ]
    for record in tied + farther:
        await store.upsert_many([record])
    matches = await store.search([1.0, 0.0, 0.0, 0.0], TENANT, k=3)
    smallest = sorted((record.entity_id for record in tied), key=str)[:3]
    assert [match.entity_id for match in matches] == smallest


async def _index_build_notices(postgres: PostgresSchemas, index: HnswIndex) -> list[str]:
    """The server's notices while a store creates `index` over 3,000 stored vectors."""
    schema = postgres.new_schema()
    rng = np.random.default_rng(5)
    await postgres.vector_store(64, schema).upsert_many(
        [
            VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=rng.normal(size=64))
            for n in range(1, 3001)
        ]
    )
    notices: list[str] = []

    async def listen(connection: PoolConnectionProxy, /) -> None:
        connection.add_log_listener(lambda _, message: notices.append(str(message)))

    # A listener is dropped when the store releases the connection: add it on each acquire.
    async with asyncpg.create_pool(postgres.dsn, min_size=1, max_size=1, setup=listen) as pool:
        store = PostgresVectorStore(pool=pool, dimension=64, schema=schema, index=index)
        async with store:
            assert len(await store.search(rng.normal(size=64), TENANT, k=3)) == 3
    return notices


@pytest.mark.filterwarnings("ignore:.*active log listener:asyncpg.InterfaceWarning")
async def test_the_index_is_built_with_the_memory_it_is_given(postgres: PostgresSchemas) -> None:
    """The server says when the graph outgrows `maintenance_work_mem`: at 1 MB, not by default.

    Seen red with the build settings left unapplied (no notice at 1 MB).
    """
    small = await _index_build_notices(postgres, HnswIndex(build_memory_mb=1, build_workers=0))
    assert any("maintenance_work_mem" in notice for notice in small)
    default = await _index_build_notices(postgres, HnswIndex())
    assert not any("maintenance_work_mem" in notice for notice in default)


async def test_a_vector_written_and_deleted_elsewhere_meanwhile_is_simply_absent(
    postgres: PostgresSchemas,
) -> None:
    """The reader is handed a deletion of a vector it never held, and a row moved by another."""
    schema = postgres.new_schema()
    reader, writer = postgres.vector_store(4, schema), postgres.vector_store(4, schema)
    await writer.upsert_many(
        [
            VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=[1.0, n, 0.0, 0.0])
            for n in range(1, 5)
        ]
    )
    assert len(await reader.search([1.0, 0, 0, 0], TENANT)) == 4
    await writer.upsert(entity_id(9), [1.0, 0.0, 0.0, 0.0], TENANT)
    await writer.delete(entity_id(9), TENANT)
    await writer.delete(entity_id(1), TENANT)
    matches = await reader.search([1.0, 0, 0, 0], TENANT)
    assert [match.entity_id for match in matches] == [entity_id(2), entity_id(3), entity_id(4)]
    record = await reader.get(entity_id(4), TENANT)
    assert record is not None
    assert record.vector == [1.0, 4.0, 0.0, 0.0]


async def test_metadata_changed_after_validation_is_refused_by_index(
    postgres: PostgresSchemas,
) -> None:
    store = postgres.vector_store(4)
    good = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=[1.0, 0, 0, 0])
    bad = VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=[1.0, 0, 0, 0])
    bad.metadata["tags"] = {"a set"}
    with pytest.raises(ValueError, match=r"records\[1\]\.metadata"):
        await store.upsert_many([good, bad])
    assert await store.get(entity_id(1), TENANT) is None


async def test_a_vector_of_the_wrong_length_in_the_table_is_a_store_error(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    store = postgres.vector_store(4, schema)
    await store.upsert(entity_id(1), [1.0, 0.0, 0.0, 0.0], TENANT)
    connection = await postgres.connect()
    try:
        await connection.execute(
            f"ALTER TABLE {schema}.vector_records ALTER COLUMN embedding TYPE vector"
        )
        await connection.execute(
            f"UPDATE {schema}.vector_records SET embedding = '[1,2,3]', revision = 99"
        )
        await connection.execute(f"UPDATE {schema}.vector_tenants SET generation = 99")
    finally:
        await connection.close()
    with pytest.raises(StoreError, match="damaged"):
        await store.get(entity_id(1), TENANT)
    with pytest.raises(StoreError, match="damaged"):
        await store.search([1.0, 0.0, 0.0, 0.0], TENANT)


async def test_concurrent_first_calls_on_one_store_prepare_it_once(
    postgres: PostgresSchemas,
) -> None:
    store = postgres.vector_store(4)
    results = await asyncio.gather(*(store.search([1.0, 0, 0, 0], TENANT) for _ in range(5)))
    assert results == [[]] * 5


def test_the_representation_names_the_mode_and_state() -> None:
    store = PostgresVectorStore("postgresql://x/y", dimension=4, index=HnswIndex())
    assert repr(store) == (
        "PostgresVectorStore(dimension=4, "
        "HnswIndex(m=16, ef_construction=200, ef_search=200, "
        "build_memory_mb=None, build_workers=None), open)"
    )
    asyncio.run(store.close())
    assert repr(PostgresVectorStore("postgresql://x/y", dimension=4)).endswith("exact, open)")
    assert repr(store).endswith("closed)")


@pytest.mark.parametrize(
    "sizes",
    [
        [],
        [10],
        [_COPY_MESSAGE_BYTES],  # ends exactly on a message: nothing is left over
        [_COPY_MESSAGE_BYTES - 1, 1, 5],
        [700_000, 700_000, 700_000],
    ],
)
async def test_copy_rows_are_sent_whole_in_messages_of_about_a_mebibyte(sizes: list[int]) -> None:
    pieces = [bytes([n % 251]) * size for n, size in enumerate(sizes)]
    messages = [message async for message in _chunked(iter(pieces))]
    assert b"".join(messages) == b"".join(pieces)
    assert all(messages)
    assert all(len(message) >= _COPY_MESSAGE_BYTES for message in messages[:-1])
