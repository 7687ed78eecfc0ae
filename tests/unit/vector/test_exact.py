"""The shared two-pass exact search, below any adapter."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any
from uuid import UUID

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import EntityId
from redstring.domain.vector import Vector
from redstring.ports._vector_input import check_query, row_norms
from redstring.vector.exact import NO_TYPE, RowSearch, copy_metadata, search_exactly

if TYPE_CHECKING:
    from collections.abc import Callable

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
        RowSearch(ids, lambda row: {}, query, k=1, allowed_types=None, min_score=None),
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
        RowSearch([EntityId(UUID(int=1))], lambda row: {}, query, k=1, allowed_types=None,
                  min_score=None),
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


def _score_alone(row: np.ndarray, query: np.ndarray) -> float:
    """`(1 + cosine) / 2` in float64, each sum numpy's along one row, clipped to `0..1`."""
    stored = row.astype(np.float64)
    cosine = float((stored * query).sum()) / (
        math.sqrt(float((stored * stored).sum())) * math.sqrt(float((query * query).sum()))
    )
    return min(1.0, max(0.0, (cosine + 1.0) / 2.0))


_ROWS = st.integers(min_value=2, max_value=40)


@given(rows=_ROWS, seed=st.integers(min_value=0, max_value=2**32 - 1), k=st.integers(1, 50))
@example(rows=2, seed=0, k=1)
@example(rows=40, seed=7, k=50)
def test_a_score_is_the_rows_own_float64_cosine_whatever_is_searched_beside_it(
    rows: int, seed: int, k: int
) -> None:
    """Rows rescored together must each score as if summed alone, to the last bit.

    Each returned score is compared, with `==`, to the cosine of that row
    and the query computed on their own; an unequal rounding anywhere (a
    different summation order, a sum over the wrong slice) shows as a miss.
    """
    rng = np.random.default_rng(seed)
    dimension = int(rng.integers(1, 400))
    matrix = rng.standard_normal((rows, dimension)).astype(np.float32)
    matrix[-1] = matrix[0]  # two equal rows: equal scores, ordered by id
    query = check_query(
        rng.standard_normal(dimension).tolist(), dimension, k=k, entity_types=None,
        min_score=None,
    )  # fmt: skip
    ids = [EntityId(UUID(int=rows - row)) for row in range(rows)]
    matches = search_exactly(
        matrix, row_norms(matrix), np.full(rows, NO_TYPE, dtype=np.int32),
        RowSearch(ids, lambda row: {"row": row}, query, k=k, allowed_types=None, min_score=None),
    )  # fmt: skip
    assert len(matches) == min(k, rows)
    for match in matches:
        row = match.metadata["row"]
        assert match.score == _score_alone(matrix[row], query)
    expected = sorted(
        range(rows), key=lambda row: (-_score_alone(matrix[row], query), str(ids[row]))
    )[:k]
    assert [match.metadata["row"] for match in matches] == expected


@pytest.mark.parametrize(
    "given_as",
    [
        pytest.param(list, id="list"),
        pytest.param(tuple, id="tuple"),
        pytest.param(Vector, id="vector"),
        pytest.param(lambda values: np.asarray(values, dtype=np.float64), id="float64-array"),
    ],
)
def test_a_query_is_read_alike_however_it_is_given(given_as: Callable[[list[float]], Any]) -> None:
    """Rounded to float32 once, from the float64 given, however it arrives."""
    values = [0.1 + 0.2, -1.0, 1e-3, 3.0]
    query = check_query(given_as(values), 4, k=1, entity_types=None, min_score=None)
    assert query.dtype == np.float64
    assert query.tolist() == [float(np.float32(value)) for value in values]


def test_a_list_of_integers_is_a_query() -> None:
    query = check_query([3, -1, 2], 3, k=1, entity_types=None, min_score=None)
    assert query.tolist() == [3.0, -1.0, 2.0]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([1.0, "2", 3.0], id="a-string"),
        pytest.param([1.0, [2.0], 3.0], id="nested"),
        pytest.param([1.0, None, 3.0], id="none"),
        pytest.param([1.0, 10**400, 3.0], id="too-large-an-int"),
    ],
)
def test_a_list_query_that_is_not_flat_numbers_is_refused_with_a_value_error(
    bad: list[object],
) -> None:
    with pytest.raises(ValueError, match=r"^vector must be a flat sequence of 3 numbers"):
        check_query(bad, 3, k=1, entity_types=None, min_score=None)  # type: ignore[arg-type]


def test_a_list_query_of_the_wrong_length_is_a_dimension_mismatch() -> None:
    with pytest.raises(DimensionMismatchError):
        check_query([1.0, 2.0], 3, k=1, entity_types=None, min_score=None)
    with pytest.raises(DimensionMismatchError):
        check_query([], 3, k=1, entity_types=None, min_score=None)
