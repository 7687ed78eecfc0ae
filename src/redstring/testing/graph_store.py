"""The `GraphStore` contract, as a suite every adapter's tests subclass.

Subclass `GraphStoreCompliance` in a `Test...` class and implement
`new_store()`; every test here then runs against that adapter. The suite is
the sum of one suite per capability (`GraphReaderWriterCompliance`,
`GraphMergeCompliance`, `NameCandidateCompliance`,
`GraphTenantCounterCompliance`): a store offering fewer capabilities
subclasses only the ones it offers. A store that
also lends its name candidates mixes in `SharedNameCandidateCompliance`. Hypothesis
properties build a fresh store per example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.blocking import prefix_key
from redstring.domain.exceptions import MissingEntityError
from redstring.domain.ids import EntityId
from redstring.domain.limits import MAX_DEPTH, MAX_LIMIT, MAX_NAME_LENGTH
from redstring.ports.graph_store import GraphStore, MergedIdReader
from redstring.ports.tenants import TenantCounter
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.graph_batches import GraphBatchReadCompliance
from redstring.testing.lifetime import StoreLifetimeCompliance
from redstring.testing.name_candidates import NameCandidateCompliance
from redstring.testing.support import property_settings, run
from redstring.testing.tenants import TenantCounterCompliance

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import TenantId


PROPERTY_SETTINGS = property_settings(30)

safe_characters = st.characters(codec="utf-8", exclude_characters="\x00")
names = st.text(alphabet=safe_characters, min_size=1, max_size=20).filter(str.strip)


def entity_id(n: int) -> EntityId:
    """A fixed id whose string order is its number's order."""
    return EntityId(UUID(int=n))


