"""The name-candidate contracts: `NameCandidateReader` and `SharedNameCandidateReader`.

`GraphStoreCompliance` includes `NameCandidateCompliance`; a store that
lends its candidates mixes in `SharedNameCandidateCompliance` too.
"""

from __future__ import annotations

from uuid import UUID

import pytest

from redstring.domain.exceptions import ClosedError
from redstring.domain.ids import EntityId
from redstring.ports.graph_store import GraphStore, SharedNameCandidateReader
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity


def entity_id(n: int) -> EntityId:
    """A fixed id whose string order is its number's order."""
    return EntityId(UUID(int=n))


class NameCandidateCompliance:
    """The rules of `NameCandidateReader`: candidates by shared name units."""

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    async def test_a_name_candidate_round_trips_by_a_word_of_its_name(self) -> None:
        store = self.new_store()
        babbage = make_entity(id=entity_id(1), name="Charles Babbage")
        await store.upsert_entities([babbage, make_entity(id=entity_id(2), name="Ada Lovelace")])
        assert await store.find_name_candidates("babbage", TENANT) == [babbage]
        assert await store.find_name_candidates("Babage, Charles", TENANT) == [babbage]

    async def test_folding_reaches_an_accented_name_and_its_bare_spelling(self) -> None:
        store = self.new_store()
        munoz = make_entity(id=entity_id(1), name="José Muñoz")
        await store.upsert_entity(munoz)
        assert await store.find_name_candidates("MUNOZ", TENANT) == [munoz]

    async def test_a_name_in_another_script_and_its_romanization_reach_each_other(self) -> None:
        store = self.new_store()
        moscow = make_entity(id=entity_id(1), name="Москва")
        athens = make_entity(id=entity_id(2), name="Athina")
        await store.upsert_entities([moscow, athens])
        assert await store.find_name_candidates("Moskva", TENANT) == [moscow]
        assert await store.find_name_candidates("Αθήνα", TENANT) == [athens]

    async def test_candidates_rank_by_shared_units_then_by_id(self) -> None:
        store = self.new_store()
        # Shares "lovelace" and "ada" with the query: most units.
        both = make_entity(id=entity_id(9), name="Ada Lovelace")
        # Two entities sharing only "lovelace": equal counts, so id decides.
        second = make_entity(id=entity_id(3), name="Lovelace")
        third = make_entity(id=entity_id(5), name="Lovelace")
        unrelated = make_entity(id=entity_id(1), name="Zebra Holdings")
        await store.upsert_entities([unrelated, third, both, second])
        found = await store.find_name_candidates("Ada Lovelace", TENANT)
        assert found == [both, second, third]
        assert await store.find_name_candidates("Ada Lovelace", TENANT, limit=2) == [both, second]
        assert await store.find_name_candidates("Ada Lovelace", TENANT, limit=0) == []

    async def test_nothing_sharing_enough_gives_no_candidates(self) -> None:
        """Abstention: one shared unit ("  a" from a word starting with a) is not enough."""
        store = self.new_store()
        await store.upsert_entities([make_entity(id=entity_id(1), name="Ada Lovelace")])
        assert await store.find_name_candidates("Axe", TENANT) == []
        assert await store.find_name_candidates("北京", TENANT) == []
        assert await store.find_name_candidates("   ", TENANT) == []
        assert await store.find_name_candidates("...", TENANT) == []

    async def test_a_single_letter_word_is_shared_whole(self) -> None:
        store = self.new_store()
        letter = make_entity(id=entity_id(1), name="Q")
        await store.upsert_entity(letter)
        assert await store.find_name_candidates("q", TENANT) == [letter]

    async def test_aliases_and_the_normalized_name_are_found_and_other_properties_are_not(
        self,
    ) -> None:
        store = self.new_store()
        mumbai = make_entity(
            id=entity_id(1),
            name="Mumbai",
            properties={"aliases": ["Bombay", 7, ["Zanzibar"]], "note": "Kolkata"},
        )
        extracted = make_entity(id=entity_id(2), name="A. Lovelace", normalized_name="augusta")
        await store.upsert_entities([mumbai, extracted])
        assert await store.find_name_candidates("Bombay", TENANT) == [mumbai]
        assert await store.find_name_candidates("Zanzibar", TENANT) == []
        assert await store.find_name_candidates("Kolkata", TENANT) == []
        assert await store.find_name_candidates("Augusta", TENANT) == [extracted]

    async def test_replacing_an_entity_reindexes_its_names(self) -> None:
        store = self.new_store()
        await store.upsert_entity(
            make_entity(id=entity_id(1), name="Bombay", properties={"aliases": ["Zanzibar"]})
        )
        renamed = make_entity(id=entity_id(1), name="Mumbai")
        await store.upsert_entity(renamed)
        assert await store.find_name_candidates("Bombay", TENANT) == []
        assert await store.find_name_candidates("Zanzibar", TENANT) == []
        assert await store.find_name_candidates("Mumbai", TENANT) == [renamed]

    async def test_many_replacements_keep_one_candidate_per_entity(self) -> None:
        """Enough rewrites that an index retiring rows must compact, and stay right."""
        store = self.new_store()
        for word in ("Alpha", "Bravo", "Charlie"):
            await store.upsert_entities(
                [make_entity(id=entity_id(n), name=f"{word} {n}") for n in range(1, 801)]
            )
        found = await store.find_name_candidates("Charlie 7", TENANT, limit=3)
        assert found[0].name == "Charlie 7"
        assert len({entity.id for entity in found}) == 3
        assert await store.find_name_candidates("Alpha", TENANT) == []
        assert len(await store.find_name_candidates("Charlie", TENANT, limit=1000)) == 800

    async def test_name_candidates_never_cross_tenants(self) -> None:
        store = self.new_store()
        mine = make_entity(id=entity_id(1), name="Ada Lovelace")
        theirs = make_entity(id=entity_id(1), name="Ada Lovelace", tenant_id=OTHER_TENANT)
        theirs = theirs.model_copy(update={"description": "the other tenant's"})
        only_theirs = make_entity(id=entity_id(2), name="Ada Byron", tenant_id=OTHER_TENANT)
        await store.upsert_entities([mine, theirs, only_theirs])
        assert await store.find_name_candidates("Ada Lovelace", TENANT) == [mine]
        assert await store.find_name_candidates("Byron", TENANT) == []
        assert await store.delete_by_tenant(OTHER_TENANT) == 2
        assert await store.find_name_candidates("Ada Lovelace", OTHER_TENANT) == []
        assert await store.find_name_candidates("Ada Lovelace", TENANT) == [mine]

    async def test_name_candidates_are_copies(self) -> None:
        store = self.new_store()
        await store.upsert_entity(make_entity(id=entity_id(1), properties={"aliases": ["Ada"]}))
        [found] = await store.find_name_candidates("Ada Lovelace", TENANT)
        found.properties["aliases"].append("changed")
        again = await store.get_entity(entity_id(1), TENANT)
        assert again is not None
        assert again.properties == {"aliases": ["Ada"]}

    async def test_a_huge_query_is_answered_from_its_first_characters(self) -> None:
        store = self.new_store()
        ada = make_entity(id=entity_id(1), name="Ada Lovelace")
        await store.upsert_entity(ada)
        assert await store.find_name_candidates("Ada Lovelace " + "x" * 1_000_000, TENANT) == [ada]

    @pytest.mark.parametrize("bad", [-1, True, 2.5, "3", None])
    async def test_a_limit_that_is_not_a_non_negative_integer_is_refused(self, bad: object) -> None:
        store = self.new_store()
        with pytest.raises(ValueError, match="limit"):
            await store.find_name_candidates("Ada", TENANT, limit=bad)  # type: ignore[arg-type]

    async def test_a_query_that_is_not_a_string_is_refused(self) -> None:
        with pytest.raises(ValueError, match="query"):
            await self.new_store().find_name_candidates(["Ada"], TENANT)  # type: ignore[arg-type]


