"""The composed retrieval surface."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from uuid import UUID

import numpy as np
import pytest
from pydantic import ValidationError

from redstring import (
    DimensionMismatchError,
    Entity,
    EntityId,
    EntityReader,
    FakeEmbeddingProvider,
    GraphReader,
    InMemoryGraphStore,
    InMemoryVectorStore,
    MergeResolver,
    NameCandidateReader,
    RetrievalMode,
    RetrievalResult,
    Retriever,
    ScoredEntity,
)
from redstring.domain.blocking import prefix_key_for_name, soundex_key_for_name
from redstring.domain.fusion import evidence_order, reciprocal_rank_fusion
from redstring.domain.lexical import lexical_score, word_rarity_matches
from redstring.domain.limits import MAX_LIMIT, MAX_QUERY_LENGTH
from redstring.domain.names import NAME_CANDIDATE_LIMIT, unit_overlap
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring import RelationshipId, TenantId
    from redstring.domain.relationship import Relationship

#: A realistic dimension: a check written with `is not` passes at 8 and
#: rejects everything real at 768.
DIMENSION = 384


def entity_id(n: int) -> EntityId:
    """A fixed id whose string order is its number's order."""
    return EntityId(UUID(int=n))


class Stores:
    """The three collaborators, real in-memory adapters, and a way to fill them."""

    def __init__(self) -> None:
        self.embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
        self.vectors = InMemoryVectorStore(dimension=DIMENSION)
        self.graph = InMemoryGraphStore()

    async def add(self, *entities: Entity, graph: bool = True, vector: bool = True) -> None:
        """Store each entity and/or the vector of its name, tagged with its type."""
        if graph:
            await self.graph.upsert_entities(entities)
        if vector:
            vectors = await self.embeddings.embed([entity.name for entity in entities])
            for entity, each in zip(entities, vectors, strict=True):
                await self.vectors.upsert(
                    entity.id, each, entity.tenant_id, metadata={"entity_type": entity.entity_type}
                )

    def retriever(self, graph: GraphReader | None = None) -> Retriever:
        return Retriever(
            embeddings=self.embeddings,
            vectors=self.vectors,
            graph=graph if graph is not None else self.graph,
        )


async def test_an_exact_name_is_retrieved() -> None:
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada, make_entity(name="Charles Babbage"))
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT)
    assert result.query == "Ada Lovelace"
    assert result.matches[0].entity == ada
    assert result.matches[0].semantic == pytest.approx(1.0)
    assert result.matches[0].lexical == 1.0


async def test_a_misspelling_is_retrieved_by_the_lexical_channel() -> None:
    stores = Stores()
    babbage = make_entity(name="Charles Babbage")
    await stores.add(babbage, make_entity(name="Ada Lovelace"))
    result = await stores.retriever().retrieve("Charles Babage", TENANT)
    assert result.matches[0].entity == babbage
    assert result.matches[0].lexical is not None
    assert result.matches[0].lexical > 0.9


async def test_two_tenants_holding_the_same_entity_id_never_cross() -> None:
    """The composite-key case, forced rather than hoped for.

    Ids come from `uuid4()` everywhere else in this repo and never collide, so
    a `(tenant_id, id)` key compared on `id` alone survives every natural
    test. CLAUDE.md records this firing anyway, in a fix round that cited the
    rule. Both tenants get the *same* `EntityId` with different names; each
    retrieve must see only its own.
    """
    stores = Stores()
    mine = make_entity(id=entity_id(1), name="Ada Lovelace")
    theirs = make_entity(id=entity_id(1), name="Ada Lovelock", tenant_id=OTHER_TENANT)
    await stores.add(mine)
    await stores.add(theirs)
    retriever = stores.retriever()
    for tenant, expected in ((TENANT, mine), (OTHER_TENANT, theirs)):
        result = await retriever.retrieve("Ada Lovelace", tenant)
        assert [match.entity for match in result.matches] == [expected]


async def test_a_vector_match_whose_entity_the_graph_lacks_is_skipped() -> None:
    """The two stores are independent projections and lag independently.

    Write the vector and not the entity. The result must omit it, must not
    raise, and must not backfill to `k` from further down -- backfilling would
    hide a projection that had fallen badly behind.
    """
    stores = Stores()
    present = make_entity(id=entity_id(2), name="Ada Lovelace")
    dangling = make_entity(id=entity_id(1), name="Ada Lovelace", entity_type="ghost")
    await stores.add(present)
    await stores.add(dangling, graph=False)
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, mode=RetrievalMode.SEMANTIC)
    assert [match.entity for match in result.matches] == [present]
    assert result.skipped == 1


