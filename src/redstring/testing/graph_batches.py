"""The batch reads of a graph store, as a suite: each must answer as its one-id read does.

`GraphBatchReadCompliance` is part of `GraphStoreCompliance`; a store built
on `GraphStoreBase` offers the reads (`relationships_of`, `merged_ids_of`,
ADR 0122; `find_name_candidates_of`, and on a lending store
`find_shared_name_candidates_of`, ADR 0123), so every adapter's suite runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.ids import EntityId
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.ports.graph_batches import (
    MergedIdBatchReader,
    NameCandidateBatchReader,
    RelationshipBatchReader,
    SharedNameCandidateBatchReader,
)
from redstring.ports.graph_store import MergedIdReader
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.support import property_settings, run

if TYPE_CHECKING:
    from redstring.ports.graph_store import GraphStore

#: Edges among five entities, as (source, target) numbers.
edge_lists = st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), max_size=8)


#: Names and queries from few words, so that many share units; "" has none.
_WORDS = ("Ada", "Lovelace", "Ana", "Lovelase", "Charles", "Babbage", "Bab", "")
names = st.lists(
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2).map(" ".join),
    min_size=1,
    max_size=6,
)


def _ids(*numbers: int) -> list[EntityId]:
    """Fixed ids whose string order is their numbers' order."""
    return [EntityId(UUID(int=number)) for number in numbers]


