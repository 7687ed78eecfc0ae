"""The Postgres graph store: the shared contract, plus schemas, pools, crashes and injection."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from redstring.domain.exceptions import MissingEntityError
from redstring.domain.limits import MAX_CACHE_SIZE
from redstring.graph.adapters.postgres import PostgresGraphStore
from redstring.ports.graph_store import GraphStore
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.graph_store import GraphStoreCompliance
from redstring.testing.name_candidates import SharedNameCandidateCompliance

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas


class TestPostgresGraphStore(GraphStoreCompliance, SharedNameCandidateCompliance):
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


async def test_a_key_read_sees_what_another_store_changed_since_it_last_read(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    reader, writer = postgres.graph_store(schema), postgres.graph_store(schema)
    first = make_entity(name="Ada Lovelace", properties={"v": 1})
    await writer.upsert_entity(first)
    [key] = sorted(key for key in first.blocking_keys or () if key.startswith("p:"))
    assert await reader.find_by_blocking_key(key, TENANT) == [first]
    changed = first.model_copy(update={"properties": {"v": 2}})
    await writer.upsert_entity(changed)
    assert await reader.find_by_blocking_key(key, TENANT) == [changed]
    held = await reader.find_by_blocking_key(key, TENANT)
    held[0].properties["v"] = 3
    assert await reader.find_by_blocking_key(key, TENANT) == [changed]
    await writer.upsert_entity(make_entity(id=first.id, name="Grace Hopper"))
    assert await reader.find_by_blocking_key(key, TENANT) == []


async def test_name_candidates_follow_another_stores_writes_deletes_merges_and_purges(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    reader, writer = postgres.graph_store(schema), postgres.graph_store(schema)
    # Names sharing no unit, so each query finds only its own.
    ada = make_entity(name="Charles Babbage")
    twin = make_entity(id=ada.id, tenant_id=OTHER_TENANT, name="Charles Babbage")
    await writer.upsert_entities([ada, twin])
    assert await reader.find_name_candidates("Charles Babbage", TENANT) == [ada]
    renamed = make_entity(id=ada.id, name="Grace Hopper")
    await writer.upsert_entity(renamed)
    assert await reader.find_name_candidates("Charles Babbage", TENANT) == []
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == [renamed]
    assert await writer.delete_entity(ada.id, TENANT)
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == []
    again = make_entity(id=ada.id, name="Grace Hopper")
    canonical = make_entity(name="Grace Brewster Hopper")
    await writer.upsert_entities([again, canonical])
    both = sorted([again, canonical], key=lambda entity: str(entity.id))  # a tie: by id
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == both
    await writer.merge_entities(canonical, [again.id])
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == [canonical]
    await writer.delete_by_tenant(TENANT)
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == []
    back = make_entity(name="Grace Hopper")
    await writer.upsert_entity(back)
    assert await reader.find_name_candidates("Grace Hopper", TENANT) == [back]
    assert await reader.find_name_candidates("Charles Babbage", OTHER_TENANT) == [twin]


async def test_a_name_index_loaded_after_a_key_read_parses_no_held_entity_again(
    postgres: PostgresSchemas,
) -> None:
    """The entity a blocking-key read holds at its revision is the one the index load keeps.

    Seen red with the held entity parsed again (a new object held).
    """
    store = postgres.graph_store()
    entity = make_entity(name="Ada Lovelace")
    await store.upsert_entity(entity)
    assert await store.find_by_blocking_key("p:ada l", TENANT) == [entity]
    held = store._held.latest((TENANT, entity.id))
    assert held is not None
    assert await store.find_name_candidates("Ada Lovelace", TENANT) == [entity]
    assert store._held.latest((TENANT, entity.id)) is held


@pytest.mark.parametrize("size", [0, 1])
async def test_a_store_holding_few_or_no_entities_still_answers_every_key(
    postgres: PostgresSchemas, size: int
) -> None:
    store = postgres.graph_store(cache_size=size)
    entities = [make_entity(name=f"Ada Lovelace {n}") for n in range(5)]
    await store.upsert_entities(entities)
    for _ in range(2):
        found = await store.find_by_blocking_key("p:ada l", TENANT)
        assert sorted(found, key=lambda entity: str(entity.id)) == sorted(
            entities, key=lambda entity: str(entity.id)
        )
        found = await store.find_name_candidates("Ada Lovelace", TENANT)
        assert sorted(found, key=lambda entity: str(entity.id)) == sorted(
            entities, key=lambda entity: str(entity.id)
        )
    assert len(store._held) == size


@pytest.mark.parametrize("bad", [-1, True, 1.5, MAX_CACHE_SIZE + 1])
def test_a_negative_non_integer_or_too_large_cache_size_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="cache_size"):
        PostgresGraphStore("postgresql://x/y", cache_size=bad)  # type: ignore[arg-type]


async def test_deleting_an_entity_takes_its_keys_and_edges_in_its_tenant_only(
    postgres: PostgresSchemas,
) -> None:
    store = postgres.graph_store()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    theirs = make_entity(id=ada.id, name="Ada Lovelace", tenant_id=OTHER_TENANT)
    await store.upsert_entities([ada, babbage, theirs])
    edge = make_relationship(ada, babbage)
    await store.upsert_relationship(edge)
    assert await store.find_by_blocking_key("p:ada l", TENANT) == [ada]
    assert await store.delete_entity(ada.id, TENANT) is True
    assert await store.delete_entity(ada.id, TENANT) is False
    assert await store.get_entity(ada.id, TENANT) is None
    assert await store.find_by_blocking_key("p:ada l", TENANT) == []
    assert await store.get_relationships(babbage.id, TENANT) == []
    assert await store.get_entity(ada.id, OTHER_TENANT) == theirs
    await store.upsert_entity(ada)
    assert await store.find_by_blocking_key("p:ada l", TENANT) == [ada]


async def test_a_merge_repoints_edges_resolves_reads_and_undoes_one_step(
    postgres: PostgresSchemas,
) -> None:
    store = postgres.graph_store()
    a, b, c = (make_entity(name=name) for name in ("Ada Lovelace", "A. Lovelace", "Babbage"))
    theirs = make_entity(id=b.id, tenant_id=OTHER_TENANT)
    await store.upsert_entities([a, b, c, theirs])
    edge = make_relationship(b, c)
    await store.upsert_relationship(edge)
    for bad, message in (([], "merged_ids"), ([b.id, b.id], "merged_ids"), ([a.id], "merged_ids")):
        with pytest.raises(ValueError, match=message):
            await store.merge_entities(a, bad)
    with pytest.raises(MissingEntityError):
        await store.merge_entities(a, [b.id, make_entity().id])
    await store.merge_entities(a, [b.id])
    await store.merge_entities(a, [b.id])
    assert await store.resolve([b.id, c.id], TENANT) == {b.id: a.id, c.id: c.id}
    assert await store.resolve([], TENANT) == {}
    assert await store.get_entities([a.id, b.id], TENANT) == [a]
    assert await store.get_relationship(edge.id, TENANT) == edge.model_copy(
        update={"source_entity_id": a.id}
    )
    assert await store.get_entity(b.id, OTHER_TENANT) == theirs
    with pytest.raises(ValueError, match="canonical"):
        await store.merge_entities(b, [c.id])
    await store.merge_entities(c, [a.id])
    assert await store.resolve([b.id], TENANT) == {b.id: c.id}
    await store.unmerge_entities([a.id], TENANT)
    await store.unmerge_entities([], TENANT)
    assert await store.resolve([b.id], TENANT) == {b.id: a.id}
    assert await store.delete_by_tenant(TENANT) == 1
    assert await store.resolve([b.id], TENANT) == {b.id: b.id}


async def test_a_shared_lookup_follows_another_stores_writes(postgres: PostgresSchemas) -> None:
    schema = postgres.new_schema()
    reader, writer = postgres.graph_store(schema), postgres.graph_store(schema)
    mine = make_entity(name="Ada Lovelace", properties={"aliases": ["Countess"]})
    await writer.upsert_entities([mine, make_entity(name="Charles Babbage")])
    [lent] = await reader.find_shared_name_candidates("Ada Lovelace", TENANT)
    assert lent == mine
    # Another store's write moves the generation: the lent lookup follows it,
    # as the copying one does, and lends the new entity, not the held old one.
    renamed = mine.model_copy(update={"properties": {"aliases": ["Enchantress"]}})
    await writer.upsert_entity(renamed)
    [after] = await reader.find_shared_name_candidates("Ada Lovelace", TENANT)
    assert after == renamed
    assert after is not lent
    assert await reader.find_name_candidates("Ada Lovelace", TENANT) == [renamed]
