"""The shared two-pass exact search, below any adapter."""

from __future__ import annotations

from uuid import UUID

import numpy as np

from redstring.domain.ids import EntityId
from redstring.vector.exact import NO_TYPE, search_exactly

DIMENSION = 384


def _float32_cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The first pass's arithmetic, as `search_exactly` does it."""
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    cosines = matrix @ query.astype(np.float32)
    cosines /= norms * np.float32(np.linalg.norm(query))
    return cosines


def _exact_cosine(row: np.ndarray, query: np.ndarray) -> float:
    stored = row.astype(np.float64)
    return float(stored @ query) / (float(np.sqrt(stored @ stored)) * float(np.sqrt(query @ query)))


def test_the_rounding_margin_keeps_a_row_the_float32_pass_ranks_second() -> None:
    """Two rows a rounding error apart, which float32 orders the wrong way round.

    Without the margin the first pass keeps only float32's favourite for
    `k=1`, and the exact pass never sees the true best row.
    """
    rng = np.random.default_rng(20261130)
    for _ in range(5_000):
        base = rng.standard_normal(DIMENSION).astype(np.float32)
        nudged = base.copy()
        index = int(rng.integers(DIMENSION))
        nudged[index] = np.nextafter(nudged[index], np.float32(np.inf))
        matrix = np.stack([base, nudged])
        query = rng.standard_normal(DIMENSION).astype(np.float32).astype(np.float64)
        fast = _float32_cosines(matrix, query)
        exact = [_exact_cosine(row, query) for row in matrix]
        if (
            fast[0] != fast[1]
            and exact[0] != exact[1]
            and (fast[0] > fast[1]) != (exact[0] > exact[1])
        ):
            break
    else:
        raise AssertionError("no misordered pair found; widen the search")
    best = int(np.argmax(exact))
    ids = [EntityId(UUID(int=1)), EntityId(UUID(int=2))]
    [match] = search_exactly(
        matrix,
        np.linalg.norm(matrix, axis=1).astype(np.float32),
        np.full(2, NO_TYPE, dtype=np.int32),
        ids,
        lambda row: {},
        query,
        k=1,
        allowed_types=None,
        min_score=None,
    )
    assert match.entity_id == ids[best]
