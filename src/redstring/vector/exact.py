"""Exact top-`k` cosine search over one float32 matrix, and the checks on its inputs.

Every vector adapter holds a tenant as rows of a float32 matrix and searches
it here, so all of them rank identically.

Search runs in two passes. The float32 pass scores every row with one
matrix-vector product and keeps the rows that could be in the top `k`, with
a margin for float32 rounding; the exact pass rescores only those in float64,
summing each row on its own, so two equal vectors score exactly equally and
the `str(entity_id)` tie-break decides between them. (A BLAS product does not
promise that: it may sum equal rows in different orders and give them
different last bits.)
"""

from __future__ import annotations

import math
from array import array as _FloatArray
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.json_safety import check_json, copy_json, is_plain_json
from redstring.domain.limits import MAX_DIMENSION
from redstring.domain.validation import (
    check_entity_types,
    check_integer,
    check_limit,
    check_min_score,
)
from redstring.domain.vector import Vector, VectorMatch, VectorRecord

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId
    from redstring.domain.vector import VectorLike

#: Type code of a record whose `entity_type` is missing or not a string: it
#: matches no `entity_types` filter.
NO_TYPE = -1
#: Worst-case relative error of a float32 dot product is about `dimension`
#: units in the last place; the first pass keeps rows within twice that.
_FLOAT32_EPSILON = float(np.finfo(np.float32).eps)
#: Rows converted to float64 at a time when computing lengths.
_NORM_CHUNK = 4_096


def check_dimension(dimension: int) -> int:
    """Return `dimension`, or raise `ValueError` unless it is an `int` in `1..MAX_DIMENSION`."""
    return check_integer(dimension, argument="dimension", minimum=1, maximum=MAX_DIMENSION)


def _as_vector(vector: VectorLike, field: str, dimension: int) -> Vector:
    if isinstance(vector, Vector):
        return vector
    try:
        return Vector(vector)
    except ValueError as exc:
        raise ValueError(f"{field} must be a flat sequence of {dimension} numbers: {exc}") from exc


def check_rows(
    vectors: Sequence[VectorLike], dimension: int, *, field: str = "records[{}].vector"
) -> NDArray[np.float32]:
    """The vectors as one float32 matrix, one row each, after checking all of them.

    What is stored is float32, so that is what is checked: a component
    beyond float32's range (which would be stored as infinity) and a vector
    whose every component rounds to zero in float32 are refused like NaN and
    zero. A float32 array row is copied in without a step per component.

    Raises:
        DimensionMismatchError: some vector does not have `dimension` components.
        ValueError: some vector is not flat numbers, or is zero, NaN or
            infinite at float32; the message names it with `field`.
    """
    return check_rows_and_norms(vectors, dimension, field=field)[0]