class SharedNameCandidateCompliance:
    """Every rule of `redstring.ports.SharedNameCandidateReader`.

    Mix it into the `GraphStoreCompliance` subclass of a store that offers
    the capability; its `new_store()` serves both suites.
    """

    def new_store(self) -> GraphStore:
        raise NotImplementedError

    async def test_shared_candidates_are_the_held_entities_the_lookup_copies(self) -> None:
        store = self.new_store()
        assert isinstance(store, SharedNameCandidateReader)
        lender = store
        mine = make_entity(name="Ada Lovelace", properties={"aliases": ["Countess"]})
        # The same id and name in another tenant: never lent across.
        theirs = make_entity(id=mine.id, name="Ada Lovelace", tenant_id=OTHER_TENANT)
        await store.upsert_entities([mine, theirs, make_entity(name="Charles Babbage")])
        lent = await lender.find_shared_name_candidates("Ada Lovelace", TENANT)
        copies = await store.find_name_candidates("Ada Lovelace", TENANT)
        assert lent == copies == [mine]
        [again] = await lender.find_shared_name_candidates("Ada Lovelace", TENANT, limit=1)
        assert again is lent[0]
        assert copies[0] is not lent[0]
        assert copies[0].properties is not lent[0].properties
        assert await lender.find_shared_name_candidates("Ada Lovelace", OTHER_TENANT) == [theirs]
        assert await lender.find_shared_name_candidates("Ada Lovelace", TENANT, limit=0) == []
        assert await lender.find_shared_name_candidates("Ada", entity_id(99)) == []  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [-1, True, 2.5, None])
    async def test_a_shared_lookup_refuses_what_the_lookup_refuses(self, bad: object) -> None:
        lender = self.new_store()
        assert isinstance(lender, SharedNameCandidateReader)
        assert isinstance(lender, AsyncClosable)
        with pytest.raises(ValueError, match="limit"):
            await lender.find_shared_name_candidates("Ada", TENANT, limit=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="tenant"):
            await lender.find_shared_name_candidates("Ada", "tenant")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="query"):
            await lender.find_shared_name_candidates(7, TENANT)  # type: ignore[arg-type]
        await lender.close()
        with pytest.raises(ClosedError):
            await lender.find_shared_name_candidates("Ada", TENANT)
