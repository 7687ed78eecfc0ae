"""The in-memory graph store against the shared `GraphStore` contract."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.ids import EntityId
from redstring.domain.names import MIN_SHARED_UNITS, entity_name_units, query_name_units
from redstring.graph import name_index
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.ports.graph_store import GraphStore, GraphStoreBase
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity
from redstring.testing.graph_batches import GraphBatchReadCompliance
from redstring.testing.graph_store import GraphStoreCompliance
from redstring.testing.name_candidates import SharedNameCandidateCompliance


class TestInMemoryGraphStore(GraphStoreCompliance, SharedNameCandidateCompliance):
    def new_store(self) -> GraphStore:
        return InMemoryGraphStore()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryGraphStore(), GraphStore)


class _OneIdAtATime(InMemoryGraphStore):
    """A store whose batch reads are the base's defaults: one hook call per requested id."""

    _merged_ids_of = GraphStoreBase._merged_ids_of
    _relationships_of = GraphStoreBase._relationships_of


class TestTheBasesBatchReadsOneIdAtATime(GraphBatchReadCompliance):
    def new_store(self) -> GraphStore:
        return _OneIdAtATime()


class TestInMemoryGraphStoreWalkingItsNameIndex(GraphStoreCompliance):
    """The same contract with every name lookup taking the staged walk a large tenant takes."""

    @pytest.fixture(autouse=True)
    def _walk_at_any_size(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(name_index, "_COUNT_ALL_BELOW", 0)

    def new_store(self) -> GraphStore:
        return InMemoryGraphStore()


_WORDS = ["ab", "aab", "abab", "ba", "bab", "abba", "b"]
_names = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join)


@given(
    mine=st.lists(_names, min_size=1, max_size=6),
    theirs=st.lists(_names, min_size=1, max_size=6),
    gone=st.sets(st.integers(0, 5), max_size=3),
    query=_names,
    limit=st.integers(1, 8),
    walk=st.booleans(),
)
# The same ids and the same names in both tenants, one of them deleted in one.
@example(
    mine=["ab ba", "ab ba"], theirs=["ab ba", "ab ba"], gone={0}, query="ab ba", limit=1, walk=True
)
def test_name_candidates_never_cross_tenants_that_share_ids(
    mine: list[str], theirs: list[str], gone: set[int], query: str, limit: int, walk: bool
) -> None:
    ids = [EntityId(UUID(int=number + 1)) for number in range(6)]

    async def lookups() -> tuple[list[EntityId], list[EntityId]]:
        store = InMemoryGraphStore()
        await store.upsert_entities(
            [make_entity(id=i, name=n) for i, n in zip(ids, mine, strict=False)]
        )
        await store.upsert_entities(
            [
                make_entity(id=i, name=n, tenant_id=OTHER_TENANT)
                for i, n in zip(ids, theirs, strict=False)
            ]
        )
        for number in gone:
            await store.delete_entity(ids[number], TENANT)
        held = await store.find_entities(TENANT)
        units = set(query_name_units(query))
        shared = {entity.id: len(entity_name_units(entity) & units) for entity in held}
        expected = sorted(
            (entity_id for entity_id, count in shared.items() if count >= MIN_SHARED_UNITS),
            key=lambda entity_id: (-shared[entity_id], str(entity_id)),
        )[:limit]
        found = await store.find_name_candidates(query, TENANT, limit=limit)
        for entity in found:
            assert entity.tenant_id == TENANT
            assert entity.name == mine[ids.index(entity.id)]
        other = await store.find_name_candidates(query, OTHER_TENANT, limit=limit)
        assert all(entity.tenant_id == OTHER_TENANT for entity in other)
        return [entity.id for entity in found], expected

    with pytest.MonkeyPatch.context() as patch:
        if walk:
            patch.setattr(name_index, "_COUNT_ALL_BELOW", 0)
        found, expected = asyncio.run(lookups())
    assert found == expected


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


async def test_a_large_batch_indexes_names_as_the_same_entities_written_one_by_one() -> None:
    # 300 entities take the bulk posting path; one at a time takes the other.
    words = ["Ada", "Grace", "Lovelace", "Hopper", "Byron", "Murray", "Noether", "Emmy"]
    entities = [
        make_entity(name=f"{words[n % 8]} {words[(n * 3 + 1) % 8]}{n % 7}") for n in range(300)
    ]
    bulk, single = InMemoryGraphStore(), InMemoryGraphStore()
    await bulk.upsert_entities(entities)
    for entity in entities:
        await single.upsert_entity(entity)
    for query in ["Ada Lovelace3", "Grace Hopper", "Emmy Noether5", "Byron"]:
        found = await bulk.find_name_candidates(query, TENANT, limit=40)
        assert found
        assert found == await single.find_name_candidates(query, TENANT, limit=40)