async def test_a_skipped_dangling_match_is_not_backfilled() -> None:
    """Distinct from the test above: this one asserts the *count*.

    The plan's version (SEMANTIC, three vectors, one dangling, `k=3`) cannot
    fail: no channel is ever longer than `k`, so there is nothing to backfill
    from. Here HYBRID with `k=1` gives the fusion two candidates at rank 1 --
    the dangling id on the semantic channel, a present entity on the lexical
    one -- and the tie-break puts the dangling id first. Skipping it must leave
    nothing; a version that topped up to `k` returns the present entity.
    """
    stores = Stores()
    dangling = make_entity(id=entity_id(1), name="Ada Lovelace")
    present = make_entity(id=entity_id(2), name="Ada Lovelac")
    await stores.add(dangling, graph=False)
    await stores.add(present, vector=False)
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, k=1)
    assert result.matches == []
    assert result.skipped == 1


async def test_the_lexical_channel_scores_a_candidate_after_a_zero_scoring_one() -> None:
    """A bad row followed by a good one.

    On a one-element remainder `break` and `continue` are the same function,
    so the arrangement is deliberate: a zero-scoring candidate carries *both*
    query keys, so it is met again -- as a repeat -- at the head of the second
    key's group, just before the strong candidate that carries only that key.
    A loop that stops there instead of skipping the repeat drops the answer.
    """
    query = "Ada Lovelace"
    prefix, soundex = prefix_key_for_name(query), soundex_key_for_name(query)
    assert soundex is not None
    weak = make_entity(id=entity_id(1), name="Quux", blocking_keys=frozenset({prefix, soundex}))
    strong = make_entity(id=entity_id(2), name="Ada Lovelace", blocking_keys=frozenset({soundex}))
    stores = Stores()
    await stores.add(weak, strong, vector=False)
    result = await stores.retriever().retrieve(query, TENANT, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in result.matches] == [strong, weak]
    assert [match.lexical for match in result.matches] == [1.0, 0.0]


async def test_equal_lexical_scores_break_by_unit_overlap_before_id() -> None:
    """A bare surname scores both names alike; the one closer to the query wins.

    The longer name has the smaller id, so an id tie-break would put it first.
    """
    longer = make_entity(id=entity_id(1), name="Augusta Ada Lovelace")
    shorter = make_entity(id=entity_id(2), name="Ada Lovelace")
    stores = Stores()
    await stores.add(longer, shorter, vector=False)
    result = await stores.retriever().retrieve("Lovelace", TENANT, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in result.matches] == [shorter, longer]
    assert [match.lexical for match in result.matches] == [0.95, 0.95]


async def test_an_entity_reached_only_by_its_keys_fills_a_short_name_answer() -> None:
    """The name index finds one candidate for `k=2`, so the blocking keys are read."""
    query = "Ada Lovelace"
    soundex = soundex_key_for_name(query)
    assert soundex is not None
    keyed = make_entity(id=entity_id(1), name="Quux", blocking_keys=frozenset({soundex}))
    named = make_entity(id=entity_id(2), name="Ada Lovelace")
    stores = Stores()
    await stores.add(keyed, named, vector=False)
    retriever = stores.retriever()
    two = await retriever.retrieve(query, TENANT, k=2, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in two.matches] == [named, keyed]


async def test_entity_types_filters_the_lexical_channel_before_k_is_applied() -> None:
    """Filter-before-k, the defect `ports/vector_store.py` calls out by name.

    `k=1` with one non-matching candidate ranked above one matching candidate.
    Truncating first then filtering returns nothing while a match exists.
    """
    stores = Stores()
    ship = make_entity(name="Ada Lovelace", entity_type="ship")
    person = make_entity(name="Ada Lovelac", entity_type="person")
    await stores.add(ship, person, vector=False)
    result = await stores.retriever().retrieve(
        "Ada Lovelace", TENANT, k=1, mode=RetrievalMode.LEXICAL, entity_types=["person"]
    )
    assert [match.entity for match in result.matches] == [person]


async def test_a_type_filter_finds_the_same_entity_through_both_channels() -> None:
    """Vectors carry `metadata["entity_type"]`; both channels compare it exactly."""
    stores = Stores()
    engine = make_entity(name="Analytical Engine", entity_type="machine")
    await stores.add(engine, make_entity(name="Analytical Engine", entity_type="Machine"))
    retriever = stores.retriever()
    for mode in RetrievalMode:
        result = await retriever.retrieve(
            "Analytical Engine", TENANT, mode=mode, entity_types=["machine"]
        )
        assert [match.entity for match in result.matches] == [engine], mode


