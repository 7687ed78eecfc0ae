"""What a Postgres store says about a DSN it cannot use (never its password), and after close."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING
from uuid import uuid4

import pytest

from redstring.domain.exceptions import ClosedError, StoreError
from redstring.events.adapters.postgres import PostgresEventLog
from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.storage.adapters.postgres import PostgresClient, check_dsn
from redstring.vector.adapters.postgres import PostgresVectorStore

if TYPE_CHECKING:
    from collections.abc import Callable


def test_a_libpq_keyword_string_is_refused_without_printing_its_password() -> None:
    # asyncpg takes only postgresql:// URLs; the how-to says so.
    secret = f"s3cret{uuid4().hex}"
    dsn = f"host=/nonexistent-redstring-socket-dir user=app password={secret}"
    with pytest.raises(ValueError, match="libpq keyword string") as raised:
        PostgresGraphStore(dsn)
    assert secret not in str(raised.value)


@pytest.mark.parametrize(
    ("dsn", "match"),
    [
        ("postgresql://app:{secret}@db:x/app", "host 1 must be .* a numeric port"),
        ("postgresql://app:{secret}@db:5432,replica:5x/app", "host 2 must be .* a numeric port"),
        ("postgresql://app:pa?{secret}@db/app", "host 1 must be"),
        ("postgresql://app@db/app?sslmode=require&password=pa&{secret}", "query must be name="),
        ("postgresql://app:{secret}@[::1/app", "not a URL asyncpg can read"),
        ("mysql://app:{secret}@db/app", "got scheme 'mysql'"),
    ],
)
@pytest.mark.parametrize("store", ["graph", "vectors", "events"])
def test_a_malformed_url_is_refused_when_the_store_is_made_and_never_shows_the_password(
    dsn: str, match: str, store: str
) -> None:
    # asyncpg would parse it only on the first call, echoing a query field as it refuses it.
    secret = f"s3cret{uuid4().hex}"
    opens: dict[str, Callable[[str], object]] = {
        "graph": partial(PostgresGraphStore),
        "vectors": partial(PostgresVectorStore, dimension=2, model="m"),
        "events": partial(PostgresEventLog),
    }
    with pytest.raises(ValueError, match=match) as raised:
        opens[store](dsn.format(secret=secret))
    assert secret not in str(raised.value)


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://app@/app?host=/run/postgresql&password=x",
        "postgres://app:p%26q@db.internal:5432,replica:5433/app?sslmode=require",
        "postgresql://app@[::1]:5432/app",
        "postgresql://app@[::1]/app",
        "postgresql:///app",
        "postgresql://db",
    ],
)
def test_every_url_shape_asyncpg_reads_is_accepted(dsn: str) -> None:
    assert check_dsn(dsn) == dsn


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
