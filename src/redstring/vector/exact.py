"""Exact top-`k` cosine search over one float32 matrix, and the checks on its inputs.

Every vector adapter holds a tenant as rows of a float32 matrix and searches
it here, so all of them rank identically.

Search runs in two passes. The float32 pass scores every row with one
matrix-vector product and keeps the rows that could be in the top `k`, with
a margin for float32 rounding; the exact pass rescores only those in float64,
one row at a time, so two equal vectors score exactly equally and the
`str(entity_id)` tie-break decides between them. (A BLAS product does not
promise that: it may sum equal rows in different orders and give them
different last bits.)
"""

from __future__ import annotations

import math
from collections.abc import Sized
from typing import TYPE_CHECKING, Any

import numpy as np

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.limits import MAX_DIMENSION
from redstring.domain.validation import (
    check_entity_types,
    check_integer,
    check_limit,
    check_min_score,
)
from redstring.domain.vector import VectorMatch, VectorRecord, cosine_to_score

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId

#: Type code of a record whose `entity_type` is missing or not a string: it
#: matches no `entity_types` filter.
NO_TYPE = -1
#: Worst-case relative error of a float32 dot product is about `dimension`
#: units in the last place; the first pass keeps rows within twice that.
_FLOAT32_EPSILON = float(np.finfo(np.float32).eps)


def check_dimension(dimension: int) -> int:
    """Return `dimension`, or raise `ValueError` unless it is an `int` in `1..MAX_DIMENSION`."""
    return check_integer(dimension, argument="dimension", minimum=1, maximum=MAX_DIMENSION)


def check_vector(vector: Sequence[float], dimension: int) -> NDArray[np.float64]:
    """`vector` as a float64 array, checked for length and finite, non-zero values.

    Raises:
        DimensionMismatchError: `vector` does not have `dimension` components.
        ValueError: it is not flat numbers, or is zero, NaN or infinite.
    """
    if isinstance(vector, str | bytes) or not isinstance(vector, Sized):
        raise ValueError(f"vector must be a sequence of numbers, got {vector!r:.80}")
    if len(vector) != dimension:
        raise DimensionMismatchError(expected=dimension, actual=len(vector))
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"vector must be a flat sequence of numbers: {exc}") from exc
    if array.shape != (dimension,):
        raise ValueError(f"vector must be a flat sequence of {dimension} numbers")
    if not np.isfinite(array).all():
        raise ValueError("vector contains NaN or infinity")
    if not array.any():
        raise ValueError("vector is all zeros; cosine is undefined for it")
    return array


def check_batch(records: Sequence[VectorRecord], dimension: int) -> NDArray[np.float32]:
    """Every record's vector as one float32 row, after checking the whole batch.

    Raises:
        DimensionMismatchError: some vector does not have `dimension` components.
        ValueError: some record is not a `VectorRecord`, or its vector is zero,
            NaN or infinite; the message names its index.
    """
    if not records:
        return np.empty((0, dimension), dtype=np.float32)
    for index, record in enumerate(records):
        if not isinstance(record, VectorRecord):
            raise ValueError(f"records[{index}] is not a VectorRecord: {record!r}")
        if len(record.vector) != dimension:
            raise DimensionMismatchError(expected=dimension, actual=len(record.vector))
    # Straight to float32, the stored precision: converting the Python floats
    # is most of a batch's cost, and a float64 detour makes it a third dearer.
    with np.errstate(over="ignore"):
        matrix = np.array([record.vector for record in records], dtype=np.float32)
    if not np.isfinite(matrix).all():
        bad = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0])
        raise ValueError(
            f"records[{bad}].vector contains NaN or infinity, or a value beyond float32's range"
        )
    zero = np.flatnonzero(~matrix.any(axis=1))
    if zero.size:
        raise ValueError(f"records[{int(zero[0])}].vector is all zeros at float32 precision")
    return matrix