async def test_a_result_reports_both_component_scores_when_both_channels_ranked() -> None:
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada)
    [match] = (await stores.retriever().retrieve("Ada Lovelace", TENANT)).matches
    assert match.semantic == pytest.approx(1.0)
    assert match.lexical == 1.0
    assert match.score == pytest.approx(2 / 61)
    # Both channels answered: the evidence's share orders the result (ADR
    # 0104), all of it here, as the channels returned no other candidate.
    assert match.evidence == pytest.approx(1.0)


async def test_a_semantic_only_mode_leaves_lexical_none() -> None:
    """`None` is the claim that the channel did not rank it -- see the type."""
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"))
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, mode=RetrievalMode.SEMANTIC)
    assert [match.lexical for match in result.matches] == [None]
    assert result.matches[0].semantic is not None


async def test_a_lexical_only_mode_makes_no_embedding_call() -> None:
    """The fake counts its calls; assert the count is zero.

    A mode that embedded anyway would be correct in its output and would cost
    a paid round trip per query -- invisible to every assertion about results.
    """
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"), vector=False)
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, mode=RetrievalMode.LEXICAL)
    assert stores.embeddings.calls == ()
    assert [match.semantic for match in result.matches] == [None]


class RevalidatingGraph:
    """A `GraphReader` whose reads return equal but distinct objects.

    Permitted adapter behaviour that no port forbids: a database adapter
    builds new objects from rows on every read.
    """

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self._inner = inner

    @staticmethod
    def _fresh(entities: Sequence[Entity]) -> list[Entity]:
        return [Entity.model_validate(entity.model_dump()) for entity in entities]

    async def get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        found = await self._inner.get_entity(entity_id, tenant_id)
        return None if found is None else self._fresh([found])[0]

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        return self._fresh(await self._inner.get_entities(entity_ids, tenant_id))

    async def find_entities(
        self,
        tenant_id: TenantId,
        *,
        name: str | None = None,
        entity_type: str | None = None,
        limit: int | None = None,
    ) -> list[Entity]:
        return self._fresh(
            await self._inner.find_entities(
                tenant_id, name=name, entity_type=entity_type, limit=limit
            )
        )

    async def find_by_blocking_key(self, key: str, tenant_id: TenantId) -> list[Entity]:
        return self._fresh(await self._inner.find_by_blocking_key(key, tenant_id))

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        found = await self._inner.find_by_blocking_keys(keys, tenant_id)
        return {key: self._fresh(entities) for key, entities in found.items()}

    async def find_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        return self._fresh(await self._inner.find_name_candidates(query, tenant_id, limit=limit))

    async def get_relationship(
        self, relationship_id: RelationshipId, tenant_id: TenantId
    ) -> Relationship | None:
        return await self._inner.get_relationship(relationship_id, tenant_id)

    async def get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, *, relationship_type: str | None = None
    ) -> list[Relationship]:
        return await self._inner.get_relationships(
            entity_id, tenant_id, relationship_type=relationship_type
        )

    async def neighbors(
        self, entity_id: EntityId, tenant_id: TenantId, *, depth: int = 1
    ) -> list[Entity]:
        return self._fresh(await self._inner.neighbors(entity_id, tenant_id, depth=depth))

    async def resolve(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, EntityId]:
        return await self._inner.resolve(entity_ids, tenant_id)


async def test_entities_are_compared_by_equality_not_identity() -> None:
    """Equal, distinct objects from every read must still be recognised as one.

    Use a `GraphStore` wrapper whose reads return
    `Entity.model_validate(entity.model_dump())` -- equal, distinct objects,
    which is a permitted adapter behaviour no port forbids. An entity both
    channels ranked must come back once, with both component scores.
    """
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada, make_entity(name="Ada Lovelock"))
    graph = RevalidatingGraph(stores.graph)
    assert isinstance(graph, GraphReader)
    result = await stores.retriever(graph=graph).retrieve("Ada Lovelace", TENANT)
    assert [match.entity for match in result.matches].count(ada) == 1
    assert result.matches[0].entity == ada
    assert result.matches[0].semantic is not None
    assert result.matches[0].lexical is not None


