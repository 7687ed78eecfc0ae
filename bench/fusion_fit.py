"""Fitting and judging the evidence order's weights, leave-one-set-out.

The shipped `FusionWeights` (`redstring.domain.fusion_weights`) are what
`fit` gives on every public set; `leave_one_set_out` fits on all sets but
one and judges on that one, for each in turn, beside plain RRF and each
channel alone (ADR 0104). The fit is a listwise softmax (the log-likelihood
that the right answer is the one picked among each query's candidates,
the union of the two channels' answers), each set weighing the same
whatever its size, with a small L2 penalty, solved by Newton's method:
the loss is convex, so the same sets give the same weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from redstring.domain.fusion import evidence_features, evidence_order
from redstring.domain.fusion_weights import FusionWeights

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId

L2 = 0.01
"""The penalty on the weights' squared norm; 0.1 measured worse on every held-out set."""

FEATURES = len(FusionWeights.__dataclass_fields__)


@dataclass(frozen=True)
class FusionQuery:
    """One query's two channel answers, best first, and its right answers.

    `words` holds each candidate's `word_rarity_matches` score among the
    candidates, `unranked_lexical` the `lexical_score` of each candidate the
    lexical channel did not return, and `overlaps` each candidate's
    `unit_overlap` with the query, as the Retriever measures them (empty:
    not measured).
    """

    semantic: tuple[tuple[EntityId, float], ...]
    lexical: tuple[tuple[EntityId, float], ...]
    gold: frozenset[EntityId]
    words: Mapping[EntityId, float] = field(default_factory=dict)
    unranked_lexical: Mapping[EntityId, float] = field(default_factory=dict)
    overlaps: Mapping[EntityId, float] = field(default_factory=dict)


def candidates(query: FusionQuery) -> tuple[list[EntityId], NDArray[np.float64]]:
    """The union of the channels' answers and each one's features, as rows."""
    semantic: dict[EntityId, tuple[int, float]] = {}
    lexical: dict[EntityId, tuple[int, float]] = {}
    for position, (entity_id, score) in enumerate(query.semantic, start=1):
        semantic.setdefault(entity_id, (position, score))
    for position, (entity_id, score) in enumerate(query.lexical, start=1):
        lexical.setdefault(entity_id, (position, score))
    ids = list(dict.fromkeys([*semantic, *lexical]))
    semantic_top = query.semantic[0][1] if query.semantic else 0.0
    lexical_top = query.lexical[0][1] if query.lexical else 0.0
    words_top = max(query.words.values(), default=0.0)
    rows = [
        evidence_features(
            semantic.get(each),
            lexical.get(each),
            semantic_top,
            lexical_top,
            words=query.words.get(each),
            words_top=words_top,
            unranked_lexical=query.unranked_lexical.get(each),
            overlap=query.overlaps.get(each),
        )
        for each in ids
    ]
    return ids, np.asarray(rows, dtype=np.float64).reshape(len(ids), FEATURES)