def check_query(
    vector: Sequence[float],
    dimension: int,
    *,
    k: int,
    entity_types: Sequence[str] | None,
    min_score: float | None,
) -> NDArray[np.float64]:
    """The query of a search, rounded to float32 like every stored vector.

    Rounded so that a vector searched for itself scores as equal to itself.

    Raises:
        DimensionMismatchError: `vector` does not have `dimension` components.
        ValueError: `k` is not an integer within `0..MAX_LIMIT`, `min_score`
            is not a number within `0..1`, `entity_types` is not a sequence
            of type names, or `vector` is degenerate.
    """
    check_limit(k, argument="k"), check_min_score(min_score), check_entity_types(entity_types)
    return check_vector(vector, dimension).astype(np.float32).astype(np.float64)


def entity_type_of(metadata: dict[str, Any]) -> str | None:
    """`metadata["entity_type"]` when it is a string; `None` matches no type filter."""
    entity_type = metadata.get("entity_type")
    return entity_type if isinstance(entity_type, str) else None


def search_exactly(
    matrix: NDArray[np.float32],
    norms: NDArray[np.float32],
    type_codes: NDArray[np.int32],
    ids: Sequence[EntityId],
    metadata: Callable[[int], dict[str, Any]],
    query: NDArray[np.float64],
    *,
    k: int,
    allowed_types: Collection[int] | None,
    min_score: float | None,
) -> list[VectorMatch]:
    """The `k` rows most similar to `query`, best first, ties by `str(entity_id)`.

    Args:
        matrix: One stored vector per row, exactly as many rows as `ids`.
        norms: The float32 norm of each row.
        type_codes: Each row's entity type code, `NO_TYPE` for none.
        ids: Each row's entity id.
        metadata: Returns a row's metadata as a copy the caller may keep; it is
            called only for the rows returned.
        query: A checked query (`check_query`).
        k: The most matches to return.
        allowed_types: Codes of the types to keep, or `None` for every row.
        min_score: Matches scoring below it are dropped before `k`.
    """
    if k == 0 or not len(ids) or (allowed_types is not None and not allowed_types):
        return []
    rows = _candidates(matrix, norms, type_codes, query, k, allowed_types, min_score)
    return _rank_exactly(matrix, ids, metadata, query, rows, k, min_score)


def _candidates(
    matrix: NDArray[np.float32],
    norms: NDArray[np.float32],
    type_codes: NDArray[np.int32],
    query: NDArray[np.float64],
    k: int,
    allowed_types: Collection[int] | None,
    min_score: float | None,
) -> NDArray[np.intp]:
    """Rows that may be in the top `k`: the float32 pass, with a rounding margin."""
    size = len(matrix)
    cosines = matrix @ query.astype(np.float32)
    cosines /= norms * np.float32(np.linalg.norm(query))
    margin = np.float32(4 * matrix.shape[1] * _FLOAT32_EPSILON)
    allowed: NDArray[np.bool_] | None = None
    if allowed_types is not None:
        allowed = np.isin(type_codes, list(allowed_types))
    if min_score is not None:
        floor = np.float32(2.0 * min_score - 1.0) - margin
        above = cosines >= floor
        allowed = above if allowed is None else allowed & above
    if allowed is not None:
        cosines = np.where(allowed, cosines, -np.inf)
        size = int(np.count_nonzero(allowed))
        if size == 0:
            return np.empty(0, dtype=np.intp)
    if k < size:
        kth = len(cosines) - k
        threshold = np.partition(cosines, kth)[kth]
        return np.flatnonzero(cosines >= threshold - margin)
    return np.flatnonzero(cosines > -np.inf)


def _rank_exactly(
    matrix: NDArray[np.float32],
    ids: Sequence[EntityId],
    metadata: Callable[[int], dict[str, Any]],
    query: NDArray[np.float64],
    rows: NDArray[np.intp],
    k: int,
    min_score: float | None,
) -> list[VectorMatch]:
    """Rescore `rows` in float64, row by row, and order them totally."""
    query_norm = math.sqrt(float(query @ query))
    scored: list[tuple[float, str, int]] = []
    for row in rows.tolist():
        stored = matrix[row].astype(np.float64)
        cosine = float(stored @ query) / (math.sqrt(float(stored @ stored)) * query_norm)
        score = cosine_to_score(cosine)
        if min_score is None or score >= min_score:
            scored.append((-score, str(ids[row]), row))
    scored.sort()
    return [
        VectorMatch(entity_id=ids[row], score=-negative_score, metadata=metadata(row))
        for negative_score, _, row in scored[:k]
    ]
