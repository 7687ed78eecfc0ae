"""Which pairs a pass scores."""

from __future__ import annotations

import pytest

from redstring.consolidation.candidates import (
    BLOCK_BUDGET,
    CANDIDATE_LIMIT,
    MAX_BLOCK,
    _blocks,
    candidate_pairs,
    profile_keys,
)
from redstring.consolidation.features import profile_of
from redstring.consolidation.memo import PassMemo
from tests.factories import make_entity


def _profiles(*names: str, entity_type: str = "person") -> list:  # type: ignore[type-arg]
    return [profile_of(make_entity(name=name, entity_type=entity_type)) for name in names]


def test_reordered_names_and_initials_are_candidates() -> None:
    profiles = _profiles("John Doe", "Doe, John", "J. Doe", "Mary Major")
    assert candidate_pairs(profiles) == [(0, 1), (0, 2), (1, 2)]


def test_keys_never_cross_entity_types_and_there_is_no_type_key() -> None:
    person, place = (
        profile_of(make_entity(name="Paris")),
        profile_of(make_entity(name="Paris", entity_type="place")),
    )
    assert candidate_pairs([person, place]) == []
    assert not any(key.endswith("t:person") for key in profile_keys(person))


def test_a_shared_property_value_makes_a_candidate() -> None:
    profiles = [
        profile_of(make_entity(name="Xavier", properties={"dob": "1815"})),
        profile_of(make_entity(name="Quentin", properties={"dob": "1815"})),
    ]
    assert candidate_pairs(profiles) == [(0, 1)]


def test_the_limit_keeps_those_sharing_most_keys() -> None:
    profiles = _profiles("J. Doe", "Mary Doe", "John Doe", "Adam Doe")
    assert candidate_pairs(profiles, focus={profiles[0].entity_id}, limit=1) == [(0, 2)]


def test_a_block_larger_than_max_block_is_ignored() -> None:
    profiles = _profiles("Doe", "Doe", "Doe")
    assert candidate_pairs(profiles, max_block=2) == []
    assert candidate_pairs(profiles, max_block=3) == [(0, 1), (0, 2), (1, 2)]


def test_focus_limits_who_looks_but_not_who_is_found() -> None:
    profiles = _profiles("John Doe", "John Doe", "John Doe")
    assert candidate_pairs(profiles, focus={profiles[2].entity_id}) == [(0, 2), (1, 2)]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        candidate_pairs([], limit=0)
    with pytest.raises(ValueError, match="max_block"):
        candidate_pairs([], max_block=0)


def test_a_profile_reads_its_rarest_keys_first_up_to_the_budget() -> None:
    # "Quentin Doe" holds six keys no one else holds (blocks of one), shares its
    # date with "Xavier Roe" (a block of two) and its surname with three other
    # Does (blocks of four): a budget of eight reads up to the date's block.
    profiles = [
        profile_of(make_entity(name="Quentin Doe", properties={"dob": "1815"})),
        profile_of(make_entity(name="Xavier Roe", properties={"dob": "1815"})),
        *_profiles("Adam Doe", "Mary Doe", "Paul Doe"),
    ]
    focus = {profiles[0].entity_id}
    assert candidate_pairs(profiles, focus=focus, budget=8) == [(0, 1)]
    assert candidate_pairs(profiles, focus=focus) == [(0, 1), (0, 2), (0, 3), (0, 4)]


def test_the_first_key_counts_even_past_the_budget() -> None:
    profiles = _profiles("Doe", "Doe", "Doe")
    assert candidate_pairs(profiles, budget=1) == [(0, 1), (0, 2), (1, 2)]


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="budget must be at least 1, got 0"):
        candidate_pairs([], budget=0)


def _rounds(*rounds: list) -> None:  # type: ignore[type-arg]
    memo = PassMemo()
    for profiles in rounds:
        assert candidate_pairs(profiles, memo=memo, limit=2) == candidate_pairs(profiles, limit=2)


def test_a_memo_carries_rankings_only_where_no_block_moved() -> None:
    # "John Doe" ranks the two Does it shares most with; when one leaves or a
    # new one arrives its blocks moved and it ranks again, while "Ada Lovelace",
    # whose blocks did not move, reads its ranking from the memo.
    does = _profiles("John Doe", "Jon Doe", "John Doe", "Mary Doe", "Ada Lovelace", "Ada Lovelace")
    arrived = profile_of(make_entity(name="John Doe"))
    _rounds(does, does[1:], [*does[1:], arrived], [arrived, *does[2:]])


def test_a_ranking_is_forgotten_in_a_round_its_profile_sat_out() -> None:
    # A focused round in which the first "John Doe" did not look, while the
    # "Jon Doe" it ranked left, must not leave it that stale ranking.
    profiles = _profiles("John Doe", "Jon Doe", "Joan Doe", "John Doe")
    memo = PassMemo()
    candidate_pairs(profiles, memo=memo)
    rest = [profiles[0], *profiles[2:]]
    candidate_pairs(rest, memo=memo, focus={profiles[3].entity_id})
    assert candidate_pairs(rest, memo=memo) == candidate_pairs(rest) == [(0, 1), (0, 2), (1, 2)]


def test_a_memo_drops_every_ranking_when_the_order_changes() -> None:
    profiles = _profiles("John Doe", "John Doe", "John Doe", "Mary Doe")
    _rounds(profiles, list(reversed(profiles)))


def test_an_arrival_makes_those_sharing_a_key_with_it_rank_again() -> None:
    ada, mary = _profiles("Ada Lovelace", "Mary Doe")
    memo = PassMemo()
    settings = (CANDIDATE_LIMIT, MAX_BLOCK, BLOCK_BUDGET)
    candidate_pairs([ada, mary], memo=memo)
    assert memo.ranked(ada, settings) == memo.ranked(mary, settings) == ()
    candidate_pairs([ada, mary, *_profiles("Ada Lovelace")], memo=memo)
    assert memo.ranked(mary, settings) == ()
    assert memo.ranked(ada, settings) is not None
    assert len(memo.ranked(ada, settings) or ()) == 1


def test_a_few_counting_profiles_gather_exactly_the_blocks_they_read() -> None:
    profiles = _profiles(
        "John Doe", "Jon Doe", "Mary Major", "Mary Doe", "Ada Lovelace", *["Alan Turing"] * 5
    )
    keys_of = [profile_keys(profile) for profile in profiles]
    few = _blocks(keys_of, [0])
    every = _blocks(keys_of, list(range(len(profiles))))
    assert few.keys() == keys_of[0]
    assert {key: every[key] for key in keys_of[0]} == few
    assert _blocks(keys_of, []) == {}
    focus = {profiles[0].entity_id}
    assert candidate_pairs(profiles, focus=focus) == [(0, 1), (0, 3)]


def test_candidates_sharing_as_many_keys_rank_by_the_lowest_position() -> None:
    # Every pair shares the surname's two keys and nothing else.
    profiles = _profiles("Al Smith", "Bo Smith", "Cy Smith", "Di Smith", "Ed Smith")
    assert candidate_pairs(profiles, limit=2) == [
        (0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4),
    ]  # fmt: skip