class GraphReaderWriterCompliance:
    """The rules of `GraphReader` and `GraphWriter`: entities, relationships, keys, walks."""

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    @PROPERTY_SETTINGS
    @given(
        name=names,
        properties=st.dictionaries(
            st.text(alphabet=safe_characters, max_size=4),
            st.integers(min_value=-(2**63), max_value=2**63 - 1),
        ),
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
        assert ada not in await store.find_name_candidates("Ada Lovelace", TENANT)
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

    async def test_an_entity_with_a_string_id_is_refused_and_the_tenant_still_reads(self) -> None:
        store = self.new_store()
        good = make_entity(id=entity_id(2))
        bad = make_entity(id=entity_id(1)).model_copy(update={"id": str(entity_id(1))})
        with pytest.raises(ValueError, match=r"^entities\[0\]\.id must be an EntityId"):
            await store.upsert_entities([bad, good])
        assert await store.find_entities(TENANT) == []
        await store.upsert_entity(good)
        assert await store.find_entities(TENANT) == [good]

    @pytest.mark.parametrize(
        ("update", "problem"),
        [
            ({"confidence": float("nan")}, "confidence"),
            ({"confidence": float("inf")}, "confidence"),
            ({"properties": {"n": 2**64}}, "integer outside"),
            ({"properties": {"n": -(2**63) - 1}}, "integer outside"),
            ({"name": "Ada\x00"}, "NUL"),
        ],
    )
    async def test_a_refused_entity_before_a_good_one_changes_nothing(
        self, update: dict[str, Any], problem: str
    ) -> None:
        """`model_copy` skips validation, so the store re-checks what it writes."""
        store = self.new_store()
        held = make_entity(id=entity_id(3), name="Ada Lovelace")
        await store.upsert_entity(held)
        bad = make_entity(id=entity_id(1)).model_copy(update=update)
        good = make_entity(id=entity_id(2))
        with pytest.raises(ValueError, match=problem):
            await store.upsert_entities([bad, good])
        with pytest.raises(ValueError, match=problem):
            await store.upsert_entity(held.model_copy(update=update))
        assert await store.find_entities(TENANT) == [held]
        assert await store.find_by_blocking_keys([prefix_key(held)], TENANT) == {
            prefix_key(held): [held]
        }
        assert await store.neighbors(held.id, TENANT) == []

    async def test_a_refused_relationship_before_a_good_one_changes_nothing(self) -> None:
        store = self.new_store()
        a, b = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([a, b])
        bad = make_relationship(a, b).model_copy(update={"confidence": float("nan")})
        good = make_relationship(b, a)
        with pytest.raises(ValueError, match=r"relationships\[0\]\.confidence"):
            await store.upsert_relationships([bad, good])
        assert await store.get_relationships(a.id, TENANT) == []
        assert await store.neighbors(a.id, TENANT) == []

    async def test_neighbors_at_the_depth_limit_return_promptly_and_past_it_are_refused(
        self,
    ) -> None:
        store = self.new_store()
        a, b = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([a, b])
        await store.upsert_relationships([make_relationship(a, b), make_relationship(b, a)])
        assert await store.neighbors(a.id, TENANT, depth=MAX_DEPTH) == [b]
        for depth in (MAX_DEPTH + 1, 10**9, True, 1.0, "2"):
            with pytest.raises(ValueError, match=r"^depth must be"):
                await store.neighbors(a.id, TENANT, depth=depth)  # type: ignore[arg-type]

    @pytest.mark.parametrize("limit", [-1, MAX_LIMIT + 1, 2**64, True, "3", 2.0])
    async def test_a_limit_out_of_range_or_not_an_integer_is_refused(self, limit: object) -> None:
        store = self.new_store()
        with pytest.raises(ValueError, match=r"^limit must be"):
            await store.find_entities(TENANT, limit=limit)  # type: ignore[arg-type]

    @pytest.mark.parametrize("text", ["Ada\x00", "\ud800", "x" * (MAX_NAME_LENGTH + 1), 7])
    async def test_an_unstorable_read_filter_is_refused_naming_it(self, text: object) -> None:
        store = self.new_store()
        for call, argument in [
            (store.find_entities(TENANT, name=text), "name"),  # type: ignore[arg-type]
            (store.find_entities(TENANT, entity_type=text), "entity_type"),  # type: ignore[arg-type]
            (store.find_by_blocking_keys([text], TENANT), r"keys\[0\]"),  # type: ignore[list-item]
            (
                store.get_relationships(
                    entity_id(1),
                    TENANT,
                    relationship_type=text,  # type: ignore[arg-type]
                ),
                "relationship_type",
            ),
        ]:
            with pytest.raises(ValueError, match=f"^{argument}"):
                await call


class GraphMergeCompliance:
    """The rules of `GraphMerge`: merges, their chains and their undoing."""

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    async def test_an_id_never_merged_resolves_to_itself_and_every_id_is_a_key(self) -> None:
        store = self.new_store()
        await store.upsert_entity(make_entity(id=entity_id(1)))
        assert await store.resolve([entity_id(1), entity_id(9)], TENANT) == {
            entity_id(1): entity_id(1),
            entity_id(9): entity_id(9),
        }
        assert await store.resolve([], TENANT) == {}

    async def test_a_merge_repoints_relationships_removes_the_merged_and_resolves(self) -> None:
        store = self.new_store()
        a, b, c = (
            make_entity(id=entity_id(n), name=name)
            for n, name in ((1, "Ada Lovelace"), (2, "Countess Lovelace"), (3, "Charles Babbage"))
        )
        await store.upsert_entities([a, b, c])
        knows = make_relationship(b, c, relationship_type="knows")
        loop = make_relationship(a, b, relationship_type="same")
        await store.upsert_relationships([knows, loop])
        canonical = a.model_copy(update={"properties": {"aliases": ["Countess Lovelace"]}})
        await store.merge_entities(canonical, [b.id])
        assert await store.resolve([b.id, a.id], TENANT) == {b.id: a.id, a.id: a.id}
        assert await store.get_entity(b.id, TENANT) == canonical
        assert await store.get_entities([a.id, b.id], TENANT) == [canonical]
        assert await store.find_by_blocking_key(prefix_key(b), TENANT) == []
        assert await store.find_entities(TENANT, name="Countess Lovelace") == []
        assert await store.find_name_candidates("Countess Lovelace", TENANT) == [canonical]
        moved = await store.get_relationship(knows.id, TENANT)
        assert moved == knows.model_copy(update={"source_entity_id": a.id})
        assert await store.get_relationships(b.id, TENANT) == []
        assert await store.neighbors(c.id, TENANT) == [canonical]
        assert (await store.get_relationship(loop.id, TENANT)) == loop.model_copy(
            update={"target_entity_id": a.id}
        )

    async def test_merging_again_changes_nothing_more(self) -> None:
        store = self.new_store()
        a, b = (make_entity(id=entity_id(n)) for n in (1, 2))
        await store.upsert_entities([a, b])
        await store.merge_entities(a, [b.id])
        await store.merge_entities(a, [b.id])
        assert await store.resolve([b.id], TENANT) == {b.id: a.id}
        assert await store.get_entities([a.id, b.id], TENANT) == [a]

    async def test_a_merge_of_a_merge_resolves_to_the_last_and_unmerging_one_step_back(
        self,
    ) -> None:
        store = self.new_store()
        a, b, c = (make_entity(id=entity_id(n)) for n in (1, 2, 3))
        await store.upsert_entities([a, b, c])
        await store.merge_entities(b, [c.id])
        await store.merge_entities(a, [b.id])
        assert await store.resolve([c.id], TENANT) == {c.id: a.id}
        await store.unmerge_entities([b.id], TENANT)
        assert await store.resolve([c.id, b.id], TENANT) == {c.id: b.id, b.id: b.id}

    async def test_merged_ids_lists_merges_of_merges_and_an_undo_takes_them_back(self) -> None:
        store = self.new_store()
        assert isinstance(store, MergedIdReader)
        a, b, c, d = (make_entity(id=entity_id(n)) for n in (1, 2, 3, 4))
        await store.upsert_entities([a, b, c, d])
        assert await store.merged_ids(a.id, TENANT) == []
        await store.merge_entities(b, [c.id])
        await store.merge_entities(a, [d.id, b.id])
        assert await store.merged_ids(a.id, TENANT) == [b.id, c.id, d.id]
        # An id merged away has nothing resolving to it; nor has one never merged into.
        assert await store.merged_ids(b.id, TENANT) == []
        assert await store.merged_ids(entity_id(9), TENANT) == []
        await store.unmerge_entities([b.id], TENANT)
        assert await store.merged_ids(a.id, TENANT) == [d.id]
        assert await store.merged_ids(b.id, TENANT) == [c.id]

    async def test_merged_ids_never_cross_tenants_and_go_with_a_delete(self) -> None:
        store = self.new_store()
        assert isinstance(store, MergedIdReader)
        mine = [make_entity(id=entity_id(n)) for n in (1, 2, 3)]
        theirs = [make_entity(id=entity_id(n), tenant_id=OTHER_TENANT) for n in (1, 2, 3)]
        await store.upsert_entities([*mine, *theirs])
        await store.merge_entities(mine[0], [entity_id(2)])
        await store.merge_entities(theirs[0], [entity_id(3)])
        assert await store.merged_ids(entity_id(1), TENANT) == [entity_id(2)]
        assert await store.merged_ids(entity_id(1), OTHER_TENANT) == [entity_id(3)]
        assert await store.delete_entity(entity_id(1), TENANT) is True
        assert await store.merged_ids(entity_id(1), TENANT) == []
        assert await store.merged_ids(entity_id(1), OTHER_TENANT) == [entity_id(3)]
        with pytest.raises(ValueError, match="entity_id"):
            await store.merged_ids("not-an-id", TENANT)  # type: ignore[arg-type]

    async def test_a_refused_merge_changes_nothing(self) -> None:
        store = self.new_store()
        a, b = (make_entity(id=entity_id(n)) for n in (1, 2))
        await store.upsert_entities([a, b])
        renamed = a.model_copy(update={"name": "Renamed"})
        with pytest.raises(MissingEntityError):
            await store.merge_entities(renamed, [b.id, entity_id(7)])
        for bad in ([], [b.id, b.id], [a.id]):
            with pytest.raises(ValueError, match="merged_ids"):
                await store.merge_entities(renamed, bad)
        assert await store.get_entity(a.id, TENANT) == a
        assert await store.resolve([b.id], TENANT) == {b.id: b.id}
        await store.merge_entities(a, [b.id])
        with pytest.raises(ValueError, match="canonical"):
            await store.merge_entities(b, [a.id])

    async def test_a_merge_in_one_tenant_never_reaches_another(self) -> None:
        store = self.new_store()
        mine = [make_entity(id=entity_id(n)) for n in (1, 2)]
        theirs = [make_entity(id=entity_id(n), tenant_id=OTHER_TENANT) for n in (1, 2)]
        await store.upsert_entities([*mine, *theirs])
        await store.merge_entities(mine[0], [entity_id(2)])
        assert await store.resolve([entity_id(2)], OTHER_TENANT) == {entity_id(2): entity_id(2)}
        assert await store.get_entity(entity_id(2), OTHER_TENANT) == theirs[1]
        with pytest.raises(MissingEntityError):
            await store.merge_entities(theirs[0], [entity_id(3)])
        await store.unmerge_entities([entity_id(2)], OTHER_TENANT)
        assert await store.resolve([entity_id(2)], TENANT) == {entity_id(2): entity_id(1)}
        assert await store.delete_by_tenant(TENANT) == 1
        assert await store.resolve([entity_id(2)], TENANT) == {entity_id(2): entity_id(2)}

    async def test_deleting_a_canonical_forgets_every_id_merged_into_it(self) -> None:
        """A merge of a merge too: no id may go on resolving to an entity that is gone."""
        store = self.new_store()
        a, b, c, d = (make_entity(id=entity_id(n), name=f"Ada {n}") for n in (1, 2, 3, 4))
        kept = make_entity(id=entity_id(5), name="Bob")
        theirs = make_entity(id=entity_id(4), name="Ada 4", tenant_id=OTHER_TENANT)
        await store.upsert_entities([a, b, c, d, kept, theirs])
        await store.upsert_entity(make_entity(id=entity_id(2), tenant_id=OTHER_TENANT))
        await store.merge_entities(a, [b.id])
        await store.merge_entities(d, [a.id, c.id])
        await store.merge_entities(theirs, [entity_id(2)])

        assert await store.delete_entity(d.id, TENANT) is True

        ids = [a.id, b.id, c.id, d.id, kept.id]
        assert await store.resolve(ids, TENANT) == {i: i for i in ids}
        assert await store.get_entities(ids, TENANT) == [kept]
        assert await store.resolve([entity_id(2)], OTHER_TENANT) == {entity_id(2): theirs.id}

    async def test_deleting_by_a_merged_id_deletes_the_entity_it_reads_as(self) -> None:
        store = self.new_store()
        a, b = make_entity(id=entity_id(1), name="Ada"), make_entity(id=entity_id(2), name="Ada L")
        await store.upsert_entities([a, b])
        await store.merge_entities(a, [b.id])

        assert await store.delete_entity(b.id, TENANT) is True

        assert await store.get_entities([a.id, b.id], TENANT) == []
        assert await store.resolve([a.id, b.id], TENANT) == {a.id: a.id, b.id: b.id}
        assert await store.delete_entity(b.id, TENANT) is False


class GraphTenantCounterCompliance(TenantCounterCompliance):
    """The rules of `redstring.ports.TenantCounter`, for a graph store: entities per tenant."""

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    def new_counter(self) -> GraphStore:
        return self.new_store()

    async def hold(self, store: GraphStore, tenant_id: TenantId, numbers: Sequence[int]) -> None:
        await store.upsert_entities(
            [make_entity(id=entity_id(n), tenant_id=tenant_id) for n in numbers]
        )

    async def drop(self, store: GraphStore, tenant_id: TenantId, number: int) -> bool:
        return await store.delete_entity(entity_id(number), tenant_id)

    async def test_a_merged_away_entity_is_not_counted(self) -> None:
        store = self.new_store()
        assert isinstance(store, TenantCounter)
        a, b = make_entity(id=entity_id(1)), make_entity(id=entity_id(2))
        await store.upsert_entities([a, b])
        await store.merge_entities(a, [b.id])
        assert await store.count(TENANT) == 1


class GraphStoreCompliance(
    GraphReaderWriterCompliance,
    GraphMergeCompliance,
    GraphBatchReadCompliance,
    NameCandidateCompliance,
    GraphTenantCounterCompliance,
    StoreLifetimeCompliance[GraphStore],
):
    """Every rule of `redstring.ports.GraphStore`; subclass and provide `new_store`."""

    port = GraphStore

    # -- the edges: ids, bounds, every method at once ---------------------------

    @pytest.mark.parametrize("bad", [str(TENANT), TENANT.int, None])
    async def test_a_tenant_id_that_is_not_a_uuid_is_refused_by_every_method(
        self, bad: object
    ) -> None:
        store = self.new_store()
        entity = make_entity(id=entity_id(1))
        await store.upsert_entity(entity)
        calls = [
            store.get_entity(entity.id, bad),  # type: ignore[arg-type]
            store.get_entities([entity.id], bad),  # type: ignore[arg-type]
            store.find_entities(bad),  # type: ignore[arg-type]
            store.find_by_blocking_key("p:ada l", bad),  # type: ignore[arg-type]
            store.find_by_blocking_keys(["p:ada l"], bad),  # type: ignore[arg-type]
            store.get_relationship(entity.id, bad),  # type: ignore[arg-type]
            store.get_relationships(entity.id, bad),  # type: ignore[arg-type]
            store.neighbors(entity.id, bad),  # type: ignore[arg-type]
            store.delete_by_tenant(bad),  # type: ignore[arg-type]
        ]
        for call in calls:
            with pytest.raises(ValueError, match=r"^tenant_id must be a TenantId.*TenantId\(UUID"):
                await call
        assert await store.get_entity(entity.id, TENANT) == entity

    @pytest.mark.parametrize("bad", [str(entity_id(1)), 1])
    async def test_an_entity_id_that_is_not_a_uuid_is_refused_by_every_method(
        self, bad: object
    ) -> None:
        store = self.new_store()
        await store.upsert_entity(make_entity(id=entity_id(1)))
        for call, argument in [
            (store.get_entity(bad, TENANT), "entity_id"),  # type: ignore[arg-type]
            (store.get_entities([entity_id(1), bad], TENANT), r"entity_ids\[1\]"),  # type: ignore[list-item]
            (store.get_relationship(bad, TENANT), "relationship_id"),  # type: ignore[arg-type]
            (store.get_relationships(bad, TENANT), "entity_id"),  # type: ignore[arg-type]
            (store.neighbors(bad, TENANT), "entity_id"),  # type: ignore[arg-type]
        ]:
            with pytest.raises(ValueError, match=rf"^{argument} must be an? \w+Id"):
                await call