class GraphBatchReadCompliance:
    """`relationships_of` and `merged_ids_of`: each requested id as its own read, at once."""

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    @property_settings(30)
    @given(edges=edge_lists, asked=st.lists(st.integers(1, 7), max_size=6))
    @example(edges=[], asked=[1])
    @example(edges=[(1, 1), (1, 2)], asked=[1, 2, 1])
    def test_relationships_of_is_each_ids_get_relationships(
        self, edges: list[tuple[int, int]], asked: list[int]
    ) -> None:
        async def scenario() -> None:
            store = self.new_store()
            assert isinstance(store, RelationshipBatchReader)
            entities = {n: make_entity(id=_ids(n)[0]) for n in range(1, 6)}
            # The same ids in another tenant, joined otherwise: a forced collision.
            theirs = {n: make_entity(id=_ids(n)[0], tenant_id=OTHER_TENANT) for n in range(1, 6)}
            await store.upsert_entities([*entities.values(), *theirs.values()])
            await store.upsert_relationships(
                [make_relationship(entities[a], entities[b]) for a, b in edges]
                + [make_relationship(theirs[1], theirs[n]) for n in range(2, 6)]
            )
            ids = _ids(*asked)
            found = await store.relationships_of(ids, TENANT)
            assert list(found) == list(dict.fromkeys(ids))
            for entity_id in ids:
                assert found[entity_id] == await store.get_relationships(entity_id, TENANT)

        run(scenario())

    async def test_a_relationship_joining_two_requested_ids_is_listed_at_each_as_its_own_copy(
        self,
    ) -> None:
        store = self.new_store()
        assert isinstance(store, RelationshipBatchReader)
        a, b = (make_entity(id=entity_id) for entity_id in _ids(1, 2))
        await store.upsert_entities([a, b])
        edge = make_relationship(a, b)
        await store.upsert_relationships([edge])
        found = await store.relationships_of([a.id, b.id], TENANT)
        assert found == {a.id: [edge], b.id: [edge]}
        assert found[a.id][0] is not found[b.id][0]
        assert await store.relationships_of([], TENANT) == {}
        assert await store.relationships_of([a.id], OTHER_TENANT) == {a.id: []}

    async def test_merged_ids_of_is_each_ids_merged_ids(self) -> None:
        store = self.new_store()
        assert isinstance(store, MergedIdBatchReader)
        assert isinstance(store, MergedIdReader)
        a, b, c, d, e = (make_entity(id=entity_id) for entity_id in _ids(1, 2, 3, 4, 5))
        theirs = [make_entity(id=entity_id, tenant_id=OTHER_TENANT) for entity_id in _ids(1, 2)]
        await store.upsert_entities([a, b, c, d, e, *theirs])
        every = _ids(1, 2, 3, 4, 5, 9)
        assert await store.merged_ids_of(every, TENANT) == {key: [] for key in every}
        await store.merge_entities(b, [c.id])
        await store.merge_entities(a, [d.id, b.id])
        await store.merge_entities(theirs[0], [theirs[1].id])
        found = await store.merged_ids_of([*every, a.id], TENANT)
        assert found == {
            entity_id: await store.merged_ids(entity_id, TENANT) for entity_id in every
        }
        assert found[a.id] == [b.id, c.id, d.id]
        assert await store.merged_ids_of(_ids(1), OTHER_TENANT) == {a.id: _ids(2)}
        await store.unmerge_entities([b.id], TENANT)
        assert await store.merged_ids_of([a.id, b.id], TENANT) == {a.id: [d.id], b.id: [c.id]}
        assert await store.merged_ids_of([], TENANT) == {}

    @pytest.mark.parametrize("read", ["relationships_of", "merged_ids_of"])
    async def test_a_bad_id_or_tenant_is_refused_by_name(self, read: str) -> None:
        store = self.new_store()
        call = getattr(store, read)
        with pytest.raises(ValueError, match=r"^entity_ids\[1\] must be an EntityId"):
            await call([*_ids(1), "not-an-id"], TENANT)
        with pytest.raises(ValueError, match=r"^tenant_id must be a TenantId"):
            await call(_ids(1), str(TENANT))
        with pytest.raises(ValueError, match="entity_ids"):
            await call("not-a-list", TENANT)

    @property_settings(30)
    @given(
        held=names, queries=st.lists(st.sampled_from(_WORDS), max_size=5), limit=st.integers(0, 3)
    )
    @example(held=["Ada Lovelace", "Ana Lovelase"], queries=["Ada", "", "Ada"], limit=1)
    @example(held=["Bab"], queries=[], limit=2)
    def test_find_name_candidates_of_is_each_querys_find_name_candidates(
        self, held: list[str], queries: list[str], limit: int
    ) -> None:
        async def scenario() -> None:
            store, reference = self.new_store(), InMemoryGraphStore()
            assert isinstance(store, NameCandidateBatchReader)
            ids = _ids(*range(1, len(held) + 1))
            ours = [
                make_entity(id=entity_id, name=name.strip() or "Nobody")
                for entity_id, name in zip(ids, held, strict=True)
            ]
            # The same ids in another tenant, under the other names: a forced collision.
            theirs = [
                make_entity(id=entity_id, name=name, tenant_id=OTHER_TENANT)
                for entity_id, name in zip(ids, reversed(_WORDS[:-1]), strict=False)
            ]
            # Written in two batches, the first renamed by the second: a unit
            # then has several postings where a store appends them.
            first = make_entity(id=ids[0], name="Ada Lovelace Babbage")
            for graph in (store, reference):
                await graph.upsert_entities([first, *theirs])
                await graph.upsert_entities(ours)
            asked = [*queries, "Ada Lovelace"]
            found = await store.find_name_candidates_of(asked, TENANT, limit=limit)
            assert list(found) == list(dict.fromkeys(asked))
            for query in asked:
                # The in-memory store, read one query at a time, is the reference.
                expected = await reference.find_name_candidates(query, TENANT, limit=limit)
                assert found[query] == expected
                assert await store.find_name_candidates(query, TENANT, limit=limit) == expected
            if isinstance(store, SharedNameCandidateBatchReader):
                lent = await store.find_shared_name_candidates_of(asked, TENANT, limit=limit)
                assert lent == found

        run(scenario())

    async def test_name_candidates_of_are_copies_read_from_the_tenant(self) -> None:
        store = self.new_store()
        assert isinstance(store, NameCandidateBatchReader)
        ada = make_entity(id=_ids(1)[0], name="Ada Lovelace")
        await store.upsert_entities(
            [ada, make_entity(id=ada.id, name="Ada", tenant_id=OTHER_TENANT)]
        )
        found = await store.find_name_candidates_of(["Ada", "Lovelace"], TENANT)
        assert found == {"Ada": [ada], "Lovelace": [ada]}
        found["Ada"][0].properties["changed"] = True
        assert await store.get_entity(ada.id, TENANT) == ada
        assert await store.find_name_candidates_of([], TENANT) == {}
        assert await store.find_name_candidates_of(["Lovelace"], OTHER_TENANT) == {"Lovelace": []}

    async def test_bad_queries_a_bad_limit_or_tenant_are_refused_by_name(self) -> None:
        store = self.new_store()
        assert isinstance(store, NameCandidateBatchReader)
        reads: list[Any] = [store.find_name_candidates_of]
        if isinstance(store, SharedNameCandidateBatchReader):
            reads.append(store.find_shared_name_candidates_of)
        for call in reads:
            with pytest.raises(ValueError, match=r"^queries\[1\] must be a string"):
                await call(["Ada", 7], TENANT)
            with pytest.raises(ValueError, match=r"^queries must be a sequence of strings"):
                await call("Ada", TENANT)
            with pytest.raises(ValueError, match="limit"):
                await call(["Ada"], TENANT, limit=-1)
            with pytest.raises(ValueError, match=r"^tenant_id must be a TenantId"):
                await call(["Ada"], str(TENANT))
