"""A relation chain followed over a graph: stated types, their inverses, the entities it binds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.relation_chains import read_relation_chain
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.chains import follow_chain
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship

NAMES = ("Gus", "Pia", "Ada", "Cal", "Cora", "Xan", "Fay", "Bo", "Hal")


async def family(tenant: TenantId = TENANT) -> tuple[InMemoryGraphStore, dict[str, Entity]]:
    """Gus is Pia's and Ada's father; Cal and Cora are Ada's, Xan is Pia's; Fay is Xan's friend.

    Pia's children state her as their parent only from their side (`Xan --mother--> Pia`),
    so reaching Pia's child reads an inverse; Bo is Ada's husband, and Hal holds the
    hobby "chess" with Xan.
    """
    graph = InMemoryGraphStore()
    people = {name: make_entity(name=name, tenant_id=tenant) for name in NAMES}
    chess = make_entity(name="chess", entity_type="hobby", tenant_id=tenant)
    people["chess"] = chess
    await graph.upsert_entities(list(people.values()))

    def edge(source: str, kind: str, target: str) -> Relationship:
        return make_relationship(
            people[source], people[target], relationship_type=kind, tenant_id=tenant
        )

    await graph.upsert_relationships(
        [
            edge("Pia", "father", "Gus"),
            edge("Ada", "father", "Gus"),
            edge("Gus", "daughter", "Pia"),
            edge("Gus", "daughter", "Ada"),
            edge("Pia", "sister", "Ada"),
            edge("Ada", "sister", "Pia"),
            edge("Ada", "son", "Cal"),
            edge("Ada", "daughter", "Cora"),
            edge("Xan", "mother", "Pia"),
            edge("Ada", "husband", "Bo"),
            edge("Xan", "friend", "Fay"),
            edge("Xan", "hobby", "chess"),
            edge("Hal", "hobby", "chess"),
        ]
    )
    return graph, people


async def graph_of(
    *facts: tuple[str, str, str], graph: InMemoryGraphStore | None = None
) -> tuple[InMemoryGraphStore, dict[str, Entity]]:
    """A graph of `(source, type, target)` facts between people named in them."""
    store = InMemoryGraphStore() if graph is None else graph
    names = dict.fromkeys(name for source, _, target in facts for name in (source, target))
    people = {name: make_entity(name=name) for name in names}
    await store.upsert_entities(list(people.values()))
    await store.upsert_relationships(
        [
            make_relationship(people[source], people[target], relationship_type=kind)
            for source, kind, target in facts
        ]
    )
    return store, people


async def names_bound(
    graph: InMemoryGraphStore, people: dict[str, Entity], query: str, seed: str
) -> set[str]:
    """The names of the people `query`'s chain binds from `seed`."""
    names = {entity.id: name for name, entity in people.items()}
    chain = read_relation_chain(query)
    found = await follow_chain(graph, TENANT, {people[seed].id: 1.0}, chain, limit=8)
    return {names[entity_id] for entity_id in found.scores}


async def bound(query: str, seed: str, *, limit: int = 64) -> dict[str, float]:
    graph, people = await family()
    names = {entity.id: name for name, entity in people.items()}
    found = await follow_chain(
        graph, TENANT, {people[seed].id: 1.0}, read_relation_chain(query), limit=limit
    )
    return {names[entity_id]: score for entity_id, score in found.scores.items()}


async def test_a_chain_binds_every_link_of_it_not_only_its_end() -> None:
    # Xan's cousins: Xan's parent Pia, her sibling Ada, Ada's children.
    assert set(await bound("Who is the cousin of Xan?", "Xan")) == {"Xan", "Cal", "Cora"}
    assert set(await bound("Who is the sister of the cousin of Xan?", "Xan")) == {
        "Xan",
        "Cal",
        "Cora",
    }
    assert set(await bound("Who is the grandfather of Cal?", "Cal")) == {"Cal", "Gus"}


