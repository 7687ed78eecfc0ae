"""A walk spreads mass from seeds over relationships; passages score by what it reached."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import uuid4

import pytest

from redstring.domain.ids import ChunkId
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.walk import PassageMention, Walk, score_passages, walk
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Callable

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship


def weights(**by_type: float) -> Callable[[str, bool], float]:
    def edge_weight(relationship_type: str, forward: bool) -> float:
        del forward
        return by_type.get(relationship_type, 1.0)

    return edge_weight


async def chain() -> tuple[InMemoryGraphStore, list[Entity]]:
    """Ann --x--> Bob --x--> Cid, and Ann --y--> Dee."""
    graph = InMemoryGraphStore()
    a, b, c, d = (make_entity(name=name) for name in ("Ann", "Bob", "Cid", "Dee"))
    await graph.upsert_entities([a, b, c, d])
    await graph.upsert_relationships(
        [
            make_relationship(a, b, relationship_type="x"),
            make_relationship(b, c, relationship_type="x"),
            make_relationship(a, d, relationship_type="y"),
        ]
    )
    return graph, [a, b, c, d]


async def spread(
    graph: InMemoryGraphStore,
    seeds: dict[EntityId, float],
    edge_weight: Callable[[str, bool], float],
    *,
    depth: int,
    normalize: bool = False,
    best_path: bool = False,
    tenant: TenantId = TENANT,
    read: dict[EntityId, list[Relationship]] | None = None,
) -> Walk:
    return await walk(
        graph,
        tenant,
        seeds,
        edge_weight=edge_weight,
        depth=depth,
        decay=0.5,
        frontier=10,
        normalize=normalize,
        best_path=best_path,
        read=read,
    )


async def test_an_expansion_hands_each_relationship_decay_times_its_weight() -> None:
    graph, (a, b, c, d) = await chain()
    walked = await spread(graph, {a.id: 2.0}, weights(x=1.0, y=0.5), depth=2)
    scores = walked.scores
    # hop 1: b .5, d .25; hop 2: a gets back .25 + .0625, c .25.
    assert scores[b.id] == pytest.approx(0.5)
    assert scores[d.id] == pytest.approx(0.25)
    assert scores[c.id] == pytest.approx(0.25)
    assert scores[a.id] == pytest.approx(1.3125)
    assert len(walked.relationships) == 3


async def test_a_best_path_walk_scores_each_entity_by_its_best_path_alone() -> None:
    graph, (a, b, c, d) = await chain()
    extra = make_relationship(d, c, relationship_type="x")
    await graph.upsert_relationship(extra)
    walked = await spread(graph, {a.id: 1.0}, weights(x=1.0, y=0.5), depth=3, best_path=True)
    scores = walked.scores
    # c: via b .5 * .5 = .25, via d .25 * .5 = .125; the best counts, not the sum.
    assert scores == pytest.approx({a.id: 1.0, b.id: 0.5, c.id: 0.25, d.id: 0.25})


async def test_a_pagerank_splits_an_entitys_mass_over_its_relationships_by_weight() -> None:
    graph, (a, b, _, d) = await chain()
    walked = await spread(graph, {a.id: 1.0}, weights(x=3.0, y=1.0), depth=1, normalize=True)
    assert walked.scores[b.id] == pytest.approx(0.375)
    assert walked.scores[d.id] == pytest.approx(0.125)


async def test_a_weight_of_zero_carries_nothing_and_no_seed_walks_nowhere() -> None:
    graph, (a, b, _, d) = await chain()
    walked = await spread(graph, {a.id: 1.0}, weights(x=0.0, y=1.0), depth=3)
    assert b.id not in walked.scores
    assert d.id in walked.scores
    empty = await spread(graph, {}, weights(), depth=3)
    assert empty.scores == {}


async def test_a_walk_never_leaves_its_tenant() -> None:
    graph, (a, *_) = await chain()
    walked = await spread(graph, {a.id: 1.0}, weights(), depth=3, tenant=OTHER_TENANT)
    assert list(walked.scores) == [a.id]


def test_a_passage_scores_its_entities_by_specificity_and_counts_its_subject_more() -> None:
    first, second, third = (ChunkId(uuid4()) for _ in range(3))
    ann, bob = make_entity(name="Ann"), make_entity(name="Bob")
    mentions = [
        PassageMention(first, ann.id, about=True),
        PassageMention(first, ann.id, about=False),  # the same pair again counts once
        PassageMention(second, ann.id, about=False),
        PassageMention(second, bob.id, about=False),
        PassageMention(third, bob.id, about=False),
    ]
    scores = score_passages({ann.id: 1.0, bob.id: 0.5}, mentions, about=4.0)
    # both are named in two passages: each weighs 1 / ln 3.
    assert scores[first] == pytest.approx(4.0 / 1.0986122886681098)
    assert scores[second] == pytest.approx(1.5 / 1.0986122886681098)
    assert scores[third] == pytest.approx(0.5 / 1.0986122886681098)


async def test_a_normalized_walk_hands_nothing_on_from_an_entity_whose_edges_all_weigh_zero() -> (
    None
):
    graph, (a, *_) = await chain()
    walked = await spread(graph, {a.id: 1.0}, weights(x=0.0, y=0.0), depth=3, normalize=True)
    assert walked.scores == {a.id: 1.0}


def test_best_only_keeps_a_passages_strongest_entity_and_unreached_entities_count_nothing() -> None:
    passage = ChunkId(uuid4())
    ann, bob, cid = (make_entity(name=name) for name in ("Ann", "Bob", "Cid"))
    mentions = [
        PassageMention(passage, ann.id, about=False),
        PassageMention(passage, bob.id, about=False),
        PassageMention(passage, cid.id, about=False),
    ]
    reached = {ann.id: 1.0, bob.id: 0.25, cid.id: 0.0}
    best = score_passages(reached, mentions, about=4.0, best_only=True)
    summed = score_passages(reached, mentions, about=4.0)
    assert best[passage] == pytest.approx(1.0 / 0.6931471805599453)
    assert summed[passage] == pytest.approx(1.25 / 0.6931471805599453)
    assert score_passages({}, mentions, about=4.0) == {}


async def test_a_walk_keeps_what_it_reads_in_the_given_map_and_reads_it_only_there() -> None:
    graph, (a, *_) = await chain()
    read: dict[EntityId, list[Relationship]] = {}
    walked = await spread(graph, {a.id: 1.0}, weights(), depth=1, read=read)
    assert set(read) == {a.id}
    assert {edge.id for edge in read[a.id]} == set(walked.relationships)
    # What the map already holds is taken as read: a map saying a has no
    # relationships keeps the walk at a.
    alone = await spread(graph, {a.id: 1.0}, weights(), depth=2, read={a.id: []})
    assert set(alone.scores) == {a.id}