class PlanGraph:
    """Exactly the graph the plan's `Retriever` reads: three methods, no name index, no merges.

    Its reads return equal, distinct objects, as upstream's wrapper did.
    """

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self._inner = inner

    @staticmethod
    def _fresh(entities: Sequence[Entity]) -> list[Entity]:
        return [Entity.model_validate(entity.model_dump()) for entity in entities]

    async def get_entity(self, entity_id: EntityId, tenant_id: TenantId) -> Entity | None:
        found = await self._inner.get_entity(entity_id, tenant_id)
        return None if found is None else self._fresh([found])[0]

    async def get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        return self._fresh(await self._inner.get_entities(entity_ids, tenant_id))

    async def find_by_blocking_keys(
        self, keys: Sequence[str], tenant_id: TenantId
    ) -> dict[str, list[Entity]]:
        found = await self._inner.find_by_blocking_keys(keys, tenant_id)
        return {key: self._fresh(entities) for key, entities in found.items()}


async def test_the_plans_graph_reader_drives_the_retriever() -> None:
    """Upstream's equality test, against the plan's reader: no name index, no `resolve`.

    The lexical channel falls back to the query's blocking-key groups, and an
    entity both channels ranked comes back once, with both component scores.
    """
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada, make_entity(name="Ada Lovelock"))
    graph = PlanGraph(stores.graph)
    assert isinstance(graph, EntityReader)
    assert not isinstance(graph, NameCandidateReader | MergeResolver)
    result = await Retriever(
        graph=graph, embeddings=stores.embeddings, vectors=stores.vectors
    ).retrieve("Ada Lovelace", TENANT)
    assert [match.entity for match in result.matches].count(ada) == 1
    assert result.matches[0].entity == ada
    assert result.matches[0].semantic is not None
    assert result.matches[0].lexical is not None


async def test_without_a_name_index_the_lexical_channel_reads_the_blocking_keys() -> None:
    """A misspelling sharing only the soundex key is found through its group alone."""
    stores = Stores()
    babbage = make_entity(name="Charles Babbage")
    await stores.add(babbage, make_entity(name="Ada Lovelace"))
    retriever = Retriever(graph=PlanGraph(stores.graph))
    result = await retriever.retrieve("Chorles Babbage", TENANT, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in result.matches] == [babbage]


async def test_without_resolve_every_vector_match_counts_for_its_own_id() -> None:
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada)
    retriever = Retriever(
        graph=PlanGraph(stores.graph), embeddings=stores.embeddings, vectors=stores.vectors
    )
    result = await retriever.retrieve("Ada Lovelace", TENANT, mode=RetrievalMode.SEMANTIC)
    assert [match.entity for match in result.matches] == [ada]


async def test_mutating_a_result_cannot_change_what_a_later_retrieve_returns() -> None:
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace", properties={"aliases": ["Ada"]}))
    retriever = stores.retriever()
    first = await retriever.retrieve("Ada Lovelace", TENANT)
    expected = first.model_copy(deep=True)
    first.matches[0].entity.properties["aliases"].append("Countess")
    first.matches.clear()
    assert await retriever.retrieve("Ada Lovelace", TENANT) == expected


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
async def test_a_blank_query_raises(blank: str) -> None:
    stores = Stores()
    with pytest.raises(ValueError, match="query"):
        await stores.retriever().retrieve(blank, TENANT)
    assert stores.embeddings.calls == ()


@pytest.mark.parametrize("unsafe", ["Ada\x00Lovelace", "Ada \ud800"])
async def test_a_query_no_store_could_hold_raises_naming_the_query(unsafe: str) -> None:
    stores = Stores()
    with pytest.raises(ValueError, match="query"):
        await stores.retriever().retrieve(unsafe, TENANT)


async def test_k_zero_returns_nothing_and_a_negative_k_raises() -> None:
    """Both pinned as literals.

    `VectorStore.search` says the same, and a property sampling `k` from a
    range makes boundary coverage depend on the sampler and on the lowered
    example count under mutation.
    """
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"))
    retriever = stores.retriever()
    assert (await retriever.retrieve("Ada Lovelace", TENANT, k=0)).matches == []
    with pytest.raises(ValueError, match="-1"):
        await retriever.retrieve("Ada Lovelace", TENANT, k=-1)


@pytest.mark.parametrize("bad", [True, 2.5, "3"])
async def test_a_k_that_is_not_an_integer_raises(bad: object) -> None:
    with pytest.raises(ValueError, match="k must"):
        await Stores().retriever().retrieve("Ada", TENANT, k=bad)  # type: ignore[arg-type]