async def test_a_gender_asked_keeps_only_the_stated_types_of_it() -> None:
    assert set(await bound("Who is the female cousin of Xan?", "Xan")) == {"Xan", "Cora"}
    assert set(await bound("Who is the son of Ada?", "Ada")) == {"Ada", "Cal"}


async def test_a_relation_stated_only_the_other_way_is_read_as_its_inverse() -> None:
    # No edge says Pia's child; Xan says Pia is his mother.
    assert set(await bound("Who is the child of Pia?", "Pia")) == {"Pia", "Xan"}
    # A stated relation wins over the inverse: Gus states his daughters.
    assert set(await bound("Who is the child of Gus?", "Gus")) == {"Gus", "Pia", "Ada"}


async def test_the_in_law_and_across_marriage_spellings_are_both_followed() -> None:
    assert set(await bound("Who is the father-in-law of Bo?", "Bo")) == {"Bo", "Gus"}
    # Ada's aunt-by-marriage does not exist, her nephew does: Pia's son Xan.
    assert set(await bound("Who is the nephew of Ada?", "Ada")) == {"Ada", "Xan"}


async def test_a_seed_in_no_basic_relation_stands_for_what_it_is_joined_to() -> None:
    found = await bound("Who is the friend of the person whose hobby is chess?", "chess")
    assert set(found) == {"chess", "Xan", "Hal", "Fay"}


async def test_a_term_that_leads_nowhere_ends_the_chain_with_what_it_bound() -> None:
    assert set(await bound("Who is the mother of the wife of Cal?", "Cal")) == {"Cal"}
    assert set(await bound("Who is the son of the mother of Xan?", "Xan")) == {"Xan", "Pia"}


async def test_seeds_keep_their_weights_and_an_empty_chain_binds_the_seeds_alone() -> None:
    graph, people = await family()
    seeds = {people["Xan"].id: 0.5, people["Gus"].id: 1.0, people["Bo"].id: 0.0}
    found = await follow_chain(
        graph, TENANT, seeds, read_relation_chain("the parent of X"), limit=8
    )
    assert found.scores == {
        people["Xan"].id: 0.5,
        people["Gus"].id: 1.0,
        people["Pia"].id: 0.5,
    }
    assert {edge.relationship_type for edge in found.relationships.values()} == {"mother"}
    alone = await follow_chain(graph, TENANT, seeds, read_relation_chain("Who is Xan?"), limit=8)
    assert alone.scores == {people["Xan"].id: 0.5, people["Gus"].id: 1.0}
    assert not alone.relationships
    assert (
        await follow_chain(graph, TENANT, {}, read_relation_chain("the son of X"), limit=8)
    ).scores == {}


@given(limit=st.integers(min_value=1, max_value=4))
@example(limit=1)
@example(limit=2)
async def test_each_step_keeps_at_most_limit_entities(limit: int) -> None:
    found = await bound("Who is the child of Gus?", "Gus", limit=limit)
    assert len(found) == 1 + min(limit, 2)


async def test_another_tenants_edges_under_the_same_ids_are_not_followed() -> None:
    graph, people = await family()
    # The same ids in another tenant, joined otherwise: Cal's father there is Hal.
    there = {
        name: entity.model_copy(update={"tenant_id": OTHER_TENANT})
        for name, entity in people.items()
    }
    await graph.upsert_entities(list(there.values()))
    await graph.upsert_relationships(
        [make_relationship(there["Cal"], there["Hal"], relationship_type="father")]
    )
    chain = read_relation_chain("Who is the parent of Cal?")
    seeds = {people["Cal"].id: 1.0}
    here_found = await follow_chain(graph, TENANT, seeds, chain, limit=8)
    there_found = await follow_chain(graph, OTHER_TENANT, seeds, chain, limit=8)
    assert set(here_found.scores) == {people["Cal"].id, people["Ada"].id}
    assert set(there_found.scores) == {people["Cal"].id, people["Hal"].id}


