"""The evidence order: RRF picks the `k`, the calibrated evidence orders them."""

from __future__ import annotations

import math
from dataclasses import replace
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.fusion import evidence_features, evidence_order
from redstring.domain.fusion_weights import SHIPPED_FUSION_WEIGHTS, FusionWeights
from redstring.domain.ids import EntityId

A = EntityId(UUID("00000000-0000-4000-8000-00000000000a"))
B = EntityId(UUID("00000000-0000-4000-8000-00000000000b"))
C = EntityId(UUID("00000000-0000-4000-8000-00000000000c"))
D = EntityId(UUID("00000000-0000-4000-8000-00000000000d"))
E = EntityId(UUID("00000000-0000-4000-8000-00000000000e"))

ZERO = FusionWeights(*([0.0] * 9))
#: Only the lexical score counts: the order within the `k` is by it alone.
LEXICAL_ONLY = replace(ZERO, lexical=1.0)


def test_the_features_of_a_semantic_only_candidate_are_literals() -> None:
    features = evidence_features((2, 0.9), None, 0.95, 0.8)
    assert features[:4] == (1.0, 0.0, 0.0, 0.9)
    assert features[4] == pytest.approx(0.05)
    assert features[5:7] == (0.0, 0.0)
    assert features[7] == pytest.approx(0.6931471805599453)  # log 2: 1-based rank
    assert features[8] == 0.0