def _padded(queries: Sequence[FusionQuery]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Features (query, candidate, feature) and targets, over queries with a right candidate."""
    kept = []
    for query in queries:
        ids, rows = candidates(query)
        target = np.asarray([each in query.gold for each in ids], dtype=np.float64)
        if target.any():
            kept.append((rows, target))
    width = max((len(target) for _, target in kept), default=1)
    features = np.zeros((len(kept), width, FEATURES))
    targets = np.full((len(kept), width), np.nan)
    for row, (rows, target) in enumerate(kept):
        features[row, : len(target)] = rows
        targets[row, : len(target)] = target
    return features, targets


#: The sign each channel's own order needs (ADR 0104): a higher score adds
#: evidence (+1), a larger gap to the first and a worse rank subtract (-1);
#: 0 is free. A fit that wants another sign has that weight held at 0.
SIGNS = (0, 0, 0, 1, -1, 1, -1, -1, -1, 1, -1, 1)


def fit(sets: Sequence[Sequence[FusionQuery]], l2: float = L2) -> FusionWeights:
    """The weights that best pick each query's right answer, every set weighing the same.

    Each weight keeps the sign in `SIGNS`: one the unconstrained fit gives
    the other sign is held at 0 and the rest refitted, until none is.
    Fitted on one kind of set alone, an unconstrained fit can invert a
    channel's order, which no held-out set of another kind survives.
    """
    data = [_padded(queries) for queries in sets]
    free = np.ones(FEATURES, dtype=bool)
    while True:
        weights = _newton(data, l2, free)
        wrong = free & (np.asarray(SIGNS) * weights < 0)
        if not wrong.any():
            return FusionWeights(*(round(float(each), 3) for each in weights))
        free &= ~wrong


def _newton(
    data: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]],
    l2: float,
    free: NDArray[np.bool_],
) -> NDArray[np.float64]:
    """The penalised listwise fit over the `free` weights; the others stay 0."""
    weights = np.zeros(FEATURES)
    for _ in range(50):
        gradient = l2 * weights
        hessian = l2 * np.eye(FEATURES)
        for features, targets in data:
            if not len(features):
                continue
            present = ~np.isnan(targets)
            share = 1.0 / len(features)
            logits = np.where(present, features @ weights, -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            chance = np.exp(logits)
            chance /= chance.sum(axis=1, keepdims=True)
            wanted = np.where(present, targets, 0.0)
            wanted /= wanted.sum(axis=1, keepdims=True)
            gradient += share * np.einsum("qm,qmf->f", chance - wanted, features)
            mean = np.einsum("qm,qmf->qf", chance, features)
            hessian += share * (
                np.einsum("qm,qmf,qmg->fg", chance, features, features)
                - np.einsum("qf,qg->fg", mean, mean)
            )
        step = np.zeros(FEATURES)
        step[free] = np.linalg.solve(hessian[np.ix_(free, free)], gradient[free])
        weights -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return weights


def judge(
    queries: Sequence[FusionQuery], weights: FusionWeights | None, k: int
) -> tuple[float, float]:
    """R@1 and R@k of `evidence_order` with `weights` (`None`: plain RRF)."""
    first = within = 0
    for query in queries:
        ranked = [
            each
            for each, _ in evidence_order(
                query.semantic,
                query.lexical,
                k,
                weights,
                words=query.words,
                unranked_lexical=query.unranked_lexical,
                overlaps=query.overlaps,
            )
        ]
        first += bool(ranked) and ranked[0] in query.gold
        within += any(each in query.gold for each in ranked)
    return first / len(queries), within / len(queries)


def channel_recall(queries: Sequence[FusionQuery], channel: str, k: int) -> tuple[float, float]:
    """R@1 and R@k of one channel alone (`semantic` or `lexical`)."""
    first = within = 0
    for query in queries:
        ranked = [each for each, _ in getattr(query, channel)[:k]]
        first += bool(ranked) and ranked[0] in query.gold
        within += any(each in query.gold for each in ranked)
    return first / len(queries), within / len(queries)


@dataclass(frozen=True)
class HeldOut:
    """One set judged on weights fitted on the others.

    `own` is the set judged on weights fitted on itself alone: not a
    held-out figure but a ceiling, what any weights of this form could
    reach on that set's own candidates.
    """

    held_out: str
    rrf: tuple[float, float]
    loso: tuple[float, float]
    semantic: tuple[float, float]
    lexical: tuple[float, float]
    weights: FusionWeights
    own: tuple[float, float]


def leave_one_set_out(by_set: Mapping[str, Sequence[FusionQuery]], k: int) -> list[HeldOut]:
    """For each set: fit on every other, judge on it, beside RRF, each channel and its own fit."""
    found = []
    for held_out, queries in by_set.items():
        weights = fit([each for name, each in by_set.items() if name != held_out])
        found.append(
            HeldOut(
                held_out=held_out,
                rrf=judge(queries, None, k),
                loso=judge(queries, weights, k),
                semantic=channel_recall(queries, "semantic", k),
                lexical=channel_recall(queries, "lexical", k),
                weights=weights,
                own=judge(queries, fit([queries]), k),
            )
        )
    return found