async def test_a_k_at_the_limit_returns_what_there_is_and_past_it_is_refused() -> None:
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"), make_entity(name="Ada Lovelock"))
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, k=MAX_LIMIT)
    assert len(result.matches) == 2
    for k in (MAX_LIMIT + 1, 2**64):
        with pytest.raises(ValueError, match=r"^k must be within 0\.\.100000"):
            await stores.retriever().retrieve("Ada Lovelace", TENANT, k=k)


async def test_a_query_at_the_length_limit_is_answered_and_past_it_is_refused() -> None:
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada)
    query = "Ada Lovelace " + "x" * (MAX_QUERY_LENGTH - len("Ada Lovelace "))
    result = await stores.retriever().retrieve(query, TENANT)
    assert [match.entity for match in result.matches] == [ada]
    with pytest.raises(ValueError, match=r"^query is 1001 characters long; the limit is 1000"):
        await stores.retriever().retrieve(query + "x", TENANT)


@pytest.mark.parametrize("bad", [str(TENANT), TENANT.int, None])
async def test_a_tenant_id_that_is_not_a_uuid_is_refused(bad: object) -> None:
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"))
    for mode in RetrievalMode:
        with pytest.raises(ValueError, match=r"^tenant_id must be a TenantId"):
            await stores.retriever().retrieve("Ada Lovelace", bad, mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("collaborator", "bad"), [("embeddings", "a model"), ("vectors", 7), ("graph", None)]
)
async def test_a_collaborator_that_is_not_its_port_is_refused_naming_it(
    collaborator: str, bad: object
) -> None:
    """`None` for `embeddings` or `vectors` means lexical-only; anything else must fit."""
    stores = Stores()
    arguments: dict[str, object] = {
        "embeddings": stores.embeddings,
        "vectors": stores.vectors,
        "graph": stores.graph,
        collaborator: bad,
    }
    with pytest.raises(ValueError, match=rf"^{collaborator} must implement"):
        Retriever(**arguments)  # type: ignore[arg-type]


async def test_a_type_filter_judges_the_type_the_graph_holds_not_the_vectors() -> None:
    """A vector keeps the type it was written with; the graph's is the entity's type now."""
    stores = Stores()
    ada = make_entity(id=entity_id(1), name="Ada Lovelace", entity_type="person")
    await stores.add(ada)
    await stores.graph.upsert_entity(ada.model_copy(update={"entity_type": "ship"}))
    retriever = stores.retriever()
    for mode in RetrievalMode:
        result = await retriever.retrieve(
            "Ada Lovelace", TENANT, mode=mode, entity_types=["person"]
        )
        assert result.matches == [], mode


async def test_a_stale_match_dropped_by_the_type_filter_is_replaced_by_the_next() -> None:
    """Filter before `k`: `k=1` with a stale-typed match ranked above a current one."""
    stores = Stores()
    stale = make_entity(id=entity_id(1), name="Ada Lovelace", entity_type="person")
    current = make_entity(id=entity_id(2), name="Ada Lovelace", entity_type="person")
    await stores.add(stale, current)
    await stores.graph.upsert_entity(stale.model_copy(update={"entity_type": "ship"}))
    result = await stores.retriever().retrieve(
        "Ada Lovelace", TENANT, k=1, mode=RetrievalMode.SEMANTIC, entity_types=["person"]
    )
    assert [match.entity.id for match in result.matches] == [current.id]


async def test_widening_past_stale_matches_does_not_backfill_a_match_the_graph_lacks() -> None:
    """Stale-typed, lacking, current, current (tied, in id order); `k=2` gives one."""
    stores = Stores()
    stale = make_entity(id=entity_id(1), name="Ada Lovelace")
    lacking = make_entity(id=entity_id(2), name="Ada Lovelace")
    current = make_entity(id=entity_id(3), name="Ada Lovelace")
    await stores.add(stale, current, make_entity(id=entity_id(4), name="Ada Lovelace"))
    await stores.add(lacking, graph=False)
    await stores.graph.upsert_entity(stale.model_copy(update={"entity_type": "ship"}))
    result = await stores.retriever().retrieve(
        "Ada Lovelace", TENANT, k=2, mode=RetrievalMode.SEMANTIC, entity_types=["person"]
    )
    assert [match.entity.id for match in result.matches] == [current.id]
    assert result.skipped == 1


async def test_empty_entity_types_matches_nothing() -> None:
    """`[]` means nothing matches; `None` means no filter. Same as the port."""
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"))
    retriever = stores.retriever()
    assert (await retriever.retrieve("Ada Lovelace", TENANT, entity_types=[])).matches == []
    assert len((await retriever.retrieve("Ada Lovelace", TENANT, entity_types=None)).matches) == 1


