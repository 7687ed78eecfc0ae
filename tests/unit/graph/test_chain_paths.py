"""The path a relation chain followed to each of its answers, the middle of it included."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.relation_chains import read_relation_chain
from redstring.graph.chains import ChainPath, follow_chain
from redstring.testing.factories import TENANT
from tests.unit.graph.test_chains import family, graph_of

if TYPE_CHECKING:
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId
    from redstring.graph.adapters.memory import InMemoryGraphStore


async def paths(
    graph: InMemoryGraphStore,
    people: dict[str, Entity],
    query: str,
    seeds: dict[str, float],
    *,
    limit: int = 8,
) -> dict[str, tuple[list[str], list[str]]]:
    """Each answer's path, as the names it crosses and the types of its relationships."""
    names = {entity.id: name for name, entity in people.items()}
    found = await follow_chain(
        graph,
        TENANT,
        {people[name].id: weight for name, weight in seeds.items()},
        read_relation_chain(query),
        limit=limit,
    )
    for path in found.paths.values():
        joined(path)
    return {
        names[answer]: (
            [names[each] for each in path.entities],
            [edge.relationship_type for edge in path.relationships],
        )
        for answer, path in found.paths.items()
    }


def joined(path: ChainPath) -> None:
    """Each relationship of `path` joins the entities either side of it."""
    assert len(path.relationships) == len(path.entities) - 1
    for index, edge in enumerate(path.relationships):
        pair: set[EntityId] = {path.entities[index], path.entities[index + 1]}
        assert {edge.source_entity_id, edge.target_entity_id} == pair


async def test_a_derived_relations_path_holds_the_entities_it_crosses() -> None:
    graph, people = await family()
    found = await paths(graph, people, "Who is the cousin of Xan?", {"Xan": 1.0})
    assert set(found) == {"Cal", "Cora"}
    assert found["Cal"][0] == ["Xan", "Pia", "Ada", "Cal"]
    assert found["Cora"][0] == ["Xan", "Pia", "Ada", "Cora"]
    assert found["Cal"][1][0] == found["Cora"][1][0] == "mother"
    assert found["Cal"][1][2] == "son"


async def test_every_term_of_a_chain_is_on_its_answers_path() -> None:
    graph, people = await family()
    query = "Who is the son of the sister of the mother of Xan?"
    found = await paths(graph, people, query, {"Xan": 1.0})
    assert found == {"Cal": (["Xan", "Pia", "Ada", "Cal"], ["mother", "sister", "son"])}


async def test_a_path_starts_from_what_stood_for_a_seed_in_no_basic_relation() -> None:
    graph, people = await family()
    query = "Who is the friend of the person whose hobby is chess?"
    found = await paths(graph, people, query, {"chess": 1.0})
    assert found == {"Fay": (["chess", "Xan", "Fay"], ["hobby", "friend"])}


async def test_a_chain_that_ends_early_answers_with_no_path() -> None:
    graph, people = await family()
    assert await paths(graph, people, "Who is the mother of the wife of Cal?", {"Cal": 1.0}) == {}
    assert await paths(graph, people, "Who is Xan?", {"Xan": 1.0}) == {}


async def test_the_heavier_seeds_path_is_kept() -> None:
    graph, people = await family()
    found = await paths(graph, people, "the father of X", {"Ada": 0.3, "Pia": 0.9})
    assert found == {"Gus": (["Pia", "Gus"], ["father"])}


async def test_of_two_ways_of_one_weight_the_shorter_is_kept() -> None:
    # Uncle Ray is Eli's father's brother, and married to his father's sister as well.
    graph, people = await graph_of(
        ("Eli", "father", "Sam"),
        ("Sam", "brother", "Ray"),
        ("Sam", "sister", "Una"),
        ("Una", "husband", "Ray"),
    )
    found = await paths(graph, people, "Who is the uncle of Eli?", {"Eli": 1.0})
    assert found["Ray"] == (["Eli", "Sam", "Ray"], ["father", "brother"])


@given(reverse=st.booleans())
@example(reverse=False)
@example(reverse=True)
async def test_of_two_ways_of_one_length_the_first_relationship_ids_are_kept(
    reverse: bool,
) -> None:
    # Two edges join Ann and her sister Bea; written in either order, one is kept.
    facts = [("Ann", "sister", "Bea"), ("Bea", "sister", "Ann")]
    graph, people = await graph_of(*(reversed(facts) if reverse else facts))
    found = await follow_chain(
        graph, TENANT, {people["Ann"].id: 1.0}, read_relation_chain("the sibling of Ann"), limit=8
    )
    [path] = found.paths.values()
    read = await graph.relationships_of([people["Ann"].id], TENANT)
    assert path.relationships == (min(read[people["Ann"].id], key=lambda edge: edge.id.int),)