async def test_a_large_batch_of_unusual_names_indexes_as_written_one_by_one() -> None:
    # Other scripts (romanized too), aliases, an extractor's own normalized
    # name and names past the indexed length, in a batch taking the bulk path.
    names = ["Москва", "Αθήνα", "北京", "Müñoz", "O'Brien, Seán", "ﬁsh", "µ", "x" * 300 + " ada"]
    entities = []
    for n in range(300):
        name = f"{names[n % 8]} {n % 11}"
        overrides: dict[str, Any] = {"name": name}
        if n % 3 == 0:
            overrides["properties"] = {"aliases": [names[(n + 1) % 8], 7, f"Alias{n % 5}"]}
        if n % 4 == 0:
            overrides["normalized_name"] = f"extracted {names[(n + 2) % 8]}"
        entities.append(make_entity(**overrides))
    bulk, single = InMemoryGraphStore(), InMemoryGraphStore()
    await bulk.upsert_entities(entities)
    for entity in entities:
        await single.upsert_entity(entity)
    for query in [*names, "Moskva 3", "athina", "beijing", "alias3", "extracted munoz"]:
        found = await bulk.find_name_candidates(query, TENANT, limit=60)
        assert found
        assert found == await single.find_name_candidates(query, TENANT, limit=60)


async def test_a_batch_switching_tenants_and_fields_stores_each_entity_as_given() -> None:
    shared_id = EntityId(UUID(int=7))
    batch = [
        make_entity(id=shared_id, name="Ada Lovelace"),
        make_entity(id=shared_id, tenant_id=OTHER_TENANT, name="Grace", description="d"),
        make_entity(name="Emmy Noether", blocking_keys=None),
        make_entity(tenant_id=OTHER_TENANT, name="Hopper", source_id="s"),
        make_entity(name="Byron", model="m"),
    ]
    store = InMemoryGraphStore()
    await store.upsert_entities(batch)
    for entity in batch:
        stored = await store.get_entity(entity.id, entity.tenant_id)
        assert stored == entity
        assert stored is not None
        assert stored.model_fields_set == entity.model_fields_set


async def test_a_large_batch_that_repeats_an_id_keeps_only_the_last() -> None:
    entities = [make_entity(name=f"Bill Kidd{n}") for n in range(299)]
    first = make_entity(name="Grace Hopper")
    last = first.model_copy(update={"name": "Emmy Noether", "normalized_name": "emmy noether"})
    store = InMemoryGraphStore()
    await store.upsert_entities([first, *entities, last])
    assert await store.find_name_candidates("Grace Hopper", TENANT) == []
    assert await store.find_name_candidates("Emmy Noether", TENANT) == [last]
    assert await store.find_entities(TENANT, name="Grace Hopper") == []
    assert await store.find_entities(TENANT, name="Emmy Noether") == [last]


async def test_a_name_shared_then_unshared_still_finds_whoever_holds_it() -> None:
    # An index entry is a bare id for one holder and a set for two or more.
    store = InMemoryGraphStore()
    ada, other = make_entity(name="Ada Lovelace"), make_entity(name="Ada Lovelace")
    await store.upsert_entity(ada)
    assert await store.find_entities(TENANT, name="ada lovelace") == [ada]
    await store.upsert_entity(ada)  # the same holder again stays one holder
    await store.upsert_entity(other)
    both = await store.find_entities(TENANT, name="Ada Lovelace")
    assert sorted(entity.id.int for entity in both) == sorted([ada.id.int, other.id.int])
    key = sorted(ada.blocking_keys or ())[0]
    assert len(await store.find_by_blocking_key(key, TENANT)) == 2
    assert await store.delete_entity(ada.id, TENANT)
    assert await store.find_entities(TENANT, name="Ada Lovelace") == [other]
    assert await store.find_by_blocking_key(key, TENANT) == [other]
    assert not await store.delete_entity(ada.id, TENANT)
    assert await store.find_entities(TENANT, name="Ada Lovelace") == [other]
    assert await store.delete_entity(other.id, TENANT)
    assert await store.find_entities(TENANT, name="Ada Lovelace") == []
    assert await store.find_by_blocking_key(key, TENANT) == []


async def test_renaming_the_only_holder_of_a_name_frees_the_name() -> None:
    store = InMemoryGraphStore()
    ada = make_entity(name="Ada Lovelace")
    await store.upsert_entity(ada)
    renamed = make_entity(id=ada.id, name="Grace Hopper")
    await store.upsert_entity(renamed)
    assert await store.find_entities(TENANT, name="Ada Lovelace") == []
    assert await store.find_entities(TENANT, name="Grace Hopper") == [renamed]


async def test_changing_a_read_entitys_fields_set_changes_no_other_read() -> None:
    # Stored entities share one fields-set; each read must hand out its own.
    store = InMemoryGraphStore()
    first, second = make_entity(name="Ada Lovelace"), make_entity(name="Grace Hopper")
    await store.upsert_entities([first, second])
    read = await store.get_entity(first.id, TENANT)
    assert read is not None
    read.model_fields_set.add("leaked")
    read.model_fields_set.discard("name")
    for entity in (first, second):
        again = await store.get_entity(entity.id, TENANT)
        assert again is not None
        assert again.model_fields_set == entity.model_fields_set
        assert again.model_dump(exclude_unset=True) == entity.model_dump(exclude_unset=True)


async def test_changing_a_written_entitys_fields_set_does_not_reach_the_store() -> None:
    store = InMemoryGraphStore()
    ada = make_entity(name="Ada Lovelace")
    expected = set(ada.model_fields_set)
    await store.upsert_entity(ada)
    ada.model_fields_set.add("leaked")
    read = await store.get_entity(ada.id, TENANT)
    assert read is not None
    assert read.model_fields_set == expected
