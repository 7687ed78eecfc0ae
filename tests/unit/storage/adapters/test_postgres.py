"""What every Postgres adapter shares: construction, pools, schemas, errors, lifetime."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import TYPE_CHECKING

import asyncpg
import pytest

import redstring
from redstring.domain.exceptions import (
    ClosedError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StoreError,
)
from redstring.domain.limits import MAX_POOL_SIZE
from redstring.events.adapters.postgres import PostgresEventLog
from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.storage.adapters.postgres import check_schema_name
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.vector.adapters.postgres import PostgresVectorStore

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas


@pytest.mark.parametrize(
    "module",
    [
        "redstring.storage.adapters.postgres",
        "redstring.graph.adapters.postgres",
        "redstring.vector.adapters.postgres",
        "redstring.events.adapters.postgres",
    ],
)
def test_a_missing_driver_raises_an_import_error_naming_the_extra(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)
    for loaded in [name for name in sys.modules if name.endswith(".postgres")]:
        monkeypatch.delitem(sys.modules, loaded)
    with pytest.raises(ImportError, match=r"redstring\[postgres\]"):
        importlib.import_module(module)


def test_the_postgres_names_load_from_redstring_on_first_access() -> None:
    assert redstring.PostgresGraphStore is PostgresGraphStore
    assert redstring.PostgresVectorStore is PostgresVectorStore
    assert redstring.PostgresEventLog is PostgresEventLog
    with pytest.raises(AttributeError, match="NoSuchStore"):
        _ = redstring.NoSuchStore


@pytest.mark.parametrize(
    "bad",
    ["", "Redstring", "1st", 'x"; DROP SCHEMA public CASCADE; --', "a-b", "x" * 64, 7],
)
def test_a_schema_that_is_not_a_plain_identifier_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="schema"):
        check_schema_name(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="schema"):
        PostgresGraphStore("postgresql://localhost/x", schema=bad)  # type: ignore[arg-type]


def test_the_longest_plain_identifier_is_a_schema() -> None:
    assert check_schema_name("_" + "a" * 62) == "_" + "a" * 62


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "exactly one of dsn and pool"),
        ({"dsn": "   "}, "dsn"),
        ({"dsn": "postgresql://localhost/x", "pool_size": 0}, "pool_size"),
        ({"dsn": "postgresql://localhost/x", "pool_size": True}, "pool_size"),
        ({"dsn": "postgresql://localhost/x", "pool_size": MAX_POOL_SIZE + 1}, "pool_size"),
        ({"dsn": "postgresql://localhost/x", "pool_size": 10**9}, "pool_size"),
        ({"pool": "not a pool"}, "pool must be an asyncpg.Pool"),
    ],
)
def test_construction_refuses_a_bad_connection_argument(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        PostgresGraphStore(**arguments)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        PostgresVectorStore(dimension=4, **arguments)  # type: ignore[arg-type]


async def test_the_largest_pool_size_opens_a_pool_that_answers(postgres: PostgresSchemas) -> None:
    async with postgres.event_log(pool_size=MAX_POOL_SIZE) as log:
        assert await log.last_sequence() == 0


async def test_both_a_dsn_and_a_pool_are_refused(postgres: PostgresSchemas) -> None:
    async with asyncpg.create_pool(postgres.dsn, min_size=0, max_size=1) as pool:
        with pytest.raises(ValueError, match="exactly one"):
            PostgresGraphStore(postgres.dsn, pool=pool)


async def test_a_pool_the_caller_owns_is_used_and_never_closed(postgres: PostgresSchemas) -> None:
    entity = make_entity()
    async with asyncpg.create_pool(postgres.dsn, min_size=1, max_size=2) as pool:
        schema = postgres.new_schema()
        async with PostgresGraphStore(pool=pool, schema=schema) as graph:
            await graph.upsert_entity(entity)
        async with PostgresVectorStore(pool=pool, dimension=4, schema=schema) as vectors:
            await vectors.upsert(entity.id, [1.0, 0.0, 0.0, 0.0], TENANT)
        assert not pool.is_closing()
        assert await pool.fetchval(f"SELECT count(*) FROM {schema}.graph_entities") == 1
        assert await pool.fetchval(f"SELECT count(*) FROM {schema}.vector_records") == 1


async def test_a_pool_the_store_opened_hands_connections_back_without_resetting_them(
    postgres: PostgresSchemas,
) -> None:
    """The default release of asyncpg sends `RESET ALL` and more: a round trip per call.

    The stores leave no session state to reset, so their own pools skip it:
    a session setting survives the release (seen red with the default reset).
    """
    store = postgres.graph_store()
    await store.find_entities(TENANT, limit=1)
    client = store._client
    async with client.connection() as connection:
        await connection.execute("SELECT set_config('application_name', 'kept', false)")
    async with client.connection() as connection:
        assert await connection.fetchval("SHOW application_name") == "kept"


async def test_a_store_that_opened_its_pool_closes_it(postgres: PostgresSchemas) -> None:
    store = postgres.graph_store()
    await store.upsert_entity(make_entity())
    pool = store._client._pool
    assert pool is not None
    await store.close()
    assert pool.is_closing()


async def test_a_closed_store_refuses_to_work_and_closes_idempotently(
    postgres: PostgresSchemas,
) -> None:
    graph, vectors = postgres.graph_store(), postgres.vector_store(4)
    for store in (graph, vectors):
        await store.close()
        await store.close()
    with pytest.raises(ClosedError, match="closed"):
        await graph.get_entity(make_entity().id, TENANT)
    with pytest.raises(ClosedError, match="closed"):
        await vectors.search([1.0, 0.0, 0.0, 0.0], TENANT)


async def test_an_unreachable_server_is_a_store_error_with_the_driver_error_as_cause(
    tmp_path: object,
) -> None:
    dsn = "postgresql://postgres@/postgres?host=/nonexistent-redstring-socket-dir"
    async with PostgresGraphStore(dsn) as graph:
        with pytest.raises(StoreError, match="postgres graph store") as raised:
            await graph.get_entity(make_entity().id, TENANT)
    assert isinstance(raised.value.__cause__, OSError)


async def test_a_schema_of_a_newer_layout_is_refused_naming_both_versions(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    await postgres.graph_store(schema).find_entities(TENANT)
    connection = await postgres.connect()
    try:
        await connection.execute(
            f"UPDATE {schema}.meta SET value = '9' WHERE component = 'graph' "
            "AND key = 'schema_version'"
        )
    finally:
        await connection.close()
    with pytest.raises(StoreError, match=r"version 9 \(written by a newer redstring\).*1"):
        await postgres.graph_store(schema).find_entities(TENANT)


async def test_stores_opening_one_new_schema_at_once_all_succeed(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    graphs = [postgres.graph_store(schema) for _ in range(4)]
    vectors = [postgres.vector_store(4, schema) for _ in range(4)]
    await asyncio.gather(
        *(graph.find_entities(TENANT) for graph in graphs),
        *(store.search([1.0, 0.0, 0.0, 0.0], TENANT) for store in vectors),
    )


async def test_closing_while_the_pool_opens_leaves_no_pool_open(postgres: PostgresSchemas) -> None:
    store = PostgresGraphStore(postgres.dsn, schema=postgres.new_schema())
    reading = asyncio.create_task(store.get_entity(make_entity().id, TENANT))
    await asyncio.sleep(0)
    await store.close()
    with pytest.raises(ClosedError, match="closed"):
        await reading
    assert store._client._pool is None


async def test_counts_per_tenant_keep_two_tenants_with_the_same_ids_apart(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    graph = postgres.graph_store(schema)
    vectors = postgres.vector_store(4, schema)
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    twin = make_entity(id=ada.id, tenant_id=OTHER_TENANT, name="Ada Lovelace")
    await graph.upsert_entities([ada, babbage, twin])
    await graph.upsert_relationship(make_relationship(ada, babbage))
    await vectors.upsert(ada.id, [1.0, 0.0, 0.0, 0.0], TENANT)
    await vectors.upsert(ada.id, [0.0, 1.0, 0.0, 0.0], OTHER_TENANT)
    await vectors.upsert(babbage.id, [0.0, 0.0, 1.0, 0.0], OTHER_TENANT)
    assert await graph.count_by_tenant() == {TENANT: (2, 1), OTHER_TENANT: (1, 0)}
    assert await vectors.count_by_tenant() == {TENANT: 1, OTHER_TENANT: 2}


async def test_read_only_stores_refuse_an_empty_schema_and_leave_it_empty(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    with pytest.raises(StoreError, match="holds no redstring graph"):
        await postgres.graph_store(schema, read_only=True).count_by_tenant()
    with pytest.raises(StoreError, match="holds no redstring vector"):
        await postgres.vector_store(4, schema, read_only=True).count_by_tenant()
    connection = await postgres.connect()
    try:
        assert (
            await connection.fetchval(
                "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema
            )
            == 0
        )
    finally:
        await connection.close()


async def test_read_only_stores_read_what_was_written_and_refuse_every_write(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    ada = make_entity(name="Ada Lovelace")
    await postgres.graph_store(schema).upsert_entity(ada)
    await postgres.vector_store(4, schema, model="m").upsert(ada.id, [1.0, 0, 0, 0], TENANT)
    graph = postgres.graph_store(schema, read_only=True)
    vectors = postgres.vector_store(4, schema, read_only=True)
    assert await graph.get_entity(ada.id, TENANT) == ada
    assert await graph.find_name_candidates("Ada Lovelace", TENANT) == [ada]
    assert [match.entity_id for match in await vectors.search([1.0, 0, 0, 0], TENANT)] == [ada.id]
    with pytest.raises(StoreError, match="read-only"):
        await graph.upsert_entity(make_entity(name="Grace Hopper"))
    with pytest.raises(StoreError, match="read-only"):
        await vectors.delete(ada.id, TENANT)
    assert await graph.count_by_tenant() == {TENANT: (1, 0)}
    with pytest.raises(EmbeddingModelMismatchError):
        await postgres.vector_store(4, schema, model="other", read_only=True).count_by_tenant()
    with pytest.raises(DimensionMismatchError):
        await postgres.vector_store(3, schema, read_only=True).count_by_tenant()


async def test_stored_settings_name_the_dimension_and_model_or_none(
    postgres: PostgresSchemas,
) -> None:
    named, unnamed, empty = (postgres.new_schema() for _ in range(3))
    await postgres.vector_store(4, named, model="m").count_by_tenant()
    await postgres.vector_store(3, unnamed).count_by_tenant()
    await postgres.graph_store(empty).count_by_tenant()
    settings = PostgresVectorStore.stored_settings
    assert await settings(postgres.dsn, schema=named) == (4, "m")
    assert await settings(postgres.dsn, schema=unnamed) == (3, None)
    assert await settings(postgres.dsn, schema=empty) is None
    assert await settings(postgres.dsn, schema=postgres.new_schema()) is None


def test_read_only_is_refused_with_a_pool_the_caller_owns_or_as_a_non_bool() -> None:
    with pytest.raises(ValueError, match="read_only must be a bool"):
        PostgresGraphStore("postgresql://localhost/x", read_only="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="read_only needs a dsn"):
        PostgresGraphStore(pool=object(), read_only=True)  # type: ignore[arg-type]