def test_a_first_rank_adds_no_rank_penalty_and_both_channels_set_the_both_flag() -> None:
    features = evidence_features((1, 0.9), (1, 1.0), 0.9, 1.0)
    assert features == (1.0, 1.0, 1.0, 0.9, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_the_word_match_adds_its_score_and_its_gap_to_the_best() -> None:
    features = evidence_features((1, 0.9), None, 0.9, 1.0, words=0.25, words_top=0.75)
    assert features[9:11] == (0.25, 0.5)
    unmeasured = evidence_features((1, 0.9), None, 0.9, 1.0, words_top=0.75)
    assert unmeasured[9:11] == (0.0, 0.0)


@pytest.mark.parametrize(
    ("weight", "argument"), [("word_match", "words"), ("unit_overlap", "overlaps")]
)
def test_a_name_measure_reorders_the_k_by_its_weight(weight: str, argument: str) -> None:
    """Equal on every other feature, A and B swap on which the measure favours."""
    semantic, lexical = [(A, 0.9)], [(B, 0.9)]
    only = replace(ZERO, **{weight: 1.0})
    favoured = evidence_order(semantic, lexical, 10, only, **{argument: {A: 0.2, B: 0.8}})
    assert [each for each, _ in favoured] == [B, A]
    favoured = evidence_order(semantic, lexical, 10, only, **{argument: {A: 0.8, B: 0.2}})
    assert [each for each, _ in favoured] == [A, B]


def test_nine_weights_still_make_a_whole_set() -> None:
    """ADR 0104's nine weights: the word-match pair and the overlap default to 0."""
    nine = FusionWeights(*([1.0] * 9))
    assert nine.as_tuple() == (1.0,) * 9 + (0.0, 0.0, 0.0)


def test_an_unranked_lexical_score_stands_for_an_absent_candidates_score_and_gap() -> None:
    """Measured anyway (ADR 0119): its flag and rank stay those of an absent candidate."""
    features = evidence_features((2, 0.9), None, 0.95, 0.8, unranked_lexical=0.6)
    assert features[1] == 0.0
    assert features[5] == 0.6
    assert features[6] == pytest.approx(0.2)
    assert features[8] == 0.0
    # Above the channel's first (a name the index did not offer): a negative gap.
    above = evidence_features((2, 0.9), None, 0.95, 0.8, unranked_lexical=0.9)
    assert above[6] == pytest.approx(-0.1)
    # A ranked candidate keeps its ranked score.
    ranked = evidence_features((2, 0.9), (3, 0.7), 0.95, 0.8, unranked_lexical=0.1)
    assert ranked[5] == 0.7
    assert ranked[6] == pytest.approx(0.1)


def test_the_unit_overlap_is_the_last_feature() -> None:
    assert evidence_features((1, 0.9), None, 0.9, 1.0, overlap=0.4)[11] == 0.4
    assert evidence_features((1, 0.9), None, 0.9, 1.0)[11] == 0.0


def test_a_semantic_only_candidates_measured_name_reorders_the_k() -> None:
    """Only the lexical score counts: a semantic-only A measured at .95 passes B's .9."""
    semantic, lexical = [(A, 0.9)], [(B, 0.9)]
    fused = evidence_order(semantic, lexical, 10, LEXICAL_ONLY, unranked_lexical={A: 0.95})
    assert [each for each, _ in fused] == [A, B]
    unmeasured = evidence_order(semantic, lexical, 10, LEXICAL_ONLY)
    assert [each for each, _ in unmeasured] == [B, A]
    # The measure of a candidate the lexical channel ranked is not used.
    ranked = evidence_order(semantic, lexical, 10, LEXICAL_ONLY, unranked_lexical={B: 0.0})
    assert [each for each, _ in ranked] == [B, A]


def test_without_weights_the_order_is_rrf_with_the_evidence_tie_break() -> None:
    """Each first answer scores 1/61; the higher component score goes first."""
    fused = evidence_order([(A, 0.6)], [(B, 0.9)], 10, None)
    assert fused == [(B, 1 / 61), (A, 1 / 61)]


def test_the_weights_reorder_the_k_and_score_each_by_its_share() -> None:
    """C is in both lists (RRF 2/63), A and B first in one each (1/61).

    Only the lexical score counts, so the shares are a softmax of it over
    all five candidates: literals, from exp(.99), exp(.7), exp(.5) and two
    exp(0).
    """
    semantic = [(A, 0.95), (D, 0.94), (C, 0.93)]
    lexical = [(B, 0.99), (E, 0.7), (C, 0.5)]
    fused = evidence_order(semantic, lexical, 10, LEXICAL_ONLY)
    assert [entity_id for entity_id, _ in fused] == [B, E, C, A, D]
    shares = dict(fused)
    assert shares[B] == pytest.approx(0.3222, abs=1e-4)
    assert shares[A] == pytest.approx(0.1197, abs=1e-4)
    assert math.fsum(shares.values()) == pytest.approx(1.0)


def test_the_shares_are_over_every_candidate_not_only_the_k_kept() -> None:
    """At k=2 the two kept do not sum to 1: the three cut still hold their share."""
    semantic = [(A, 0.95), (D, 0.94), (C, 0.93)]
    lexical = [(B, 0.99), (E, 0.7), (C, 0.5)]
    fused = evidence_order(semantic, lexical, 2, LEXICAL_ONLY)
    assert math.fsum(share for _, share in fused) < 0.9


def test_which_k_are_kept_is_rrfs_choice_not_the_weights() -> None:
    """The weights prefer B; at k=1 RRF keeps C, found by both, and so does the answer."""
    semantic = [(A, 0.95), (C, 0.93)]
    lexical = [(B, 0.99), (C, 0.5)]
    [(kept, _)] = evidence_order(semantic, lexical, 1, LEXICAL_ONLY)
    assert kept == C


def test_a_channel_alone_keeps_its_own_order_whatever_the_weights() -> None:
    backwards = replace(ZERO, semantic=-1.0)
    semantic = [(A, 0.9), (B, 0.8)]
    assert [each for each, _ in evidence_order(semantic, [], 10, backwards)] == [A, B]
    assert [each for each, _ in evidence_order([], semantic, 10, backwards)] == [A, B]


def test_equal_evidence_keeps_the_rrf_order() -> None:
    """Zero weights give every candidate the same evidence: the order is RRF's."""
    semantic = [(A, 0.9), (C, 0.8)]
    lexical = [(B, 0.95), (D, 0.7)]
    even = evidence_order(semantic, lexical, 10, ZERO)
    plain = evidence_order(semantic, lexical, 10, None)
    assert [each for each, _ in even] == [each for each, _ in plain]
    assert [share for _, share in even] == [0.25] * 4


def test_a_repeated_id_counts_at_its_first_position() -> None:
    """A malformed channel cannot add evidence by repeating an id lower down."""
    with_repeat = evidence_order([(A, 0.9), (B, 0.8), (A, 0.1)], [(C, 0.7)], 10)
    without = evidence_order([(A, 0.9), (B, 0.8)], [(C, 0.7)], 10)
    assert with_repeat == without


def test_a_weak_lexical_only_first_answer_follows_a_confident_semantic_one() -> None:
    """The demo's shape ("capital of Japan"): RRF ties the two first answers.

    A semantic first answer at .92 (e5's scale, cosine mapped onto 0..1) and
    a lexical-only one at .656 tie at 1/61; only the tie-break separated
    them. The evidence puts the semantic one first, and keeps the weak
    lexical one in the list, after it, rather than dropping it.
    """
    semantic = [(A, 0.92), (C, 0.91)]
    lexical = [(B, 0.656), (D, 0.6)]
    fused = [each for each, _ in evidence_order(semantic, lexical, 10)]
    assert fused[0] == A
    assert B in fused


def test_an_exact_lexical_match_leads_weak_semantic_neighbours() -> None:
    """An exact name holds every query word; the neighbours hold half of them.

    The shipped weights were fitted with the word match measured, as the
    Retriever measures it (ADR 0116).
    """
    semantic = [(A, 0.92), (C, 0.91)]
    lexical = [(B, 1.0), (D, 0.69)]
    words = {A: 0.5, B: 1.0, C: 0.5, D: 0.5}
    assert evidence_order(semantic, lexical, 10, words=words)[0][0] == B


@pytest.mark.parametrize("k", [-1, 1.5, True, "3"])
def test_a_bad_k_is_refused_naming_it(k: object) -> None:
    with pytest.raises(ValueError, match=f"k must be a non-negative int, got {k!r}"):
        evidence_order([(A, 0.9)], [(B, 0.9)], k)  # type: ignore[arg-type]


def test_k_zero_is_empty() -> None:
    assert evidence_order([(A, 0.9)], [(B, 0.9)], 0) == []


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "1.0", None])
def test_a_weight_that_is_not_a_finite_number_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(ValueError, match="a fusion weight must be a finite number"):
        replace(ZERO, lexical=bad)  # type: ignore[arg-type]


