"""Postgres stores for tests: each in a schema of its own, dropped after the test."""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any, Protocol

import asyncpg

from redstring.chunks.adapters.postgres import PostgresChunkStore
from redstring.events.adapters.postgres import PostgresEventLog
from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.vector.adapters.postgres import PostgresVectorStore


class _Closable(Protocol):
    async def close(self) -> None: ...


_keepers: set[asyncio.Task[None]] = set()
_numbers = itertools.count()


def close_with_the_loop[T: _Closable](store: T) -> T:
    """Close `store` when the running event loop shuts down, if the test has not.

    A pool belongs to the loop that opened it and must be closed on it. The
    compliance suites open stores inside `asyncio.run` (one per hypothesis
    example) and leave them open; `asyncio.run`, like pytest-asyncio, cancels
    the tasks still pending before it closes its loop, and the cancelled
    keeper closes the store then.
    """

    async def keep() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await store.close()

    task = asyncio.get_running_loop().create_task(keep())
    _keepers.add(task)
    task.add_done_callback(_keepers.discard)
    return store


class PostgresSchemas:
    """Hands out fresh schema names on one server and drops them all afterwards."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._made: list[str] = []

    def new_schema(self) -> str:
        """A schema name no other store of this session uses."""
        name = f"test_{os.getpid()}_{next(_numbers)}"
        self._made.append(name)
        return name

    def graph_store(self, schema: str | None = None, **options: Any) -> PostgresGraphStore:
        """A graph store in a new schema (or `schema`), closed with the running loop."""
        store = PostgresGraphStore(self.dsn, schema=schema or self.new_schema(), **options)
        return close_with_the_loop(store)

    def event_log(self, schema: str | None = None, **options: Any) -> PostgresEventLog:
        """An event log in a new schema (or `schema`), closed with the running loop."""
        log = PostgresEventLog(self.dsn, schema=schema or self.new_schema(), **options)
        return close_with_the_loop(log)

    def vector_store(
        self, dimension: int, schema: str | None = None, **options: Any
    ) -> PostgresVectorStore:
        """A vector store in a new schema (or `schema`), closed with the running loop."""
        store = PostgresVectorStore(
            self.dsn, dimension=dimension, schema=schema or self.new_schema(), **options
        )
        return close_with_the_loop(store)

    def chunk_store(self, schema: str | None = None, **options: Any) -> PostgresChunkStore:
        """A chunk store in a new schema (or `schema`), closed with the running loop."""
        store = PostgresChunkStore(self.dsn, schema=schema or self.new_schema(), **options)
        return close_with_the_loop(store)

    async def connect(self) -> asyncpg.Connection:
        """A plain connection to the server, for a test to look at tables directly."""
        return await asyncpg.connect(self.dsn)

    def drop_all(self) -> None:
        async def drop() -> None:
            connection = await asyncpg.connect(self.dsn)
            try:
                for name in self._made:
                    await connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            finally:
                await connection.close()

        if self._made:
            with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:
                runner.run(drop())
