"""The Postgres graph store: the shared contract, plus schemas, pools, crashes and injection."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.ports.graph_store import GraphStore
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.factories import TENANT
from redstring.testing.graph_store import GraphStoreCompliance

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas


class TestPostgresGraphStore(GraphStoreCompliance):
    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_store(self) -> GraphStore:
        return self._postgres.graph_store()

    async def test_it_satisfies_the_port_and_the_lifetime(self) -> None:
        store = self.new_store()
        assert isinstance(store, GraphStore)
        assert isinstance(store, AsyncClosable)
        assert isinstance(store, PostgresGraphStore)


async def test_empty_batches_touch_no_database() -> None:
    store = PostgresGraphStore("postgresql://postgres@/postgres?host=/nonexistent-socket-dir")
    await store.upsert_entities([])
    await store.upsert_relationships([])
    assert await store.get_entities([], TENANT) == []
    assert await store.find_by_blocking_keys([], TENANT) == {}
    assert repr(store) == "PostgresGraphStore(schema='redstring', open)"
    await store.close()
    assert repr(store) == "PostgresGraphStore(schema='redstring', closed)"
