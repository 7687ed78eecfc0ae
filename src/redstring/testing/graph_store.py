"""The `GraphStore` contract, as a suite every adapter's tests subclass.

Subclass `GraphStoreCompliance` in a `Test...` class and implement
`new_store()`; every test here then runs against that adapter. Hypothesis
properties build a fresh store per example.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redstring.domain.blocking import prefix_key
from redstring.domain.exceptions import MissingEntityError
from redstring.domain.ids import EntityId
from redstring.ports.graph_store import GraphStore
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.lifetime import LifetimeCompliance

if TYPE_CHECKING:
    from collections.abc import Coroutine


#: Every adapter's subclass runs the same properties, so hypothesis sees several
#: executors; each example builds its own store, so none carries state across.
PROPERTY_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
)

safe_characters = st.characters(codec="utf-8", exclude_characters="\x00")
names = st.text(alphabet=safe_characters, min_size=1, max_size=20).filter(str.strip)


def run[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion inside a synchronous hypothesis test."""
    return asyncio.run(coroutine)


def entity_id(n: int) -> EntityId:
    """A fixed id whose string order is its number's order."""
    return EntityId(UUID(int=n))


class GraphStoreCompliance(LifetimeCompliance):
    """Every rule of `redstring.ports.GraphStore`; subclass and provide `new_store`."""

    port = GraphStore

    def new_adapter(self) -> GraphStore:
        return self.new_store()

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    # -- entities: round trip, last write wins, copies -------------------------

    @PROPERTY_SETTINGS
    @given(
        name=names,
        properties=st.dictionaries(st.text(alphabet=safe_characters, max_size=4), st.integers()),
    )
    @example(name="A", properties={})
    @example(name=" padded  name ", properties={"k": 1})
    def test_an_entity_reads_back_equal(self, name: str, properties: dict[str, int]) -> None:
        async def scenario() -> None:
            store = self.new_store()
            entity = make_entity(name=name, properties=properties)
            await store.upsert_entity(entity)
            assert await store.get_entity(entity.id, TENANT) == entity

        run(scenario())

    async def test_the_last_write_wins_and_reindexes_its_keys(self) -> None:
        store = self.new_store()
        first = make_entity(id=entity_id(1), name="Ada Lovelace")
        second = make_entity(id=entity_id(1), name="Charles Babbage")
        await store.upsert_entity(first)
        await store.upsert_entity(second)
        assert await store.get_entity(entity_id(1), TENANT) == second
        assert await store.find_by_blocking_key(prefix_key(first), TENANT) == []
        assert await store.find_by_blocking_key(prefix_key(second), TENANT) == [second]
        assert await store.find_entities(TENANT, name="Ada Lovelace") == []

    async def test_a_later_duplicate_in_one_batch_wins(self) -> None:
        store = self.new_store()
        await store.upsert_entities(
            [make_entity(id=entity_id(1), name="First"), make_entity(id=entity_id(1), name="Last")]
        )
        stored = await store.get_entity(entity_id(1), TENANT)
        assert stored is not None
        assert stored.name == "Last"

    async def test_mutating_what_was_written_or_read_changes_nothing_stored(self) -> None:
        store = self.new_store()
        properties: dict[str, Any] = {"aliases": ["Ada"]}
        entity = make_entity(id=entity_id(1), properties=properties)
        await store.upsert_entity(entity)
        properties["aliases"].append("written")
        entity.properties["aliases"].append("written via entity")
        read = await store.get_entity(entity_id(1), TENANT)
        assert read is not None
        read.properties["aliases"].append("read")
        for found in (await store.find_by_blocking_keys([prefix_key(entity)], TENANT)).values():
            found[0].properties["aliases"].append("found")
        again = await store.get_entity(entity_id(1), TENANT)
        assert again is not None
        assert again.properties == {"aliases": ["Ada"]}

    async def test_a_missing_entity_reads_as_none(self) -> None:
        assert await self.new_store().get_entity(entity_id(1), TENANT) is None

    # -- tenants ---------------------------------------------------------------

    async def test_two_tenants_holding_the_same_entity_id_never_cross(self) -> None:
        store = self.new_store()
        mine = make_entity(id=entity_id(1), name="Ada Lovelace")
        theirs = make_entity(id=entity_id(1), name="Ada Lovelace", tenant_id=OTHER_TENANT)
        theirs = theirs.model_copy(update={"description": "the other tenant's"})
        await store.upsert_entities([mine, theirs])
        assert await store.get_entity(entity_id(1), TENANT) == mine
        assert await store.get_entities([entity_id(1)], TENANT) == [mine]
        assert await store.find_by_blocking_key(prefix_key(mine), TENANT) == [mine]
        assert await store.find_entities(TENANT, name="Ada Lovelace") == [mine]
        assert await store.delete_by_tenant(TENANT) == 1
        assert await store.get_entity(entity_id(1), OTHER_TENANT) == theirs
        assert await store.get_entity(entity_id(1), TENANT) is None

    async def test_a_relationship_endpoint_in_another_tenant_is_missing(self) -> None:
        store = self.new_store()
        source = make_entity(id=entity_id(1))
        target = make_entity(id=entity_id(2), tenant_id=OTHER_TENANT)
        await store.upsert_entities([source, target])
        with pytest.raises(MissingEntityError) as raised:
            await store.upsert_relationship(make_relationship(source, target))
        assert raised.value.entity_id == entity_id(2)
        assert raised.value.tenant_id == TENANT

    # -- batch reads -----------------------------------------------------------

    async def test_get_entities_omits_missing_ids_and_repeats_nothing(self) -> None:
        store = self.new_store()
        held = [make_entity(id=entity_id(n)) for n in (1, 2, 3)]
        await store.upsert_entities(held)
        found = await store.get_entities(
            [entity_id(3), entity_id(9), entity_id(1), entity_id(3)], TENANT
        )
        assert sorted(found, key=lambda e: str(e.id)) == [held[0], held[2]]
        assert await store.get_entities([], TENANT) == []

    async def test_every_requested_key_is_present_and_an_entity_appears_under_each(self) -> None:
        store = self.new_store()
        ada = make_entity(id=entity_id(2), name="Ada Lovelace", blocking_keys=frozenset({"x", "y"}))
        bob = make_entity(id=entity_id(1), name="Bob", blocking_keys=frozenset({"x"}))
        await store.upsert_entities([ada, bob])
        found = await store.find_by_blocking_keys(["x", "y", "nothing"], TENANT)
        assert found == {"x": [bob, ada], "y": [ada], "nothing": []}
        assert await store.find_by_blocking_keys([], TENANT) == {}

    async def test_an_entity_without_keys_is_found_under_none(self) -> None:
        store = self.new_store()
        await store.upsert_entity(make_entity(blocking_keys=None))
        assert await store.find_by_blocking_keys(["t:person"], TENANT) == {"t:person": []}

    async def test_find_entities_matches_normalized_names_and_exact_types(self) -> None:
        store = self.new_store()
        ada = make_entity(id=entity_id(1), name="Ada  Lovelace", entity_type="person")
        ship = make_entity(id=entity_id(2), name="Ada Lovelace", entity_type="ship")
        other = make_entity(id=entity_id(3), name="Charles Babbage", entity_type="person")
        await store.upsert_entities([other, ship, ada])
        assert await store.find_entities(TENANT, name="ada lovelace") == [ada, ship]
        assert await store.find_entities(TENANT, entity_type="person") == [ada, other]
        assert await store.find_entities(TENANT, entity_type="Person") == []
        assert await store.find_entities(TENANT, name="ADA LOVELACE", entity_type="ship") == [ship]
        assert await store.find_entities(TENANT, limit=2) == [ada, ship]
        assert await store.find_entities(TENANT, limit=0) == []
        with pytest.raises(ValueError, match="-1"):
            await store.find_entities(TENANT, limit=-1)

    # -- relationships ---------------------------------------------------------

    async def test_a_relationship_with_a_dangling_endpoint_is_refused(self) -> None:
        store = self.new_store()
        source = make_entity(id=entity_id(1))
        await store.upsert_entity(source)
        ghost = make_entity(id=entity_id(2))
        with pytest.raises(MissingEntityError, match=str(entity_id(2))):
            await store.upsert_relationship(make_relationship(source, ghost))
        assert await store.get_relationships(entity_id(1), TENANT) == []

    async def test_a_relationship_batch_with_one_dangling_edge_writes_nothing(self) -> None:
        store = self.new_store()
        a, b = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([a, b])
        good = make_relationship(a, b)
        bad = make_relationship(a, make_entity(id=entity_id(3)))
        with pytest.raises(MissingEntityError):
            await store.upsert_relationships([good, bad])
        assert await store.get_relationship(good.id, TENANT) is None

    async def test_relationships_read_back_from_either_end(self) -> None:
        store = self.new_store()
        a, b, c = (make_entity(id=entity_id(n)) for n in (1, 2, 3))
        await store.upsert_entities([a, b, c])
        knows = make_relationship(a, b, relationship_type="knows")
        funds = make_relationship(c, a, relationship_type="funds")
        await store.upsert_relationships([knows, funds])
        assert await store.get_relationship(knows.id, TENANT) == knows
        assert await store.get_relationship(knows.id, OTHER_TENANT) is None
        assert sorted(
            await store.get_relationships(a.id, TENANT), key=lambda r: str(r.id)
        ) == sorted([knows, funds], key=lambda r: str(r.id))
        assert await store.get_relationships(b.id, TENANT) == [knows]
        assert await store.get_relationships(a.id, TENANT, relationship_type="funds") == [funds]

    async def test_neighbors_walk_both_directions_by_hop_then_id(self) -> None:
        store = self.new_store()
        a, b, c, d = (make_entity(id=entity_id(n)) for n in (1, 2, 3, 4))
        await store.upsert_entities([a, b, c, d])
        await store.upsert_relationships(
            [make_relationship(a, c), make_relationship(b, a), make_relationship(c, d)]
        )
        assert await store.neighbors(a.id, TENANT) == [b, c]
        assert await store.neighbors(a.id, TENANT, depth=2) == [b, c, d]
        assert await store.neighbors(a.id, OTHER_TENANT) == []
        with pytest.raises(ValueError, match="depth"):
            await store.neighbors(a.id, TENANT, depth=0)

    # -- deleting one entity -----------------------------------------------------

    async def test_delete_entity_removes_it_its_keys_and_its_relationships(self) -> None:
        store = self.new_store()
        ada = make_entity(id=entity_id(1), name="Ada Lovelace")
        babbage = make_entity(id=entity_id(2), name="Charles Babbage")
        engine = make_entity(id=entity_id(3), name="Analytical Engine", entity_type="machine")
        await store.upsert_entities([ada, babbage, engine])
        outgoing, incoming = make_relationship(ada, engine), make_relationship(babbage, ada)
        kept = make_relationship(babbage, engine)
        await store.upsert_relationships([outgoing, incoming, kept])

        assert await store.delete_entity(ada.id, TENANT) is True

        assert await store.get_entity(ada.id, TENANT) is None
        assert await store.get_entities([ada.id, babbage.id], TENANT) == [babbage]
        assert await store.find_entities(TENANT, name="ada lovelace") == []
        assert await store.find_by_blocking_key(prefix_key(ada), TENANT) == []
        for gone in (outgoing, incoming):
            assert await store.get_relationship(gone.id, TENANT) is None
        assert await store.get_relationships(babbage.id, TENANT) == [kept]
        assert await store.neighbors(babbage.id, TENANT) == [engine]

    async def test_delete_entity_touches_only_its_tenant(self) -> None:
        store = self.new_store()
        ours = make_entity(id=entity_id(1), name="Ada Lovelace")
        theirs = make_entity(id=entity_id(1), name="Ada Lovelace", tenant_id=OTHER_TENANT)
        their_friend = make_entity(id=entity_id(2), name="Mary Somerville", tenant_id=OTHER_TENANT)
        await store.upsert_entities([ours, theirs, their_friend])
        their_edge = make_relationship(theirs, their_friend)
        await store.upsert_relationship(their_edge)

        assert await store.delete_entity(entity_id(1), TENANT) is True

        assert await store.get_entity(entity_id(1), OTHER_TENANT) == theirs
        assert await store.find_by_blocking_key(prefix_key(theirs), OTHER_TENANT) == [theirs]
        assert await store.get_relationships(entity_id(1), OTHER_TENANT) == [their_edge]

    async def test_delete_entity_of_a_missing_id_is_false_and_changes_nothing(self) -> None:
        store = self.new_store()
        ada = make_entity(id=entity_id(1))
        await store.upsert_entity(ada)
        assert await store.delete_entity(entity_id(2), TENANT) is False
        assert await store.delete_entity(entity_id(1), OTHER_TENANT) is False
        assert await store.get_entity(ada.id, TENANT) == ada
        assert await store.delete_entity(ada.id, TENANT) is True
        assert await store.delete_entity(ada.id, TENANT) is False

    async def test_a_deleted_entity_can_be_written_again(self) -> None:
        store = self.new_store()
        ada, other = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([ada, other])
        await store.delete_entity(ada.id, TENANT)
        await store.upsert_entity(ada)
        edge = make_relationship(ada, other)
        await store.upsert_relationship(edge)
        assert await store.get_entity(ada.id, TENANT) == ada
        assert await store.find_by_blocking_key(prefix_key(ada), TENANT) == [ada, other]
        assert await store.get_relationships(ada.id, TENANT) == [edge]

    # -- bad input -------------------------------------------------------------

    async def test_a_batch_with_something_else_after_a_good_entity_writes_nothing(self) -> None:
        store = self.new_store()
        good = make_entity(id=entity_id(1))
        with pytest.raises(ValueError, match=r"entities\[1\] is not an Entity"):
            await store.upsert_entities([good, {"name": "Ada"}])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="entities"):
            await store.upsert_entity("Ada")  # type: ignore[arg-type]
        assert await store.get_entity(entity_id(1), TENANT) is None

    async def test_a_relationship_batch_holding_something_else_is_refused_by_index(self) -> None:
        store = self.new_store()
        a, b = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([a, b])
        good = make_relationship(a, b)
        with pytest.raises(ValueError, match=r"relationships\[1\]"):
            await store.upsert_relationships([good, 7])  # type: ignore[list-item]
        assert await store.get_relationship(good.id, TENANT) is None

    async def test_a_bare_string_of_keys_is_refused_rather_than_read_as_characters(self) -> None:
        store = self.new_store()
        with pytest.raises(ValueError, match="p:ada"):
            await store.find_by_blocking_keys("p:ada", TENANT)
