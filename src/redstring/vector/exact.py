"""Exact top-`k` cosine search over one float32 matrix.

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
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from redstring.domain.json_safety import copy_json
from redstring.domain.vector import VectorMatch

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


class RowSearch(NamedTuple):
    """One search over a tenant's rows, as `search_exactly` and `TenantRows.search` take it.

    Attributes:
        ids: Each row's entity id.
        metadata: Returns a row's metadata as a copy the caller may keep; it is
            called only for the rows returned.
        query: A checked query (`check_query`).
        k: The most matches to return.
        allowed_types: Codes of the types to keep, or `None` for every row.
        min_score: Matches scoring below it are dropped before `k`.
    """

    ids: Sequence[EntityId]
    metadata: Callable[[int], dict[str, Any]]
    query: NDArray[np.float64]
    k: int
    allowed_types: Collection[int] | None
    min_score: float | None


def search_exactly(
    matrix: NDArray[np.float32],
    norms: NDArray[np.float32],
    type_codes: NDArray[np.int32],
    search: RowSearch,
) -> list[VectorMatch]:
    """The `search.k` rows most similar to its query, best first, ties by `str(entity_id)`.

    Args:
        matrix: One stored vector per row, exactly as many rows as `search.ids`.
        norms: Each row's length (`row_norms`).
        type_codes: Each row's entity type code, `NO_TYPE` for none.
        search: What to search for, and how each row is named.
    """
    ids, _, query, k, allowed_types, min_score = search
    if k == 0 or not len(ids) or (allowed_types is not None and not allowed_types):
        return []
    rows = _candidates(matrix, norms, type_codes, query, k, allowed_types, min_score)
    return rank_rows(matrix, search, rows)


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
    matrix: NDArray[np.float32], search: RowSearch, rows: NDArray[np.intp]
) -> list[VectorMatch]:
    """Rescore `rows` in float64 and order them totally: the best `search.k` as matches.

    Each sum runs along one row with numpy's pairwise summation, whose order
    depends only on the row's length, so equal rows score exactly equally.
    """
    ids, metadata, query, k, _, min_score = search
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
