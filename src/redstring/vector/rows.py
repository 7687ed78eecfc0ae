"""One tenant's vectors as rows of a growable float32 matrix, changed in place.

The in-memory store holds every tenant this way, and the SQLite store caches
the tenants it has searched this way, applying its own writes to the cache
instead of reloading the tenant. Keys are whatever the store keys rows by
(an `EntityId`, or its text); per-row metadata is opaque here (a dict, or its
JSON text), read back through the store's own function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from redstring.vector.exact import NO_TYPE, row_norms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

_INITIAL_CAPACITY = 64


class TenantRows[K, M]:
    """A tenant's rows: a growable matrix plus the per-row bookkeeping.

    `matrix[:len(self)]`, `norms[:len(self)]` and `type_codes[:len(self)]`
    are the live rows, in the order of `keys`. Not thread-safe.
    """

    __slots__ = ("_rows", "keys", "matrix", "metadata", "norms", "type_codes", "types")

    def __init__(self, dimension: int, *, capacity: int = _INITIAL_CAPACITY) -> None:
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
    ) -> TenantRows[K, M]:
        """Rows built from a whole tenant read at once; `matrix` is kept, not copied."""
        rows: TenantRows[K, M] = cls(matrix.shape[1], capacity=0)
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

    def put_many(
        self,
        keys: Sequence[K],
        vectors: NDArray[np.float32],
        entity_types: Sequence[str | None],
        metadata: Sequence[M],
    ) -> None:
        """Write rows for distinct `keys`, replacing the rows they already have.

        Everything that can fail (growing the arrays) runs before the first
        row changes.
        """
        index = self.rows
        kept = len(self)
        self._grow(kept + sum(1 for key in keys if key not in index), kept)
        codes = [self.type_code(entity_type) for entity_type in entity_types]
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
        self.norms[rows] = row_norms(vectors)
        self.type_codes[rows] = codes

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
        self.keys.pop()
        self.metadata.pop()
        return True


def latest_by_key[T](keys: Sequence[T]) -> list[int]:
    """The index of the last occurrence of each distinct key, in first-seen order."""
    latest: dict[T, int] = {}
    for position, key in enumerate(keys):
        latest[key] = position
    return list(latest.values())
