"""The checks a vector store's arguments pass, at the precision it stores: float32.

`VectorStoreBase` runs them once, in its public methods, so every vector
store refuses the same input with the same error; the exact search
(`redstring.vector.exact`) and the stores' rows use `row_norms`.
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
from redstring.domain.vector import Vector

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from redstring.domain.vector import VectorLike

#: Rows converted to float64 at a time when computing lengths.
_NORM_CHUNK: Final = 4_096


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