async def test_a_bare_string_for_entity_types_is_refused_rather_than_iterated() -> None:
    with pytest.raises(ValueError, match="person"):
        await Stores().retriever().retrieve("Ada", TENANT, entity_types="person")


async def test_a_mode_may_be_given_by_its_string_and_an_unknown_one_is_named() -> None:
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"), vector=False)
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, mode="lexical")  # type: ignore[arg-type]
    assert len(result.matches) == 1
    with pytest.raises(ValueError, match="fuzzy"):
        await stores.retriever().retrieve("Ada", TENANT, mode="fuzzy")  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_a_provider_and_store_of_different_dimensions_are_refused() -> None:
    """At construction, before any text is embedded -- `build_graph`'s rule."""
    with pytest.raises(DimensionMismatchError):
        Retriever(
            embeddings=FakeEmbeddingProvider(dimension=8),
            vectors=InMemoryVectorStore(dimension=16),
            graph=InMemoryGraphStore(),
        )


async def test_equal_dimensions_at_a_realistic_size_are_accepted() -> None:
    """The other side of the check: a `!=` written as `is not` fails here, at 768."""
    dimension = int("768")
    Retriever(
        embeddings=FakeEmbeddingProvider(dimension=dimension),
        vectors=InMemoryVectorStore(dimension=dimension),
        graph=InMemoryGraphStore(),
    )


async def test_more_results_than_k_are_truncated() -> None:
    stores = Stores()
    names = ["Ada Lovelace", "Ada Lovelock", "Ada Loveless", "Ada Lovely"]
    await stores.add(*(make_entity(name=name) for name in names))
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, k=2)
    assert len(result.matches) == 2
    assert result.matches[0].entity.name == "Ada Lovelace"
    scores = [match.score for match in result.matches]
    assert scores == sorted(scores, reverse=True)


# -- the name index, abstention, ties and a lexical-only Retriever -------------


async def test_a_surname_alone_reaches_the_full_name_lexically() -> None:
    """No prefix or soundex key is shared; the name index reaches it."""
    stores = Stores()
    babbage = make_entity(name="Charles Babbage", blocking_keys=frozenset())
    await stores.add(babbage, make_entity(name="Ada Lovelace"), vector=False)
    result = await stores.retriever().retrieve("Babbage", TENANT, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in result.matches] == [babbage]


async def test_an_alias_is_scored_at_the_name_weight() -> None:
    stores = Stores()
    mumbai = make_entity(name="Mumbai", properties={"aliases": ["Bombay"]})
    await stores.add(mumbai, vector=False)
    result = await stores.retriever().retrieve("bombay", TENANT, mode=RetrievalMode.LEXICAL)
    assert [(match.entity, match.lexical) for match in result.matches] == [(mumbai, 1.0)]


async def test_a_reordered_name_with_punctuation_scores_one() -> None:
    stores = Stores()
    ada = make_entity(name="Ada Lovelace")
    await stores.add(ada, vector=False)
    result = await stores.retriever().retrieve("LOVELACE, Ada", TENANT, mode=RetrievalMode.LEXICAL)
    assert [(match.entity, match.lexical) for match in result.matches] == [(ada, 1.0)]


