"""The shared two-pass exact search, below any adapter."""

from __future__ import annotations

import math
from uuid import UUID

import numpy as np
import pytest

from redstring.domain.ids import EntityId
from redstring.vector.exact import (
    NO_TYPE,
    check_query,
    copy_metadata,
    row_norms,
    search_exactly,
)

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


@pytest.mark.parametrize(
    ("component", "message"),
    [
        pytest.param(1e-50, "all zeros at float32 precision", id="rounds-to-zero"),
        pytest.param(1e39, "beyond float32's range", id="beyond-float32"),
        pytest.param(-1e300, "beyond float32's range", id="far-beyond-float32"),
        pytest.param(math.nan, "NaN or infinity", id="nan"),
        pytest.param(-math.inf, "NaN or infinity", id="infinity"),
        pytest.param(0.0, "all zeros", id="zero"),
    ],
)
def test_a_query_degenerate_at_float32_is_refused_as_a_stored_vector_would_be(
    component: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_query([component] * DIMENSION, DIMENSION, k=1, entity_types=None, min_score=None)


@pytest.mark.parametrize(
    "component",
    [
        pytest.param(float(np.finfo(np.float32).max), id="largest-float32"),
        pytest.param(-float(np.finfo(np.float32).max), id="most-negative-float32"),
        pytest.param(1e-45, id="smallest-float32"),
    ],
)
def test_a_query_at_the_edges_of_float32_is_searched(component: float) -> None:
    query = check_query([component] * DIMENSION, DIMENSION, k=1, entity_types=None,
                        min_score=None)  # fmt: skip
    assert query.dtype == np.float64
    assert query[0] == float(np.float32(component))
    matrix = np.full((1, DIMENSION), np.float32(1.0), dtype=np.float32)
    [match] = search_exactly(
        matrix, row_norms(matrix), np.array([NO_TYPE], dtype=np.int32),
        [EntityId(UUID(int=1))], lambda row: {}, query, k=1, allowed_types=None,
        min_score=None,
    )  # fmt: skip
    assert match.score == (1.0 if component > 0 else 0.0)


def test_copied_metadata_shares_no_container_with_the_stored_one() -> None:
    flat: dict[str, object] = {"entity_type": "person", "n": 1, "flag": None}
    nested: dict[str, object] = {"entity_type": "person", "tags": ["a"], "more": {"b": [1]}}
    flat_copy, nested_copy = copy_metadata(flat), copy_metadata(nested)
    assert flat_copy == flat
    assert flat_copy is not flat
    assert nested_copy == nested
    assert nested_copy["tags"] is not nested["tags"]
    assert nested_copy["more"] is not nested["more"]
    assert nested_copy["more"]["b"] is not nested["more"]["b"]  # type: ignore[index]
    listed: dict[str, object] = {"tags": ["a"]}
    assert copy_metadata(listed)["tags"] is not listed["tags"]
