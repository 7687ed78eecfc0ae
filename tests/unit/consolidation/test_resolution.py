"""One pass over profiles: bands, questions, closure."""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING, Any

import pytest

from redstring.consolidation import resolution
from redstring.consolidation.adjudicator import MergeVerdict
from redstring.consolidation.features import (
    Population,
    PropertyKind,
    profile_of,
)
from redstring.consolidation.forking import can_fork
from redstring.consolidation.memo import PassMemo
from redstring.consolidation.policy import MergeBand, MergePolicy
from redstring.consolidation.resolution import QUESTION_BATCH, _settle_below, resolve_profiles
from tests.factories import make_entity

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.consolidation.adjudicator import MergeQuestion
    from redstring.consolidation.resolution import Resolution
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId


class Scripted:
    """Answers "same" for the names it is told, and records every batch."""

    def __init__(self, same: set[frozenset[str]], *, short: bool = False) -> None:
        self.same = same
        self.short = short
        self.batches: list[list[tuple[str, str]]] = []

    async def adjudicate(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        self.batches.append([(q.left.name, q.right.name) for q in questions])
        if self.short:
            return []
        return [
            MergeVerdict(same=frozenset({q.left.name, q.right.name}) in self.same, reason="told")
            if q.left.name != "Unsure Person"
            else None
            for q in questions
        ]


async def _resolve(
    entities: list[Entity],
    *,
    adjudicator: Scripted | None = None,
    focus: set[EntityId] | None = None,
) -> Resolution:
    profiles = [profile_of(entity) for entity in entities]
    return await resolve_profiles(
        entities, profiles, policy=MergePolicy(), adjudicator=adjudicator, focus=focus
    )


async def test_strong_pairs_merge_and_chains_close() -> None:
    entities = [
        make_entity(name=name, properties={"dob": "18151210"})
        for name in ("Ada Lovelace", "Lovelace, Ada", "Dr Ada Lovelace", "Charles Babbage")
    ]
    resolution = await _resolve(entities)
    assert resolution.clusters == [[0, 1, 2]]
    assert len(resolution.links) == 2
    assert resolution.asked == 0


async def test_bare_surnames_of_different_people_never_merge() -> None:
    entities = [make_entity(name=name) for name in ("Smith", "Smith", "John Smith", "Jane Smith")]
    assert (await _resolve(entities)).clusters == []


async def test_the_middle_band_goes_to_the_adjudicator_and_only_same_merges() -> None:
    entities = [
        make_entity(name=name) for name in ("John Smith", "Jon Smith", "John Smyth", "Mary Major")
    ]
    adjudicator = Scripted({frozenset({"John Smith", "Jon Smith"})})
    resolution = await _resolve(entities, adjudicator=adjudicator)
    assert resolution.clusters == [[0, 1]]
    assert resolution.asked == sum(len(batch) for batch in adjudicator.batches) > 1
    assert [link.reason for link in resolution.links] == ["names 0.97; adjudicated: told"]


async def test_without_an_adjudicator_the_middle_band_is_left_apart() -> None:
    entities = [make_entity(name=name) for name in ("Jon Smith", "John Smith")]
    resolution = await _resolve(entities)
    assert resolution.clusters == []
    assert resolution.candidates == 1


async def test_a_pair_already_joined_through_others_is_not_asked() -> None:
    entities = [
        make_entity(name="John Smith"),
        make_entity(name="John Smith", properties={"dob": "18151210"}),
        make_entity(name="Jon Smith", properties={"dob": "18151210"}),
        *(make_entity(name=f"Mary Major{n}", properties={"dob": str(n)}) for n in range(3)),
    ]
    adjudicator = Scripted(set())
    resolution = await _resolve(entities, adjudicator=adjudicator)
    assert resolution.clusters[0] == [0, 1, 2]
    assert ("John Smith", "Jon Smith") not in {
        pair for batch in adjudicator.batches for pair in batch
    }


async def test_an_answer_list_of_the_wrong_length_counts_as_no_answer() -> None:
    entities = [make_entity(name=name) for name in ("Jon Smith", "John Smith")]
    resolution = await _resolve(entities, adjudicator=Scripted(set(), short=True))
    assert (resolution.asked, resolution.unanswered, resolution.clusters) == (1, 1, [])


async def test_questions_go_in_batches_best_score_first() -> None:
    entities = [
        make_entity(name="John Smith", properties={"n": chr(0x4E00 + index)})
        for index in range(QUESTION_BATCH)
    ]
    adjudicator = Scripted(set())
    resolution = await _resolve(entities, adjudicator=adjudicator)
    sizes = [len(batch) for batch in adjudicator.batches]
    assert sizes[0] == QUESTION_BATCH
    assert len(sizes) > 1
    assert resolution.asked == sum(sizes) == resolution.candidates


async def test_focus_only_pairs_the_focused() -> None:
    entities = [make_entity(name="Ada Lovelace") for _ in range(3)]
    resolution = await _resolve(entities, focus={entities[2].id})
    assert resolution.clusters == [[0, 1, 2]]
    assert resolution.candidates == 2


async def test_entities_and_profiles_must_pair_up() -> None:
    with pytest.raises(ValueError, match="pair up"):
        await resolve_profiles([make_entity()], [], policy=MergePolicy())


@pytest.mark.parametrize("workers", [0, 33, False, "2"])
async def test_workers_must_be_a_count(workers: object) -> None:
    with pytest.raises(ValueError, match="workers must be an int from 1 to 32"):
        await resolve_profiles([], [], policy=MergePolicy(), workers=workers)  # type: ignore[arg-type]


async def test_an_initial_merges_with_the_only_full_name_it_fits() -> None:
    alone = [make_entity(name="J. Smith"), make_entity(name="John Smith")]
    assert (await _resolve(alone)).clusters == [[0, 1]]
    ambiguous = [*alone, make_entity(name="Jane Smith")]
    assert (await _resolve(ambiguous)).clusters == []


async def test_closure_never_joins_two_clusters_holding_different_identifiers() -> None:
    cities = [
        make_entity(name=name, entity_type="city", properties=properties)
        for name, properties in (
            ("Kowloon Bay", {"geonames_id": 1, "population": 1000}),
            ("Kowloon Bay", {"population": 1000}),
            ("Kowloon Bay", {"geonames_id": 2, "population": 1000}),
            ("Kowloon Bay", {"population": 2000}),
            ("Kowloon Bay", {"geonames_id": 1, "population": 1000}),
        )
    ]
    # The id-less 1 is as close to 0 and 4 as to 2, which is kept apart from them: ambiguous,
    # so it is asked about; told "same" for every pair, closure still never joins 2.
    resolution = await _resolve(cities, adjudicator=Scripted({frozenset({"Kowloon Bay"})}))
    assert resolution.clusters == [[0, 1, 4]]
    joined = {(link.left, link.right) for link in resolution.links}
    assert (2, 4) not in joined
    assert (1, 2) not in joined
    assert [link.band for link in resolution.links] == [MergeBand.MERGE, MergeBand.ASK]
    assert (await _resolve(cities)).clusters == [[0, 4]]


async def test_an_adjudicated_link_is_in_the_ask_band_and_honours_conflicts() -> None:
    entities = [
        make_entity(name=name, properties={"ref": ref})
        for name, ref in (("Ada Lovelace", "q1"), ("Ada Lovelace", "q2"))
    ]
    profiles = [profile_of(entity) for entity in entities]
    adjudicator = Scripted({frozenset({"Ada Lovelace"})})
    resolution = await resolve_profiles(
        entities,
        profiles,
        policy=MergePolicy(identifier_different=-8.0),
        adjudicator=adjudicator,
        property_kinds={"ref": PropertyKind.VALUE},
    )
    assert resolution.clusters == [[0, 1]]
    assert [link.band for link in resolution.links] == [MergeBand.ASK]
    refused = await resolve_profiles(
        entities, profiles, policy=MergePolicy(ask_at=0.0), adjudicator=adjudicator
    )
    assert refused.clusters == []


async def test_an_adjudicator_refusing_every_question_leaves_the_merge_bands_clusters() -> None:
    entities = [
        make_entity(name=name, properties={"dob": "18151210"})
        for name in ("Ada Lovelace", "Lovelace, Ada", "A. Lovelace", "Ida Lovelace", "Alan Love")
    ]
    profiles = [profile_of(entity) for entity in entities]
    asked = await resolve_profiles(
        entities, profiles, policy=MergePolicy(), adjudicator=Scripted(set())
    )
    plain = await resolve_profiles(entities, profiles, policy=MergePolicy())
    # The adjudicator answers "different" to all it is asked: only the merge band joins.
    assert plain.clusters == asked.clusters
    assert [0, 1] in plain.clusters
    assert asked.asked > 0
    assert plain.links == asked.links


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_pass_leaves_the_garbage_collector_as_it_found_it(enabled: bool) -> None:
    entities = [make_entity(name="Ada Lovelace"), make_entity(name="Ada Lovelace")]
    (gc.enable if enabled else gc.disable)()
    try:
        await _resolve(entities)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


async def test_a_pair_assessed_far_below_the_merge_band_is_settled_for_the_pass() -> None:
    entities = [
        make_entity(name=name, properties={"dob": dob})
        for name, dob in (("Ada Lovelace", "18151210"), ("Ida Lovelock", "19020101"))
    ]
    profiles = [profile_of(entity) for entity in entities]
    memo = PassMemo()
    policy = MergePolicy()
    first = await resolve_profiles(entities, profiles, policy=policy, memo=memo)
    population = Population.of(profiles)
    assert first.clusters == []
    assert memo.settled(profiles[0], profiles[1], population)
    # Settled pairs are still candidates, and stay apart.
    again = await resolve_profiles(entities, profiles, policy=policy, memo=memo)
    assert (again.candidates, again.clusters) == (1, [])
    # A rebuilt profile is another pair; another policy unsettles them all.
    rebuilt = [profiles[0], profile_of(entities[1])]
    assert not memo.settled(rebuilt[0], rebuilt[1], population)
    await resolve_profiles(entities, profiles, policy=MergePolicy(prior=20.0), memo=memo)
    assert not memo.settled(profiles[0], profiles[1], population)


async def test_a_pair_its_properties_keep_apart_is_settled_without_measuring_its_names() -> None:
    # Equal names are worth at most 9.5 bits; different identifiers cost 12.
    entities = [make_entity(name="Ada Lovelace", properties={"ref": ref}) for ref in ("q1", "q2")]
    profiles = [profile_of(entity) for entity in entities]
    memo = PassMemo()
    resolution = await resolve_profiles(entities, profiles, policy=MergePolicy(), memo=memo)
    assert (resolution.candidates, resolution.clusters, len(memo)) == (1, [], 0)
    population = Population.of(profiles)
    assert memo.settled(profiles[0], profiles[1], population)
    # A profile that leaves takes its settled pairs with it.
    memo.advance(profiles[:1])
    assert not memo.settled(profiles[0], profiles[1], population)
    # The same pair with names worth more is measured.
    strong = MergePolicy(name_levels=((1.0, 20.0), (0.0, -2.4)))
    measured = PassMemo()
    await resolve_profiles(entities, profiles, policy=strong, memo=measured)
    assert len(measured) == 1


async def test_a_pair_in_the_ask_band_is_never_settled() -> None:
    entities = [make_entity(name=name) for name in ("Jon Smith", "John Smith")]
    profiles = [profile_of(entity) for entity in entities]
    memo = PassMemo()
    await resolve_profiles(entities, profiles, policy=MergePolicy(), memo=memo)
    assert not memo.settled(profiles[0], profiles[1], Population.of(profiles))


async def test_a_changed_kind_unsettles_every_pair() -> None:
    # Different identifiers settle the pair apart; declared plain values, the
    # same pair is in the ask band, so it must be assessed again.
    entities = [make_entity(name="Ada Lovelace", properties={"ref": ref}) for ref in ("q1", "q2")]
    profiles = [profile_of(entity) for entity in entities]
    memo = PassMemo()
    population = Population.of(profiles)
    await resolve_profiles(entities, profiles, policy=MergePolicy(), memo=memo)
    assert memo.settled(profiles[0], profiles[1], population)
    kinds = {"ref": PropertyKind.VALUE}
    await resolve_profiles(
        entities, profiles, policy=MergePolicy(), memo=memo, property_kinds=kinds
    )
    assert not memo.settled(profiles[0], profiles[1], population)


def test_the_settling_score_keeps_a_margin_below_the_merge_band() -> None:
    # 4.25 bits for .95, less the ambiguity margin (2) and the settling margin (4).
    assert _settle_below(MergePolicy()) == pytest.approx(0.2290, abs=1e-4)
    assert _settle_below(MergePolicy(merge_at=0.5, ask_at=0.5)) == pytest.approx(1 / 65)
    assert _settle_below(MergePolicy(merge_at=1.0, ask_at=0.4)) == 0.4
    assert _settle_below(MergePolicy(merge_at=0.0, ask_at=0.0)) == 0.0


def _town(name: str, **properties: object) -> Entity:
    return make_entity(name=name, entity_type="city", properties=properties)


async def test_a_respelling_between_two_listed_towns_merges_with_neither() -> None:
    entities = [
        _town("Kolar", population=1000, aliases=["Kolaru"]),
        _town("Kolaras", population=1000, aliases=["Kolarasa"]),
        _town("Kolars", population=1010),
        _town("Kolarr", population=990),
    ]
    profiles = [profile_of(entity) for entity in entities]
    resolution = await resolve_profiles(entities, profiles, policy=MergePolicy())
    assert resolution.clusters == [[0, 3]]
    alone = entities[:1] + entities[2:]
    profiles = [profile_of(entity) for entity in alone]
    resolution = await resolve_profiles(alone, profiles, policy=MergePolicy())
    assert resolution.clusters == [[0, 1, 2]]


async def test_closure_never_joins_clusters_whose_measures_differ_beyond_the_tolerance() -> None:
    cities = [
        make_entity(name="Kowloon Bay", entity_type="city", properties=properties)
        for properties in ({"population": 1000}, {}, {"population": 1100})
    ]
    # 1 is as close to 0 as to 2, which are 10% apart: asked about both, and told "same"
    # for both, closure joins it to one of them only.
    resolution = await _resolve(cities, adjudicator=Scripted({frozenset({"Kowloon Bay"})}))
    [cluster] = resolution.clusters
    assert 1 in cluster
    assert len(cluster) == 2
    assert [link.band for link in resolution.links] == [MergeBand.ASK]


def _mixed() -> list[Entity]:
    """People and places with duplicates, initials, ids and measures: every band and settling."""
    people = [
        ("Ada Lovelace", "18151210"), ("Ada Lovelase", "18151210"), ("A. Lovelace", None),
        ("Charles Babbage", "17911226"), ("Charles Babage", "17911226"), ("Babbage", None),
        ("Mary Somerville", "17801226"), ("Mary Sommerville", "17801227"), ("Mary Fairfax", None),
        ("John Herschel", "17920307"), ("Jon Herschel", "17920307"),
        ("William Herschel", "17381115"),
    ]  # fmt: skip
    places = [
        ("Khartoum", "g1", 1974647, ["Al Khartum"]), ("Khartoum North", "g2", 1057111, []),
        ("Khartum", None, 1974000, []), ("Kowloon", "g3", 2019533, []),
        ("Kowloon City", "g4", 418732, []), ("Kowlon", None, None, ["Kau Lung"]),
        ("Santo Domingo Este", "g5", 948885, []), ("Santo Domingo Oeste", "g6", 701269, []),
        ("Santo Domingo", None, 2201941, ["Ciudad Trujillo"]),
    ]  # fmt: skip
    entities = [
        make_entity(name=name, properties={} if dob is None else {"date_of_birth": dob})
        for name, dob in people
    ]
    for name, geonames_id, population, aliases in places:
        properties: dict[str, object] = {"country": "xx", "aliases": aliases}
        if geonames_id is not None:
            properties["geonames_id"] = geonames_id
        if population is not None:
            properties["population"] = population
        entities.append(make_entity(name=name, entity_type="place", properties=properties))
    return entities


async def test_workers_reach_what_one_process_reaches_round_after_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resolution, "PARALLEL_PAIRS", 1)  # fork for a handful of pairs
    entities = _mixed()
    profiles = [profile_of(entity) for entity in entities]
    reached = []
    for workers in (1, 2, 3):
        memo = PassMemo()
        rounds = [
            await resolve_profiles(
                entities, profiles, policy=MergePolicy(), memo=memo, workers=workers
            )
            for _ in range(2)  # the second reads what the first settled and measured
        ]
        # What the memo keeps is part of the outcome: a later round skips what it settled.
        memo_state = (set(memo._settled), dict(memo._held))
        reached.append(([(r.clusters, r.links, r.candidates) for r in rounds], memo_state))
    assert reached[1] == reached[0]
    assert reached[2] == reached[0]
    [(first, _, _), _] = reached[0][0]
    settled, held = reached[0][1]
    assert first  # something merged,
    assert settled  # something was settled apart,
    assert held  # and names were measured


