"""Pairwise and B-cubed scores, with expected values worked by hand."""

from __future__ import annotations

import pytest

from redstring.consolidation.evaluation import bcubed_scores, pairwise_scores

TRUTH = {0: "a", 1: "a", 2: "a", 3: "b", 4: "c"}


def test_pairwise_counts_pairs_after_closure() -> None:
    scores = pairwise_scores([[0, 1, 3]], TRUTH)
    assert scores.precision == pytest.approx(1 / 3)
    assert scores.recall == pytest.approx(1 / 3)
    assert scores.f1 == pytest.approx(1 / 3)


def test_bcubed_averages_over_items_with_singletons_for_the_unclustered() -> None:
    scores = bcubed_scores([[0, 1, 3]], TRUTH)
    assert scores.precision == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 + 1) / 5)
    assert scores.recall == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 + 1) / 5)


def test_nothing_predicted_is_perfect_precision_and_no_truth_perfect_recall() -> None:
    assert pairwise_scores([], TRUTH).precision == 1.0
    assert pairwise_scores([[3, 4]], {3: "b", 4: "c"}).recall == 1.0
    assert pairwise_scores([], {}).f1 == 1.0