async def test_an_entity_reached_twice_keeps_its_best_weight() -> None:
    graph, people = await family()
    seeds = {people["Ada"].id: 0.9, people["Pia"].id: 0.3}
    found = await follow_chain(
        graph, TENANT, seeds, read_relation_chain("the father of X"), limit=8
    )
    assert found.scores[people["Gus"].id] == 0.9


async def test_a_step_inside_a_term_keeps_at_most_limit_entities_too() -> None:
    graph, people = await family()
    chain = read_relation_chain("Who is the grandchild of Gus?")
    found = await follow_chain(graph, TENANT, {people["Gus"].id: 1.0}, chain, limit=1)
    daughters = {people["Pia"].id, people["Ada"].id}
    # Only one daughter is kept after the first step, so only her children are read.
    stepped_from = {
        edge.source_entity_id if edge.source_entity_id in daughters else edge.target_entity_id
        for edge in found.relationships.values()
        if edge.relationship_type != "daughter"
    }
    assert len(stepped_from) == 1
    assert stepped_from <= daughters


async def test_an_end_said_to_be_of_the_other_gender_is_not_taken_by_implication() -> None:
    # Pia says only her father; Gus's "daughter" edge implies he is her parent.
    assert set(await bound("Who is the mother of Pia?", "Pia")) == {"Pia"}
    assert set(await bound("Who is the parent of Pia?", "Pia")) == {"Pia", "Gus"}


async def test_a_type_that_says_of_is_read_from_its_target() -> None:
    graph, people = await graph_of(
        ("Ann", "mother_of", "Bea"), ("Dan", "FATHER_OF", "Bea"), ("Bea", "married_to", "Cy")
    )
    assert await names_bound(graph, people, "Who is the mother of Bea?", "Bea") == {"Bea", "Ann"}
    assert await names_bound(graph, people, "Who is the father of Bea?", "Bea") == {"Bea", "Dan"}
    assert await names_bound(graph, people, "Who is the child of Ann?", "Ann") == {"Ann", "Bea"}
    assert await names_bound(graph, people, "Who is the mother-in-law of Cy?", "Cy") == {
        "Cy",
        "Ann",
    }


async def test_a_step_asking_no_gender_takes_what_is_said_and_what_is_implied() -> None:
    graph, people = await graph_of(("Ann", "father", "Dan"), ("Mia", "daughter", "Ann"))
    assert await names_bound(graph, people, "Who is the parent of Ann?", "Ann") == {
        "Ann",
        "Dan",
        "Mia",
    }
    # Dan is said to be her father, so only Mia can be the mother implied.
    assert await names_bound(graph, people, "Who is the mother of Ann?", "Ann") == {"Ann", "Mia"}
    assert await names_bound(graph, people, "Who is the father of Ann?", "Ann") == {"Ann", "Dan"}


class CountingGraph(InMemoryGraphStore):
    """The in-memory graph, counting the entities whose relationships are read."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[EntityId] = []

    async def relationships_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        self.asked += entity_ids
        return await super().relationships_of(entity_ids, tenant_id)


async def test_relationships_already_read_are_not_read_again_and_new_ones_are_kept() -> None:
    graph = CountingGraph()
    _, people = await graph_of(("Ann", "mother", "Bea"), ("Bea", "mother", "Cy"), graph=graph)
    ann, bea, cy = (people[name] for name in ("Ann", "Bea", "Cy"))
    read = await graph.relationships_of([ann.id], TENANT)
    graph.asked.clear()
    chain = read_relation_chain("Who is the grandmother of Ann?")
    found = await follow_chain(graph, TENANT, {ann.id: 1.0}, chain, limit=8, read=read)
    assert set(found.scores) == {ann.id, cy.id}
    assert graph.asked == [bea.id]
    assert set(read) == {ann.id, bea.id}