def test_a_round_is_shared_only_when_large_and_its_profiles_distinct() -> None:
    profiles = [profile_of(entity) for entity in _mixed()]
    pairs = [(0, 1)] * resolution.PARALLEL_PAIRS
    assert resolution._shares(2, pairs, profiles) == (2 if can_fork() else 1)
    assert resolution._shares(1, pairs, profiles) == 1
    assert resolution._shares(2, pairs[1:], profiles) == 1
    assert resolution._shares(2, pairs, [*profiles, profiles[0]]) == 1


async def test_a_cluster_rooted_at_a_record_without_the_identifier_still_holds_it() -> None:
    cities = [
        make_entity(name="Kowloon Bay", entity_type="city", properties=properties)
        for properties in (
            {"population": 1000},  # the root of any cluster it joins: the lowest position
            {"geonames_id": 1, "population": 1000},
            {"geonames_id": 2, "population": 1000},
        )
    ]
    resolution = await _resolve(cities, adjudicator=Scripted({frozenset({"Kowloon Bay"})}))
    # 0 joins 1 first; the cluster {0, 1} then holds id 1, so 2 stays out.
    assert resolution.clusters == [[0, 1]]


async def test_a_share_whose_child_dies_is_scored_here_to_the_same_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resolution, "PARALLEL_PAIRS", 1)
    entities = _mixed()
    profiles = [profile_of(entity) for entity in entities]
    parent = os.getpid()
    score_share = resolution._assess_share

    def dying(*arguments: Any) -> Any:
        if os.getpid() != parent:
            os._exit(1)  # the child dies before it sends anything
        return score_share(*arguments)

    reached = []
    for workers in (1, 2):
        if workers == 2:
            monkeypatch.setattr(resolution, "_assess_share", dying)
        memo = PassMemo()
        rounds = [
            await resolve_profiles(
                entities, profiles, policy=MergePolicy(), memo=memo, workers=workers
            )
            for _ in range(2)
        ]
        reached.append(
            ([(r.clusters, r.links) for r in rounds], set(memo._settled), dict(memo._held))
        )
    assert reached[1] == reached[0]
