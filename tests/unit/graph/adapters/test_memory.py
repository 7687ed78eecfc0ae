"""The in-memory graph store against the shared `GraphStore` contract."""

from __future__ import annotations

from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.ports.graph_store import GraphStore
from redstring.testing.graph_store import GraphStoreCompliance


class TestInMemoryGraphStore(GraphStoreCompliance):
    def new_store(self) -> GraphStore:
        return InMemoryGraphStore()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryGraphStore(), GraphStore)
