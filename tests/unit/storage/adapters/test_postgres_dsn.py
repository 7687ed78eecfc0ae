"""What a Postgres store says about a DSN it cannot use (never its password), and after close."""

from __future__ import annotations

from uuid import uuid4

import pytest

from redstring.domain.exceptions import ClosedError, StoreError
from redstring.events.adapters.postgres import PostgresEventLog
from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.storage.adapters.postgres import PostgresClient
from redstring.testing.factories import TENANT, make_entity
from redstring.vector.adapters.postgres import PostgresVectorStore


async def test_a_libpq_keyword_string_is_refused_without_printing_its_password() -> None:
    # asyncpg takes only postgresql:// URLs; the how-to says so.
    secret = f"s3cret{uuid4().hex}"
    dsn = f"host=/nonexistent-redstring-socket-dir user=app password={secret}"
    async with PostgresGraphStore(dsn) as graph:
        with pytest.raises(StoreError, match="invalid DSN") as raised:
            await graph.get_entity(make_entity().id, TENANT)
    assert secret not in str(raised.value)


async def _first_call(store: str, dsn: str) -> None:
    if store == "graph":
        async with PostgresGraphStore(dsn) as graph:
            await graph.count_by_tenant()
    elif store == "vectors":
        async with PostgresVectorStore(dsn, dimension=2, model="m") as vectors:
            await vectors.count_by_tenant()
    else:
        async with PostgresEventLog(dsn) as log:
            await log.last_sequence()


@pytest.mark.parametrize("store", ["graph", "vectors", "events"])
async def test_an_unreachable_server_names_no_password_from_the_query_string(store: str) -> None:
    secret = f"s3cret{uuid4().hex}"
    dsn = f"postgresql://app@/app?host=/nonexistent-redstring-socket-dir&password={secret}"
    with pytest.raises(StoreError) as raised:
        await _first_call(store, dsn)
    assert isinstance(raised.value.__cause__, OSError)
    assert secret not in str(raised.value)


async def test_a_closed_client_closes_again_quietly_and_opens_no_pool() -> None:
    # What every Postgres adapter is built on keeps ADR 0017's rule by itself.
    client = PostgresClient(
        dsn="postgresql://app@/app?host=/nonexistent-redstring-socket-dir",
        pool=None,
        schema="redstring",
        pool_size=1,
        store="test store",
        resource="the test client",
    )
    await client.close()
    await client.close()
    assert client.closed
    with pytest.raises(ClosedError) as raised:
        async with client.connection():
            pass
    assert raised.value.resource == "the test client"
