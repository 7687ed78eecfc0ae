"""BM25 scores from a tenant's integers, in numpy: the one scorer every chunk store calls.

Every store hands these functions the same integers for the same writes
(`redstring.domain.bm25` defines them), and each chunk's score is the sum of
its terms' weights taken in sorted term order, so every store computes the
same floats and ranks them the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from redstring.domain.bm25 import K1, B

if TYPE_CHECKING:
    from numpy.typing import NDArray


def term_weights(
    weight: float,
    frequencies: NDArray[np.int32],
    lengths: NDArray[np.int32],
    mean_length: float,
) -> NDArray[np.float64]:
    """One term's score in each chunk: `idf * tf / (tf + K1 * (1 - B + B * dl / avgdl))`.

    `frequencies` and `lengths` are the term's frequency and the length of
    each chunk holding it, `weight` the term's `idf`, `mean_length` the
    tenant's total length over its chunk count. Every store calls this with
    the same integers, so every store gets the same floats.
    """
    tf = frequencies.astype(np.float64)
    norm = K1 * (1.0 - B + B * (lengths.astype(np.float64) / mean_length))
    return weight * (tf / (tf + norm))


def best_slots(scores: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """The positions of `scores` above zero that may rank in the top `k`, ties at the edge kept.

    Every position scoring at least the `k`-th best positive score, in no
    particular order; the caller orders them with `rank_slots`.
    """
    positive = np.flatnonzero(scores > 0.0)
    if len(positive) <= k:
        return positive
    values = scores[positive]
    threshold = values[np.argpartition(-values, k - 1)[k - 1]]
    kept: NDArray[np.intp] = positive[values >= threshold]
    return kept


def rank_slots(
    scores: NDArray[np.float64], id_high: NDArray[np.uint64], id_low: NDArray[np.uint64], k: int
) -> NDArray[np.intp]:
    """The order of the best `k` entries: score descending, then chunk id ascending.

    `id_high` and `id_low` are the two 64-bit halves of each chunk id; a
    UUID's string order is its integer order, so this is `str(chunk_id)`
    ascending.
    """
    order = np.lexsort((id_low, id_high, -scores))
    return order[:k]
