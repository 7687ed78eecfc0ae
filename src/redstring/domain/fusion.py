"""Combining two rankings into one, by rank and never by score.

## Why rank and not score

The semantic channel scores with cosine mapped onto `0..1`; the lexical
channel scores with Jaro-Winkler on `0..1`. The shared range is a coincidence
of both being normalized -- the two numbers have **no common unit**, and a
weighted sum of them silently invents an exchange rate that will be wrong for
some corpus and unfalsifiable for all of them. Reciprocal rank fusion uses
only the position, which is the one thing both channels genuinely produce.

The cost is real and worth stating: RRF discards magnitude, so a semantic
match at `0.99` and one at `0.51` contribute equally if both are ranked
first. That is why `ScoredEntity` retains the component scores -- the caller
can see what fusion threw away.

## What the scores still decide: the order within RRF's top `k`

`evidence_order` keeps RRF's choice of *which* `k` entities are returned
and orders and scores them by a calibrated log-odds of each being the
answer, from each channel's rank, score and gap to that channel's first
score, with coefficients fitted offline on the public name sets and
shipped as plain numbers (`fusion_weights`; ADR 0104). The scores are never added as if they
shared a unit: each gets its own fitted weight, which is the exchange rate,
measured rather than invented, and judged on sets it was not fitted on.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from redstring.domain.fusion_weights import SHIPPED_FUSION_WEIGHTS, FusionWeights

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from redstring.domain.ids import EntityId

#: The `k` of `1/(k + rank)`, from Cormack, Clarke and Buettcher (SIGIR 2009),
#: "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning
#: Methods", where 60 was found to work across runs without tuning.
#:
#: Deliberately a constant and not a parameter. Exposing it would invite
#: tuning against a benchmark this library does not have, and a value tuned on
#: one caller's corpus is not a better default -- it is the same arbitrary
#: number with a misleading provenance.
RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[EntityId]],
) -> list[tuple[EntityId, float]]:
    """Fuse `rankings` into one, best first.

    Each ranking is best-first and may be empty; an empty one contributes
    nothing and does not shift any other ranking's positions, so turning a
    channel off cannot rescore the channel that stayed on. Ranks are 1-based:
    the top of a ranking contributes `1/(RRF_K + 1)`.

    An id repeated within one ranking counts **once, at its best position** --
    a channel that emitted a duplicate must not be able to inflate its own
    contribution.

    Ties break by ascending `EntityId` compared as its canonical lowercase
    hyphenated string, the same rule `VectorStore.search` uses. The result is
    therefore a total order, so truncating to `k` through a tie cannot depend
    on dict ordering or on which channel ran first.
    """
    live = [ranking for ranking in rankings if len(ranking)]
    if len(live) == 1 and len(set(live[0])) == len(live[0]):
        # One ranking without repeats: its scores fall with position, so it is
        # already in the fused order, and no tie can need the id.
        return [
            (entity_id, 1.0 / (RRF_K + position + 1)) for position, entity_id in enumerate(live[0])
        ]
    scores: defaultdict[EntityId, float] = defaultdict(float)
    for ranking in live:
        seen: set[EntityId] = set()
        for position, entity_id in enumerate(ranking):
            if entity_id in seen:
                continue
            seen.add(entity_id)
            scores[entity_id] += 1.0 / (RRF_K + position + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], str(item[0])))


#: Where a channel put an entity: its 1-based rank and its score, or `None`.
Placed = tuple[int, float] | None


def evidence_features(
    semantic: Placed,
    lexical: Placed,
    semantic_top: float,
    lexical_top: float,
    *,
    words: float | None = None,
    words_top: float = 0.0,
    unranked_lexical: float | None = None,
    overlap: float | None = None,
) -> tuple[float, ...]:
    """One candidate's features, in `FusionWeights`' order.

    `semantic` and `lexical` are the candidate's (rank, score) in each
    channel, `None` where that channel did not return it; `semantic_top` and
    `lexical_top` are each channel's first score. A missing channel adds
    nothing but its absence: every feature of it is `0.0`, except that a
    candidate the lexical channel did not return may bring its
    `lexical_score` measured anyway, `unranked_lexical`, which then stands
    for its lexical score and its gap to `lexical_top` (ADR 0119; its flag
    and rank stay those of an absent candidate). `words` is the
    candidate's `word_rarity_matches` score among the candidates, `None`
    when not measured (its two features are then `0.0`), and `words_top`
    the best of those scores (ADR 0116). `overlap` is its `unit_overlap`
    with the query, `None` (`0.0`) when not measured.
    """
    in_semantic = semantic is not None
    in_lexical = lexical is not None
    semantic_rank, semantic_score = semantic if semantic is not None else (1, 0.0)
    lexical_rank, lexical_score = lexical if lexical is not None else (1, 0.0)
    measured = in_lexical or unranked_lexical is not None
    if not in_lexical and unranked_lexical is not None:
        lexical_score = unranked_lexical
    return (
        float(in_semantic),
        float(in_lexical),
        float(in_semantic and in_lexical),
        semantic_score,
        semantic_top - semantic_score if in_semantic else 0.0,
        lexical_score,
        lexical_top - lexical_score if measured else 0.0,
        math.log(semantic_rank),
        math.log(lexical_rank),
        0.0 if words is None else words,
        0.0 if words is None else words_top - words,
        0.0 if overlap is None else overlap,
    )


def _placed(ranking: Sequence[tuple[EntityId, float]]) -> dict[EntityId, tuple[int, float]]:
    """Each id's (1-based rank, score) at its first, best, position."""
    placed: dict[EntityId, tuple[int, float]] = {}
    for position, (entity_id, score) in enumerate(ranking, start=1):
        placed.setdefault(entity_id, (position, score))
    return placed