def check_rows_and_norms(
    vectors: Sequence[VectorLike], dimension: int, *, field: str = "records[{}].vector"
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """`check_rows`'s matrix, writable and owned by the caller, and its `row_norms`.

    Every check is read off the rows' float64 lengths, one pass over the
    matrix: a length is NaN or infinite exactly when a component is, zero
    exactly when every component is zero, and infinite at float32 exactly
    when the row is longer than float32 allows.

    Raises:
        DimensionMismatchError: some vector does not have `dimension` components.
        ValueError: as `check_rows`.
    """
    width = 4 * dimension
    blocks = [
        vector.tobytes()
        for vector in vectors
        if isinstance(vector, Vector) and vector.itemsize == 4 and len(vector.tobytes()) == width
    ]
    if len(blocks) == len(vectors):
        # Every vector is float32 of the right length: one copy, no step per vector.
        joined = bytearray().join(blocks)
        matrix = np.frombuffer(joined, dtype=np.float32).reshape(-1, dimension)
    else:
        matrix = np.empty((len(vectors), dimension), dtype=np.float32)
        with np.errstate(over="ignore"):
            for index, vector in enumerate(vectors):
                array = np.asarray(_as_vector(vector, field.format(index), dimension))
                if len(array) != dimension:
                    raise DimensionMismatchError(expected=dimension, actual=len(array))
                matrix[index] = array
    lengths = _row_lengths(matrix)
    finite = np.isfinite(lengths)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise ValueError(
            f"{field.format(bad)} contains NaN or infinity, or a value beyond float32's range"
        )
    zero = np.flatnonzero(lengths == 0.0)
    if zero.size:
        raise ValueError(f"{field.format(int(zero[0]))} is all zeros at float32 precision")
    with np.errstate(over="ignore"):
        norms = lengths.astype(np.float32)
    long = np.flatnonzero(~np.isfinite(norms))
    if long.size:
        raise ValueError(f"{field.format(int(long[0]))} is longer than float32's range")
    return matrix, norms


def _row_lengths(matrix: NDArray[np.float32]) -> NDArray[np.float64]:
    """Each row's length in float64, where no float32 row can overflow or underflow."""
    lengths = np.empty(len(matrix), dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for start in range(0, len(matrix), _NORM_CHUNK):
            chunk = matrix[start : start + _NORM_CHUNK].astype(np.float64)
            lengths[start : start + _NORM_CHUNK] = np.sqrt(np.einsum("ij,ij->i", chunk, chunk))
    return lengths


def row_norms(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row's length, computed in float64 (no overflow or underflow), stored as float32."""
    with np.errstate(over="ignore"):
        return _row_lengths(matrix).astype(np.float32)


def check_batch(records: Sequence[VectorRecord], dimension: int) -> NDArray[np.float32]:
    """Every record's vector as one float32 row, after checking the whole batch.

    Raises:
        DimensionMismatchError: some vector does not have `dimension` components.
        ValueError: some record is not a `VectorRecord`, or its vector is zero,
            NaN or infinite; the message names its index.
    """
    for index, record in enumerate(records):
        if not isinstance(record, VectorRecord):
            raise ValueError(f"records[{index}] is not a VectorRecord: {record!r}")
    return check_rows([record.vector for record in records], dimension)


def check_metadata(metadata: object, field: str) -> dict[str, Any]:
    """A private copy of `metadata`, checked to be a plain JSON object every store can hold.

    Checked at the store's edge, not only where a record was built: a
    record's `metadata` dict can be changed after it was validated.

    Raises:
        ValueError: `metadata` is not a dict of plain JSON; `field` names it.
    """
    if is_plain_json(metadata):  # the silent walk; `check_json` explains a refusal
        return copy_json(metadata)  # type: ignore[arg-type]
    if not isinstance(metadata, dict):
        raise ValueError(f"{field} must be a dict, got {type(metadata).__name__}")
    try:
        return copy_json(check_json(metadata, field=field))
    except RecursionError as exc:
        raise ValueError(f"{field} is nested too deeply (or contains itself)") from exc


def check_query(
    vector: VectorLike,
    dimension: int,
    *,
    k: int,
    entity_types: Sequence[str] | None,
    min_score: float | None,
) -> NDArray[np.float64]:
    """The query of a search, rounded to float32 like every stored vector.

    Rounded so that a vector searched for itself scores as equal to itself,
    and checked after rounding, as a stored vector is: a query that is zero
    or infinite at float32 is refused rather than searched with.

    Raises:
        DimensionMismatchError: `vector` does not have `dimension` components.
        ValueError: `k` is not an integer within `0..MAX_LIMIT`, `min_score`
            is not a number within `0..1`, `entity_types` is not a sequence
            of type names, or `vector` is degenerate.
    """
    check_limit(k, argument="k"), check_min_score(min_score), check_entity_types(entity_types)
    array: NDArray[np.floating[Any]]
    if type(vector) is list:
        # What an embedding provider returns: read as `Vector` reads a sequence,
        # without building one; `_as_vector` explains a refusal.
        try:
            array = np.frombuffer(_FloatArray("d", vector), dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            array = np.asarray(_as_vector(vector, "vector", dimension))
    else:
        array = np.asarray(_as_vector(vector, "vector", dimension))
    if len(array) != dimension:
        raise DimensionMismatchError(expected=dimension, actual=len(array))
    with np.errstate(over="ignore", invalid="ignore"):
        query = array.astype(np.float32).astype(np.float64)
        # Squares of float32 values cannot overflow or underflow in float64,
        # so one dot product tells a non-finite query and a zero one apart.
        square = float(query @ query)
    if not math.isfinite(square):
        raise ValueError("vector contains NaN or infinity, or a value beyond float32's range")
    if square == 0.0:
        raise ValueError("vector is all zeros at float32 precision; cosine is undefined for it")
    return query


def copy_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A copy of stored JSON metadata: `copy_json`, with a shallow copy when nothing nests."""
    copy = metadata.copy()
    for value in copy.values():
        if type(value) is dict or type(value) is list:
            return copy_json(metadata)
    return copy


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
        norms: Each row's length (`row_norms`).
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
    return rank_rows(matrix, ids, metadata, query, rows, k, min_score)


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
    # A unit query keeps every product within a stored row's (float32) length.
    cosines = matrix @ (query / math.sqrt(float(query @ query))).astype(np.float32)
    cosines /= norms
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


def rank_rows(
    matrix: NDArray[np.float32],
    ids: Sequence[EntityId],
    metadata: Callable[[int], dict[str, Any]],
    query: NDArray[np.float64],
    rows: NDArray[np.intp],
    k: int,
    min_score: float | None,
) -> list[VectorMatch]:
    """Rescore `rows` in float64 and order them totally: the best `k` of them as matches.

    Each sum runs along one row with numpy's pairwise summation, whose order
    depends only on the row's length, so equal rows score exactly equally.
    """
    # `take` copies the rows out faster than fancy indexing, value for value.
    candidates = matrix.take(rows, axis=0).astype(np.float64)
    count = len(candidates)
    # Every sum in one reduction, row by row: the rows' products with the
    # query, their squares, and the query's squares. One row's sum is the
    # same whichever array holds the row.
    products = np.empty((2 * count + 1, candidates.shape[1]))
    np.multiply(candidates, query, out=products[:count])
    np.multiply(candidates, candidates, out=products[count : 2 * count])
    np.multiply(query, query, out=products[2 * count])
    sums = np.add.reduce(products, axis=1)
    cosines = sums[:count]
    cosines /= np.sqrt(sums[count : 2 * count]) * math.sqrt(float(sums[2 * count]))
    cosines += 1.0
    cosines /= 2.0
    np.maximum(cosines, 0.0, out=cosines)
    np.minimum(cosines, 1.0, out=cosines)
    scored = list(zip(cosines.tolist(), rows.tolist(), strict=True))
    if min_score is not None:
        scored = [(score, row) for score, row in scored if score >= min_score]
    if len({score for score, _ in scored}) == len(scored):
        # No two scores tie: the order is by score alone, and no id is formatted.
        scored.sort(key=_score_of, reverse=True)
    else:
        scored.sort(key=lambda item: (-item[0], str(ids[item[1]]), item[1]))
    return [_match(ids[row], score, metadata(row)) for score, row in scored[:k]]


def _score_of(item: tuple[float, int]) -> float:
    return item[0]


_new: Final = object.__new__
_set_attribute: Final = object.__setattr__


def _match(entity_id: EntityId, score: float, metadata: dict[str, Any]) -> VectorMatch:
    """A `VectorMatch` built without validation: what `model_construct` builds, faster.

    Only for values already checked: `score` clipped to `0..1`, `metadata` a
    fresh copy of stored JSON. `model_construct` walks the model's fields for
    defaults; with every field given, this is the same object for a quarter
    of the cost, which a small tenant's search pays `k` times.
    """
    match = _new(VectorMatch)
    _set_attribute(
        match, "__dict__", {"entity_id": entity_id, "score": score, "metadata": metadata}
    )
    _set_attribute(match, "__pydantic_fields_set__", {"entity_id", "score", "metadata"})
    _set_attribute(match, "__pydantic_extra__", None)
    _set_attribute(match, "__pydantic_private__", None)
    return match
