"""What one pass keeps across its rounds, and when it lets go (ADR 0118)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.consolidation.features import Population, profile_of
from redstring.consolidation.memo import _LET_GO, PassMemo
from tests.factories import make_entity

if TYPE_CHECKING:
    from redstring.consolidation.features import Profile


def _profiles(count: int) -> list[Profile]:
    return [profile_of(make_entity(name=f"Person Number{n}")) for n in range(count)]


def test_settling_a_measured_pair_lets_its_evidence_go_and_it_measures_the_same_again() -> None:
    left, right = _profiles(2)
    population = Population.of([left, right])
    memo = PassMemo()
    measured = memo.evidence(left, right, False)
    assert len(memo) == 1
    memo.settle(left, right, population)
    assert (len(memo), memo.settled(left, right, population)) == (0, True)
    # A changed judgement unsettles it; its evidence is measured again, equal.
    memo.judge("another policy")
    assert not memo.settled(left, right, population)
    assert memo.evidence(left, right, False) == measured


def test_the_pairs_of_profiles_that_left_go_once_they_are_one_in_let_go() -> None:
    profiles = _profiles(_LET_GO * 2 + 2)
    population = Population.of(profiles)
    memo = PassMemo()
    memo.advance(profiles)
    first, second, third, fourth = profiles[:4]
    memo.settle(first, second, population)
    memo.evidence(third, fourth, False)
    # One gone of 33 held: the memo still holds it, so no key outlives its profile.
    memo.advance(profiles[1:])
    assert memo.settled(first, second, population)
    assert len(memo) == 1
    # Back before they were let go: held again, its pairs kept through the next let-go.
    memo.advance(profiles)
    memo.advance(profiles[3:])
    assert not memo.settled(first, second, population)  # `second` left with two others
    assert len(memo) == 0  # `third` left


def test_a_profile_back_after_leaving_keeps_its_pairs_when_others_are_let_go() -> None:
    profiles = _profiles(_LET_GO * 2 + 2)
    population = Population.of(profiles)
    memo = PassMemo()
    memo.advance(profiles)
    memo.settle(profiles[0], profiles[9], population)
    memo.settle(profiles[1], profiles[2], population)
    memo.advance(profiles[1:])
    memo.advance(profiles)
    memo.advance(profiles[:1] + profiles[3:])  # two leave: enough to let go
    assert memo.settled(profiles[0], profiles[9], population)
    assert not memo.settled(profiles[1], profiles[2], population)