def test_the_shipped_weights_never_count_a_better_place_against_a_candidate() -> None:
    """What keeps each channel's own order: scores add, gaps and ranks subtract."""
    weights = SHIPPED_FUSION_WEIGHTS
    assert weights.semantic > 0
    assert weights.lexical > 0
    assert weights.semantic_gap <= 0
    assert weights.lexical_gap <= 0
    assert weights.semantic_log_rank <= 0
    assert weights.lexical_log_rank <= 0
    assert weights.in_both >= 0
    assert weights.word_match >= 0
    assert weights.word_match_gap <= 0
    assert weights.unit_overlap >= 0


ids = st.lists(st.sampled_from([A, B, C, D, E]), unique=True, min_size=1, max_size=5)
scores = st.floats(min_value=0.0, max_value=1.0)


@given(ids, ids, st.data(), st.integers(min_value=1, max_value=5))
@example([A], [B], None, 1)
def test_the_kept_ids_are_rrfs_top_k_for_any_weights(
    semantic_ids: list[EntityId], lexical_ids: list[EntityId], data: st.DataObject | None, k: int
) -> None:
    """R@k can never fall below RRF's: only the order within the `k` moves."""

    def ranked(found: list[EntityId]) -> list[tuple[EntityId, float]]:
        if data is None:
            return [(each, 0.5) for each in found]
        drawn = sorted((data.draw(scores) for _ in found), reverse=True)
        return list(zip(found, drawn, strict=True))

    semantic, lexical = ranked(semantic_ids), ranked(lexical_ids)
    plain = evidence_order(semantic, lexical, k, None)
    kept = sorted(each for each, _ in plain)
    for weights in (SHIPPED_FUSION_WEIGHTS, LEXICAL_ONLY, replace(ZERO, in_lexical=-5.0)):
        fused = evidence_order(semantic, lexical, k, weights)
        assert sorted(each for each, _ in fused) == kept
        shares = [share for _, share in fused]
        assert shares == sorted(shares, reverse=True)


@pytest.mark.parametrize("score", [1.5, -0.1, float("nan"), True, "0.5", None])
@pytest.mark.parametrize("argument", ["words", "unranked_lexical", "overlaps"])
def test_a_score_outside_zero_to_one_is_refused_naming_it(argument: str, score: object) -> None:
    with pytest.raises(ValueError, match=f"a {argument} score must be a number within 0..1"):
        evidence_order([(A, 0.9)], [(B, 0.9)], 10, **{argument: {A: 0.5, B: score}})  # type: ignore[arg-type]