async def test_the_lexical_channel_abstains_when_nothing_shares_enough() -> None:
    """No name unit, no key in common: nothing, rather than the least bad name."""
    stores = Stores()
    await stores.add(make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage"))
    retriever = stores.retriever()
    lexical = await retriever.retrieve("東京", TENANT, mode=RetrievalMode.LEXICAL)
    assert lexical.matches == []
    hybrid = await retriever.retrieve("東京", TENANT)
    assert all(match.lexical is None for match in hybrid.matches)
    assert len(hybrid.matches) == 2


async def test_a_tie_in_the_fused_score_is_broken_by_the_evidence_not_the_id() -> None:
    """Each channel's first answer scores 1/61: the stronger evidence must win.

    The semantic channel ranks the dangling-free, lower-id entity first on a
    weak vector match; the lexical channel ranks the other first on an exact
    name. An id tie-break would put id 1 first.
    """
    stores = Stores()
    weak = make_entity(id=entity_id(1), name="Lovelace Institute", blocking_keys=frozenset())
    exact = make_entity(id=entity_id(2), name="Ada Lovelace")
    await stores.add(exact, vector=False)
    await stores.add(weak, graph=True, vector=False)
    # The semantic channel holds only `weak`, under a vector unlike the query's.
    [vector] = await stores.embeddings.embed(["something else entirely"])
    await stores.vectors.upsert(weak.id, vector, TENANT, metadata={"entity_type": "person"})
    result = await stores.retriever().retrieve("Ada Lovelace", TENANT, k=1)
    fused = reciprocal_rank_fusion([[weak.id], [exact.id]])
    assert fused[0][1] == fused[1][1] == 1 / 61
    assert [match.entity for match in result.matches] == [exact]
    assert result.matches[0].score == 1 / 61
    evidence = result.matches[0].evidence
    assert evidence is not None
    assert 0.5 < evidence < 1.0  # its share of the two (ADR 0104)


async def test_a_lexical_only_retriever_needs_no_embedding_provider() -> None:
    graph = InMemoryGraphStore()
    ada = make_entity(name="Ada Lovelace")
    await graph.upsert_entity(ada)
    retriever = Retriever(graph=graph)
    result = await retriever.retrieve("Ada Lovelace", TENANT, mode=RetrievalMode.LEXICAL)
    assert [match.entity for match in result.matches] == [ada]
    for mode in (RetrievalMode.HYBRID, RetrievalMode.SEMANTIC):
        with pytest.raises(ValueError, match=f"{mode.value}.*lexical"):
            await retriever.retrieve("Ada Lovelace", TENANT, mode=mode)


async def test_embeddings_without_vectors_or_the_reverse_is_refused() -> None:
    with pytest.raises(ValueError, match="embeddings was given without vectors"):
        Retriever(embeddings=FakeEmbeddingProvider(dimension=8), graph=InMemoryGraphStore())
    with pytest.raises(ValueError, match="vectors was given without embeddings"):
        Retriever(vectors=InMemoryVectorStore(dimension=8), graph=InMemoryGraphStore())


async def test_a_merged_entitys_vector_counts_once_for_its_canonical() -> None:
    """Both vectors of a merged pair stand for one entity, ranked once, at its best."""
    stores = Stores()
    ada = make_entity(id=entity_id(1), name="Ada Lovelace")
    byron = make_entity(id=entity_id(2), name="Ada Byron")
    other = make_entity(id=entity_id(3), name="Charles Babbage")
    await stores.add(ada, byron, other)
    await stores.graph.merge_entities(ada, [byron.id])
    result = await stores.retriever().retrieve("Ada Byron", TENANT, mode=RetrievalMode.SEMANTIC)
    assert [match.entity.id for match in result.matches] == [ada.id, other.id]
    assert result.matches[0].semantic == pytest.approx(1.0)
    assert [match.score for match in result.matches] == [1 / 61, 1 / 62]


async def test_a_result_is_what_validating_its_fields_would_build() -> None:
    """Results are assembled without re-running validators: they must not differ."""
    stores = Stores()
    await stores.add(
        make_entity(name="Ada Lovelace"),
        make_entity(name="Ada Byron"),
        make_entity(name="Charles Babbage"),
    )
    retriever = stores.retriever()
    for mode in RetrievalMode:
        result = await retriever.retrieve("Ada Lovelace", TENANT, mode=mode)
        assert result.matches
        rebuilt = RetrievalResult(
            query=result.query,
            matches=[
                ScoredEntity(
                    entity=match.entity,
                    score=match.score,
                    semantic=match.semantic,
                    lexical=match.lexical,
                    evidence=match.evidence,
                )
                for match in result.matches
            ],
        )
        assert result == rebuilt
        assert result.model_dump_json() == rebuilt.model_dump_json()
        assert result.model_fields_set == rebuilt.model_fields_set
        assert [match.model_fields_set for match in result.matches] == [
            match.model_fields_set for match in rebuilt.matches
        ]
    empty = await retriever.retrieve("Ada Lovelace", TENANT, k=0)
    assert empty == RetrievalResult(query="Ada Lovelace", matches=[])
    assert empty.model_fields_set == {"query", "matches"}


def test_a_score_the_validator_would_convert_or_refuse_still_goes_through_it() -> None:
    entity = make_entity(name="Ada Lovelace")
    converted = ScoredEntity(entity=entity, score=np.float64(1 / 61), semantic=np.float64(0.25))
    assert type(converted.score) is float
    assert type(converted.semantic) is float
    assert converted == ScoredEntity(entity=entity, score=1 / 61, semantic=0.25)
    for semantic, lexical in ((1.5, None), (None, -0.25), (math.nan, None)):
        with pytest.raises(ValidationError):
            ScoredEntity(entity=entity, score=1 / 61, semantic=semantic, lexical=lexical)
    assert ScoredEntity(entity=entity, score=1 / 61, semantic=0.0, lexical=1.0).lexical == 1.0


def test_a_query_the_validator_would_convert_still_goes_through_it() -> None:
    class Text(str):
        __slots__ = ()

    result = RetrievalResult(query=Text("Ada"), matches=[])
    assert type(result.query) is str
    assert result == RetrievalResult(query="Ada", matches=[])


@pytest.mark.parametrize("mode", [RetrievalMode.LEXICAL, RetrievalMode.HYBRID])
async def test_a_lexical_match_is_a_copy_the_caller_may_change(mode: RetrievalMode) -> None:
    # The in-memory store lends its own entities to the lexical channel; two
    # entities without properties share the store's one empty dict.
    stores = Stores()
    ada, byron = make_entity(name="Ada Lovelace"), make_entity(name="Ada Byron")
    aliased = make_entity(name="Augusta Ada", properties={"aliases": ["Ada King"]})
    await stores.add(ada, byron, aliased)
    result = await stores.retriever().retrieve("Ada", TENANT, mode=mode)
    assert {match.entity.id for match in result.matches} == {ada.id, byron.id, aliased.id}
    for match in result.matches:
        match.entity.properties["changed"] = True
        match.entity.properties.get("aliases", []).append("Changed")
    for original in (ada, byron, aliased):
        held = await stores.graph.get_entity(original.id, TENANT)
        assert held is not None
        assert held.properties == original.properties
    lent = await stores.graph.find_shared_name_candidates("Ada", TENANT)
    assert sorted(entity.properties == {} for entity in lent) == [False, True, True]
    assert aliased.properties == {"aliases": ["Ada King"]}


async def test_a_hybrid_answer_is_the_evidence_order_of_the_two_channels_answers() -> None:
    """RRF picks the `k`, the shipped evidence orders them (ADRs 0104, 0116).

    Asserted against `evidence_order` over what each channel answers alone,
    so the wiring is what is tested: a Retriever that sorted by the fused
    score alone, or cut to `k` after reordering, gives another list.
    """
    stores = Stores()
    names = ["Ada Lovelace", "Ada Byron", "Augusta Ada King", "Lovelace Institute"]
    names += ["Charles Babbage", "Adam Lovell", "Ida Lovelock"]
    await stores.add(*(make_entity(id=entity_id(n + 1), name=name) for n, name in enumerate(names)))
    # Two entities the semantic channel alone finds, under another text's vector.
    vectorless = [
        make_entity(id=entity_id(20), name="Countess"),
        make_entity(id=entity_id(21), name="Enchantress of Numbers"),
    ]
    await stores.add(*vectorless, vector=False)
    for entity in vectorless:
        [vector] = await stores.embeddings.embed(["Ada Lovelace, Countess"])
        await stores.vectors.upsert(entity.id, vector, TENANT, metadata={"entity_type": "person"})
    retriever = stores.retriever()
    for k in (1, 3, 10):
        semantic = await retriever.retrieve("Ada Lovlace", TENANT, k=k, mode=RetrievalMode.SEMANTIC)
        lexical = await retriever.retrieve("Ada Lovlace", TENANT, k=k, mode=RetrievalMode.LEXICAL)
        hybrid = await retriever.retrieve("Ada Lovlace", TENANT, k=k)
        candidates = [match.entity for match in (*semantic.matches, *lexical.matches)]
        ranked = {match.entity.id for match in lexical.matches}
        unranked = [entity for entity in candidates if entity.id not in ranked]
        expected = evidence_order(
            [(match.entity.id, match.semantic or 0.0) for match in semantic.matches],
            [(match.entity.id, match.lexical or 0.0) for match in lexical.matches],
            k,
            words=word_rarity_matches("Ada Lovlace", candidates),
            unranked_lexical={
                entity.id: lexical_score("Ada Lovlace", entity) for entity in unranked
            },
            overlaps={entity.id: unit_overlap("Ada Lovlace", entity) for entity in candidates},
        )
        assert [(match.entity.id, match.evidence) for match in hybrid.matches] == expected, k
        # The score stays the fused RRF score of the two channels' rankings.
        rrf = dict(
            reciprocal_rank_fusion(
                [
                    [match.entity.id for match in semantic.matches],
                    [match.entity.id for match in lexical.matches],
                ]
            )
        )
        assert [match.score for match in hybrid.matches] == [
            rrf[match.entity.id] for match in hybrid.matches
        ], k