def evidence_order(
    semantic: Sequence[tuple[EntityId, float]],
    lexical: Sequence[tuple[EntityId, float]],
    k: int,
    weights: FusionWeights | None = SHIPPED_FUSION_WEIGHTS,
    *,
    words: Mapping[EntityId, float] | None = None,
    unranked_lexical: Mapping[EntityId, float] | None = None,
    overlaps: Mapping[EntityId, float] | None = None,
) -> list[tuple[EntityId, float]]:
    """RRF's best `k` of two (id, score) rankings, ordered by the calibrated evidence.

    Which `k` are kept is `reciprocal_rank_fusion`'s choice, its equal
    scores broken by the sum of the component scores (higher first), then by
    `str(id)` (ADR 0016), and with one ranking empty, or `weights=None`,
    that order stands and each score is the RRF score. When both rankings
    are non-empty those `k` are reordered by `weights` over
    `evidence_features`, higher first, equal evidence keeping the RRF
    order, and each score is its evidence's share: the fitted chance,
    among every candidate the two rankings hold, that it is the answer
    (a softmax of the evidence, on `0..1`; the shares of all candidates
    sum to 1). A channel's own
    order is never inverted by the shipped weights: within one channel a
    better rank and a higher score only add evidence (ADR 0104). `words`
    holds each candidate's `word_rarity_matches` score among the
    candidates, a feature of the evidence (ADR 0116); a candidate it lacks
    adds none. What the names say of the candidates the lexical channel
    did not return is evidence too (ADR 0119): `unranked_lexical` holds
    their `lexical_score`, measured anyway (one of a candidate the lexical
    channel returned is ignored: its ranked score counts), and `overlaps`
    each candidate's `unit_overlap` with the query.

    Raises:
        ValueError: a negative `k`, or a `words`, `unranked_lexical` or
            `overlaps` score that is not a number within `0..1`.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    for label, given in (
        ("words", words),
        ("unranked_lexical", unranked_lexical),
        ("overlaps", overlaps),
    ):
        for score in (given or {}).values():
            if isinstance(score, bool) or not isinstance(score, float | int) or not 0 <= score <= 1:
                raise ValueError(f"a {label} score must be a number within 0..1, got {score!r}")
    placed_semantic, placed_lexical = _placed(semantic), _placed(lexical)
    fused = reciprocal_rank_fusion(
        [[entity_id for entity_id, _ in semantic], [entity_id for entity_id, _ in lexical]]
    )

    def component_sum(entity_id: EntityId) -> float:
        at_semantic = placed_semantic.get(entity_id)
        at_lexical = placed_lexical.get(entity_id)
        return (0.0 if at_semantic is None else at_semantic[1]) + (
            0.0 if at_lexical is None else at_lexical[1]
        )

    if len({score for _, score in fused}) < len(fused):
        # Fusion orders equal scores by `str(id)`; they break by the evidence
        # first. Distinct scores are in order already.
        fused.sort(key=lambda item: (-item[1], -component_sum(item[0]), str(item[0])))
    del fused[k:]
    if weights is None or not semantic or not lexical:
        return fused
    coefficients = weights.as_tuple()
    semantic_top, lexical_top = semantic[0][1], lexical[0][1]
    matches = {} if words is None else words
    words_top = max(matches.values(), default=0.0)
    unranked = {} if unranked_lexical is None else unranked_lexical
    overlap_of = {} if overlaps is None else overlaps

    def evidence(entity_id: EntityId) -> float:
        features = evidence_features(
            placed_semantic.get(entity_id),
            placed_lexical.get(entity_id),
            semantic_top,
            lexical_top,
            words=matches.get(entity_id),
            words_top=words_top,
            unranked_lexical=unranked.get(entity_id),
            overlap=overlap_of.get(entity_id),
        )
        return math.fsum(w * f for w, f in zip(coefficients, features, strict=True))

    # The share is over every candidate the channels returned, which is what
    # the weights were fitted to choose among, not only over the `k` kept.
    every = {entity_id: evidence(entity_id) for entity_id in {*placed_semantic, *placed_lexical}}
    peak = max(every.values())
    total = math.fsum(math.exp(value - peak) for value in every.values())
    kept = [entity_id for entity_id, _ in fused]
    kept.sort(key=lambda entity_id: -every[entity_id])  # stable: equal evidence keeps RRF's order
    return [(entity_id, math.exp(every[entity_id] - peak) / total) for entity_id in kept]
