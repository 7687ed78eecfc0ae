"""Scoring a clustering against the truth: pairwise and B-cubed precision and recall.

Pure. Both take the predicted clusters after transitive closure, so a loose
threshold that chains everything together shows up as lost precision, not
as a good pairwise score on the links it happened to make.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping, Sequence


@dataclass(frozen=True, slots=True)
class Scores:
    """Precision, recall and their harmonic mean, each on `0..1`."""

    precision: float
    recall: float

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall; `0.0` when both are."""
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total


def pairs_of(clusters: Iterable[Sequence[int]]) -> set[tuple[int, int]]:
    """Every pair `(i, j)`, `i < j`, of items that share a cluster."""
    return {pair for cluster in clusters for pair in combinations(sorted(cluster), 2)}


def pairwise_scores(predicted: Iterable[Sequence[int]], truth: Mapping[int, Hashable]) -> Scores:
    """Pairwise precision and recall of `predicted` clusters against item labels.

    `truth` labels every item; items with equal labels are one thing. No
    predicted pair counts as precision `1.0`; no true pair as recall `1.0`.
    """
    predicted_pairs = pairs_of(predicted)
    by_label: dict[Hashable, list[int]] = {}
    for item, label in truth.items():
        by_label.setdefault(label, []).append(item)
    true_pairs = pairs_of(by_label.values())
    hits = len(predicted_pairs & true_pairs)
    return Scores(
        precision=hits / len(predicted_pairs) if predicted_pairs else 1.0,
        recall=hits / len(true_pairs) if true_pairs else 1.0,
    )


def bcubed_scores(predicted: Iterable[Sequence[int]], truth: Mapping[int, Hashable]) -> Scores:
    """B-cubed precision and recall: per item, averaged over every labelled item.

    An item in no predicted cluster is its own singleton.
    """
    cluster_of: dict[int, int] = {}
    clusters: list[Sequence[int]] = list(predicted)
    for index, cluster in enumerate(clusters):
        for item in cluster:
            cluster_of[item] = index
    label_sizes = Counter(truth.values())
    overlap: Counter[tuple[int, Hashable]] = Counter(
        (cluster_of[item], truth[item]) for item in truth if item in cluster_of
    )
    precision = recall = 0.0
    for item, label in truth.items():
        if item in cluster_of:
            shared = overlap[cluster_of[item], label]
            size = len(clusters[cluster_of[item]])
        else:
            shared = size = 1
        precision += shared / size
        recall += shared / label_sizes[label]
    count = len(truth) or 1
    return Scores(precision=precision / count, recall=recall / count)
