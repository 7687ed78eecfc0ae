"""The in-memory graph store against the shared `GraphStore` contract."""

from __future__ import annotations

from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.ports.graph_store import GraphStore
from redstring.testing.factories import make_entity
from redstring.testing.graph_store import GraphStoreCompliance


class TestInMemoryGraphStore(GraphStoreCompliance):
    def new_store(self) -> GraphStore:
        return InMemoryGraphStore()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryGraphStore(), GraphStore)


async def test_entities_without_properties_share_nothing_a_reader_can_change() -> None:
    store = InMemoryGraphStore()
    first, second = make_entity(name="Ada Lovelace"), make_entity(name="Grace Hopper")
    await store.upsert_entities([first, second])
    read = await store.get_entity(first.id, first.tenant_id)
    assert read is not None
    read.properties["leaked"] = True
    again = await store.get_entity(second.id, second.tenant_id)
    reread = await store.get_entity(first.id, first.tenant_id)
    assert again is not None
    assert again.properties == {}
    assert reread is not None
    assert reread.properties == {}
    assert first.properties == {}
