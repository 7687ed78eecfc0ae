"""The Postgres vector store: the shared contract, plus caching, HNSW, schemas and pools."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorStore
from redstring.testing.vector_store import DIMENSION, VectorStoreCompliance
from redstring.vector.adapters.postgres import HnswIndex

if TYPE_CHECKING:
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
