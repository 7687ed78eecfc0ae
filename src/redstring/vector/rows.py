"""One tenant's vectors as rows of a growable float32 matrix, changed in place.

The in-memory store holds every tenant this way, and the SQLite store caches
the tenants it has searched this way, applying its own writes to the cache
instead of reloading the tenant. Keys are whatever the store keys rows by
(an `EntityId`, or its text); per-row metadata is opaque here (a dict, or its
JSON text), read back through the store's own function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, overload

import numpy as np

from redstring.ports._vector_input import row_norms
from redstring.vector.exact import NO_TYPE, RowSearch, rank_rows, search_exactly

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray

    from redstring.domain.vector import VectorMatch
    from redstring.vector.adapters.hnsw import HnswGraph

_INITIAL_CAPACITY = 64

#: An adopted matrix this large is copied into numpy's own memory before its
#: first exact search: numpy asks the kernel for huge pages from 4 MiB on.
SETTLE_BYTES: Final = 1 << 22

DEFAULT_ANN_THRESHOLD: Final = 200_000
"""Rows a tenant needs before its search goes through an approximate index.

Below it every search is exact (at 100,000 rows an exact search is about
1.2x the bare numpy floor); at or above it, with the `ann` extra installed,
candidates come from an HNSW index and are rescored exactly. See ADR 0026.
"""

#: A type filter keeping less of the tenant than this is searched exactly,
#: over the rows it keeps: over-fetching from the index would need too many.
ANN_MIN_SHARE: Final = 0.05
#: How many more candidates than needed to fetch from the index, at least.
_OVERFETCH: Final = 2


def check_ann_threshold(threshold: int | None) -> int | None:
    """Return `threshold`, or raise `ValueError` unless it is `None` or a positive `int`."""
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1
    ):
        raise ValueError(f"ann_threshold must be a positive integer or None, got {threshold!r}")
    return threshold


class LazyMap[S, T](Sequence[T]):
    """`source` seen through `convert`: item `n` is `convert(source[n])`, made when read."""

    __slots__ = ("_convert", "_source")

    def __init__(self, source: Sequence[S], convert: Callable[[S], T]) -> None:
        self._source, self._convert = source, convert

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._convert(item) for item in self._source[index]]
        return self._convert(self._source[index])


class TenantRows[K, M]:
    """A tenant's rows: a growable matrix plus the per-row bookkeeping.

    `matrix[:len(self)]`, `norms[:len(self)]` and `type_codes[:len(self)]`
    are the live rows, in the order of `keys`. Not thread-safe.
    """

    __slots__ = (
        "_adopted",
        "_ann",
        "_rows",
        "ann_threshold",
        "keys",
        "matrix",
        "metadata",
        "norms",
        "type_codes",
        "types",
    )

    def __init__(
        self,
        dimension: int,
        *,
        capacity: int = _INITIAL_CAPACITY,
        ann_threshold: int | None = None,
    ) -> None:
        self.ann_threshold = ann_threshold
        self._ann: HnswGraph | None = None
        self._adopted = False
        self.matrix = np.empty((capacity, dimension), dtype=np.float32)
        self.norms = np.empty(capacity, dtype=np.float32)
        self.type_codes = np.empty(capacity, dtype=np.int32)
        self.keys: list[K] = []
        self.metadata: list[M] = []
        self.types: dict[str, int] = {}
        self._rows: dict[K, int] | None = {}

    @classmethod
    def loaded(
        cls,
        keys: list[K],
        matrix: NDArray[np.float32],
        entity_types: Sequence[str | None],
        metadata: list[M],
        *,
        ann_threshold: int | None = None,
    ) -> TenantRows[K, M]:
        """Rows built from a whole tenant read at once; `matrix` is kept, not copied."""
        rows: TenantRows[K, M] = cls(matrix.shape[1], capacity=0, ann_threshold=ann_threshold)
        rows.matrix = matrix
        rows.norms = row_norms(matrix)
        rows.type_codes = np.fromiter(
            (NO_TYPE if name is None else rows.types.setdefault(name, len(rows.types))
             for name in entity_types),
            dtype=np.int32,
            count=len(keys),
        )  # fmt: skip
        rows.keys, rows.metadata = keys, metadata
        # The key -> row index is built on the first write: a tenant loaded
        # only to be searched never needs it.
        rows._rows = None
        return rows

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def rows(self) -> dict[K, int]:
        """Each key's row."""
        if self._rows is None:
            self._rows = {key: row for row, key in enumerate(self.keys)}
        return self._rows

    def type_code(self, entity_type: str | None) -> int:
        """The code of `entity_type`, allocating one for a type not seen before."""
        if entity_type is None:
            return NO_TYPE
        return self.types.setdefault(entity_type, len(self.types))

    def allowed_types(self, entity_types: Sequence[str] | None) -> list[int] | None:
        """The codes of `entity_types` this tenant has; `None` for no filter."""
        if entity_types is None:
            return None
        return [self.types[name] for name in entity_types if name in self.types]

    def _grow(self, needed: int, keep: int) -> None:
        capacity = len(self.matrix)
        if needed <= capacity:
            return
        # A bulk write gets exactly what it needs; appends grow by half again,
        # so the slack never exceeds a third of the matrix.
        capacity = max(needed, capacity + capacity // 2)
        matrix = np.empty((capacity, self.matrix.shape[1]), dtype=np.float32)
        matrix[:keep] = self.matrix[:keep]
        norms = np.empty(capacity, dtype=np.float32)
        norms[:keep] = self.norms[:keep]
        type_codes = np.empty(capacity, dtype=np.int32)
        type_codes[:keep] = self.type_codes[:keep]
        self.matrix, self.norms, self.type_codes = matrix, norms, type_codes
        self._adopted = False

    def put_many(
        self,
        keys: Sequence[K],
        vectors: NDArray[np.float32],
        entity_types: Sequence[str | None],
        metadata: Sequence[M],
        *,
        norms: NDArray[np.float32] | None = None,
        adopt: bool = False,
    ) -> None:
        """Write rows for distinct `keys`, replacing the rows they already have.

        Everything that can fail (growing the arrays) runs before the first
        row changes. `norms`, if given, must be `row_norms(vectors)`. With
        `adopt`, `vectors` is the caller's to give away: an empty tenant
        keeps it (and `norms`) as its own arrays instead of copying them.
        """
        index = self.rows
        kept = len(self)
        if (
            adopt
            and kept == 0
            and vectors.dtype == np.float32
            and vectors.flags.c_contiguous
            and vectors.flags.writeable
        ):
            # A bulk load into an empty tenant: the batch becomes the matrix.
            index.update(zip(keys, range(len(keys)), strict=True))
            self.keys.extend(keys)
            self.metadata.extend(metadata)
            self.matrix, self._adopted = vectors, True
            self.norms = row_norms(vectors) if norms is None else norms
            self.type_codes = np.array(
                [self.type_code(entity_type) for entity_type in entity_types], dtype=np.int32
            )
            if self._ann is not None:
                self._ann.put(np.arange(len(keys), dtype=np.intp), vectors)
            return
        new = sum(1 for key in keys if key not in index)
        self._grow(kept + new, kept)
        codes = [self.type_code(entity_type) for entity_type in entity_types]
        if new == len(keys):
            # Only new keys (a bulk load): append in one slice, no per-row lookups.
            end = kept + new
            index.update(zip(keys, range(kept, end), strict=True))
            self.keys.extend(keys)
            self.metadata.extend(metadata)
            self.matrix[kept:end] = vectors
            self.norms[kept:end] = row_norms(vectors) if norms is None else norms
            self.type_codes[kept:end] = codes
            if self._ann is not None:
                self._ann.put(np.arange(kept, end, dtype=np.intp), vectors)
            return
        rows = np.empty(len(keys), dtype=np.intp)
        for position, (key, entry) in enumerate(zip(keys, metadata, strict=True)):
            row = index.get(key)
            if row is None:
                row = index[key] = len(self.keys)
                self.keys.append(key)
                self.metadata.append(entry)
            else:
                self.metadata[row] = entry
            rows[position] = row
        self.matrix[rows] = vectors
        self.norms[rows] = row_norms(vectors) if norms is None else norms
        self.type_codes[rows] = codes
        if self._ann is not None:
            self._ann.put(rows, vectors)

    def remove(self, key: K) -> bool:
        """Drop the key's row, moving the last row into its place. `True` if it was there."""
        index = self.rows
        row = index.pop(key, None)
        if row is None:
            return False
        last = len(self) - 1
        if row != last:
            moved = self.keys[last]
            self.matrix[row] = self.matrix[last]
            self.norms[row] = self.norms[last]
            self.type_codes[row] = self.type_codes[last]
            self.keys[row] = moved
            self.metadata[row] = self.metadata[last]
            index[moved] = row
            if self._ann is not None:
                self._ann.put(np.array([row], dtype=np.intp), self.matrix[row : row + 1])
        if self._ann is not None:
            self._ann.remove(last)
        self.keys.pop()
        self.metadata.pop()
        return True

    # -- search ---------------------------------------------------------------

    def ann_index(self) -> HnswGraph | None:
        """The approximate index, built now if the tenant has reached the threshold.

        `None` below the threshold, when no threshold was set, or without the
        `ann` extra (the search is then exact).
        """
        if self.ann_threshold is None or len(self) < self.ann_threshold:
            self._ann = None
            return None
        if self._ann is None:
            try:
                from redstring.vector.adapters.hnsw import HnswGraph
            except ImportError:
                return None
            self._ann = HnswGraph.build(self.matrix[: len(self)])
        return self._ann

    @property
    def ann(self) -> HnswGraph | None:
        """The approximate index if one has been built or adopted, without building one."""
        return self._ann

    def adopt_ann(self, index: HnswGraph) -> None:
        """Use `index`, whose label `n` must be row `n` of these rows, instead of building one."""
        self._ann = index

    def reorder(self, order: NDArray[np.intp]) -> None:
        """Put row `order[n]` at position `n`; `order` must be a permutation of the rows."""
        size = len(self)
        self.matrix, self._adopted = self.matrix[order], False
        self.norms = self.norms[:size][order]
        self.type_codes = self.type_codes[:size][order]
        self.keys = [self.keys[row] for row in order]
        self.metadata = [self.metadata[row] for row in order]
        self._rows = None
        self._ann = None

    def search(self, search: RowSearch) -> list[VectorMatch]:
        """The `k` best matches: exact below the ANN threshold, else via the index.

        Through the index, candidates are rescored exactly and filtered before
        `k`; if too few survive the filters, more are fetched, and in the end
        the search falls back to exact. A type filter that keeps less than
        `ANN_MIN_SHARE` of the tenant is searched exactly over the rows it keeps.
        """
        size = len(self)
        index = self.ann_index() if search.k and size else None
        if index is not None and (search.allowed_types is None or search.allowed_types):
            found = self._search_with(index, search)
            if found is not None:
                return found
        self._settle()
        return search_exactly(self.matrix[:size], self.norms[:size], self.type_codes[:size], search)

    def _settle(self) -> None:
        """Copy an adopted matrix into memory numpy allocated, once, before it is scanned.

        An adopted matrix lives in its writer's buffer, on 4 KiB pages; every
        exact search then takes a TLB miss per page. The copy is paid by the
        first search instead of by the write (see ADR 0051).
        """
        if self._adopted:
            self._adopted = False
            if self.matrix.nbytes >= SETTLE_BYTES:
                self.matrix = self.matrix.copy()

    def _search_with(self, index: HnswGraph, search: RowSearch) -> list[VectorMatch] | None:
        """The search through `index`, or `None` when it should be exact instead."""
        ids, metadata, query, k, allowed_types, min_score = search
        size = len(self)
        allowed: NDArray[np.bool_] | None = None
        share = 1.0
        if allowed_types is not None:
            allowed = np.isin(self.type_codes[:size], list(allowed_types))
            share = float(np.count_nonzero(allowed)) / size
            if share < ANN_MIN_SHARE:
                rows = np.flatnonzero(allowed)
                subset = search._replace(
                    ids=LazyMap(rows.tolist(), ids.__getitem__),
                    metadata=lambda row: metadata(int(rows[row])),
                    allowed_types=None,
                )
                return search_exactly(
                    self.matrix[rows], self.norms[rows], self.type_codes[rows], subset
                )
        fetch = min(size, math.ceil(k * _OVERFETCH / share) + 10)
        query32 = query.astype(np.float32)
        while True:
            candidates = index.nearest(query32, fetch)
            if candidates is None:
                return None
            if allowed is not None:
                candidates = candidates[allowed[candidates]]
            matches = rank_rows(self.matrix, search, candidates)
            if len(matches) >= k or (min_score is not None and len(matches) < len(candidates)):
                return matches
            if fetch >= size:
                return None
            fetch = min(size, fetch * 4)


def latest_by_key[T](keys: Sequence[T]) -> list[int]:
    """The index of the last occurrence of each distinct key, in first-seen order."""
    latest: dict[T, int] = {}
    for position, key in enumerate(keys):
        latest[key] = position
    return list(latest.values())
