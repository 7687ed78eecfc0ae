"""The in-memory vector store: exact search over one float32 matrix per tenant.

Each tenant's vectors are rows of one contiguous, growable `float32` matrix,
so a search is one matrix-vector product rather than a Python loop. Vectors
are therefore stored, and returned by `get`, at float32 precision.

Search runs in two passes. The float32 pass scores every row and keeps the
rows that could be in the top `k`, with a margin for float32 rounding; the
exact pass rescores only those in float64, one row at a time, so two equal
vectors score exactly equally and the `str(entity_id)` tie-break decides
between them. (A BLAS product does not promise that: it may sum equal rows in
different orders and give them different last bits.)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.json_safety import check_json, copy_json
from redstring.domain.vector import VectorMatch, VectorRecord, cosine_to_score

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId, TenantId

_INITIAL_CAPACITY = 64
#: Type code of a record whose `entity_type` is missing or not a string: it
#: matches no `entity_types` filter.
_NO_TYPE = -1
#: Worst-case relative error of a float32 dot product is about `dimension`
#: units in the last place; the first pass keeps rows within twice that.
_FLOAT32_EPSILON = float(np.finfo(np.float32).eps)


def _check_vector(vector: Sequence[float], dimension: int) -> NDArray[np.float64]:
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


class _Tenant:
    """One tenant's rows: a growable matrix plus the per-row bookkeeping."""

    __slots__ = ("ids", "matrix", "metadata", "norms", "rows", "type_codes", "types")

    def __init__(self, dimension: int) -> None:
        self.matrix = np.empty((_INITIAL_CAPACITY, dimension), dtype=np.float32)
        self.norms = np.empty(_INITIAL_CAPACITY, dtype=np.float32)
        self.type_codes = np.empty(_INITIAL_CAPACITY, dtype=np.int32)
        self.ids: list[EntityId] = []
        self.metadata: list[dict[str, Any]] = []
        self.rows: dict[EntityId, int] = {}
        self.types: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _type_code(self, metadata: dict[str, Any]) -> int:
        entity_type = metadata.get("entity_type")
        if not isinstance(entity_type, str):
            return _NO_TYPE
        return self.types.setdefault(entity_type, len(self.types))

    def _grow(self, needed: int, keep: int) -> None:
        capacity = len(self.matrix)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        matrix = np.empty((capacity, self.matrix.shape[1]), dtype=np.float32)
        matrix[:keep] = self.matrix[:keep]
        norms = np.empty(capacity, dtype=np.float32)
        norms[:keep] = self.norms[:keep]
        type_codes = np.empty(capacity, dtype=np.int32)
        type_codes[:keep] = self.type_codes[:keep]
        self.matrix, self.norms, self.type_codes = matrix, norms, type_codes

    def put_many(
        self,
        entity_ids: Sequence[EntityId],
        vectors: NDArray[np.float32],
        metadata: Sequence[dict[str, Any]],
    ) -> None:
        """Write rows for distinct `entity_ids`, replacing the rows they already have."""
        kept = len(self)
        rows = np.empty(len(entity_ids), dtype=np.intp)
        for index, (entity_id, entry) in enumerate(zip(entity_ids, metadata, strict=True)):
            row = self.rows.get(entity_id)
            if row is None:
                row = self.rows[entity_id] = len(self.ids)
                self.ids.append(entity_id)
                self.metadata.append(entry)
            else:
                self.metadata[row] = entry
            rows[index] = row
        self._grow(len(self), kept)
        self.matrix[rows] = vectors
        self.norms[rows] = np.linalg.norm(vectors, axis=1)
        self.type_codes[rows] = [self._type_code(entry) for entry in metadata]

    def remove(self, entity_id: EntityId) -> bool:
        row = self.rows.pop(entity_id, None)
        if row is None:
            return False
        last = len(self) - 1
        if row != last:
            moved = self.ids[last]
            self.matrix[row] = self.matrix[last]
            self.norms[row] = self.norms[last]
            self.type_codes[row] = self.type_codes[last]
            self.ids[row] = moved
            self.metadata[row] = self.metadata[last]
            self.rows[moved] = row
        self.ids.pop()
        self.metadata.pop()
        return True


class InMemoryVectorStore:
    """A `VectorStore` held in process memory, searched exactly with numpy.

    Keyed `(tenant_id, entity_id)`. Writes validate the whole batch before
    storing any of it; reads return copies. Not thread-safe: use it from one
    event loop.

    Raises:
        ValueError: `dimension` is not a positive integer.
    """

    def __init__(self, *, dimension: int) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValueError(f"dimension must be a positive integer, got {dimension!r}")
        self._dimension = dimension
        self._tenants: dict[TenantId, _Tenant] = {}

    @property
    def dimension(self) -> int:
        """The length of every stored vector."""
        return self._dimension

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Nothing to release; present so every adapter has the same lifetime."""

    def _tenant(self, tenant_id: TenantId) -> _Tenant:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            tenant = self._tenants[tenant_id] = _Tenant(self._dimension)
        return tenant

    # -- writes ---------------------------------------------------------------

    async def upsert(
        self,
        entity_id: EntityId,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Store `vector` for the entity, replacing any previous one."""
        array = _check_vector(vector, self._dimension)
        stored = copy_json(check_json(metadata or {}, field="metadata"))
        vectors = array.astype(np.float32)[np.newaxis, :]
        self._tenant(tenant_id).put_many([entity_id], vectors, [stored])

    async def upsert_many(self, records: Sequence[VectorRecord]) -> None:
        """Store every record after checking them all; a later duplicate key wins."""
        if not records:
            return
        for index, record in enumerate(records):
            if not isinstance(record, VectorRecord):
                raise ValueError(f"records[{index}] is not a VectorRecord: {record!r}")
            if len(record.vector) != self._dimension:
                raise DimensionMismatchError(expected=self._dimension, actual=len(record.vector))
        matrix = np.asarray([record.vector for record in records], dtype=np.float64)
        if not np.isfinite(matrix).all():
            bad = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0])
            raise ValueError(f"records[{bad}].vector contains NaN or infinity")
        zero = np.flatnonzero(~matrix.any(axis=1))
        if zero.size:
            raise ValueError(f"records[{int(zero[0])}].vector is all zeros")
        rows = matrix.astype(np.float32)
        # A later record for the same key wins; each tenant is written in one go.
        latest = {(record.tenant_id, record.entity_id): n for n, record in enumerate(records)}
        by_tenant: dict[TenantId, list[int]] = {}
        for (tenant_id, _), index in latest.items():
            by_tenant.setdefault(tenant_id, []).append(index)
        for tenant_id, indexes in by_tenant.items():
            self._tenant(tenant_id).put_many(
                [records[index].entity_id for index in indexes],
                rows[indexes],
                [copy_json(records[index].metadata) for index in indexes],
            )

    async def delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity's vector; `True` if there was one."""
        tenant = self._tenants.get(tenant_id)
        return tenant is not None and tenant.remove(entity_id)

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every vector of the tenant; return how many there were."""
        tenant = self._tenants.pop(tenant_id, None)
        return 0 if tenant is None else len(tenant)

    # -- reads ----------------------------------------------------------------

    async def get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        """A copy of the stored record (vector at float32 precision), or `None`."""
        tenant = self._tenants.get(tenant_id)
        row = None if tenant is None else tenant.rows.get(entity_id)
        if tenant is None or row is None:
            return None
        return VectorRecord(
            entity_id=entity_id,
            tenant_id=tenant_id,
            vector=tenant.matrix[row].tolist(),
            metadata=copy_json(tenant.metadata[row]),
        )

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        min_score: float | None = None,
    ) -> list[VectorMatch]:
        """The `k` most similar vectors of the tenant, best first.

        Filters (`entity_types`, `min_score`) apply before `k`; ties break by
        `str(entity_id)`. See `redstring.ports.vector_store` for the contract.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        if min_score is not None and not 0.0 <= min_score <= 1.0:
            raise ValueError(f"min_score must be within 0..1, got {min_score!r}")
        # Rounded to float32 like every stored vector, so a vector searched
        # for itself scores as equal to itself.
        query = _check_vector(vector, self._dimension).astype(np.float32).astype(np.float64)
        if isinstance(entity_types, str):
            raise ValueError(
                f"entity_types must be a sequence of types, not the string {entity_types!r}"
            )
        tenant = self._tenants.get(tenant_id)
        if k == 0 or tenant is None or not len(tenant) or entity_types == []:
            return []
        candidates = self._candidates(tenant, query, k, entity_types, min_score)
        return self._rank_exactly(tenant, query, candidates, k, min_score)

    def _candidates(
        self,
        tenant: _Tenant,
        query: NDArray[np.float64],
        k: int,
        entity_types: Sequence[str] | None,
        min_score: float | None,
    ) -> NDArray[np.intp]:
        """Rows that may be in the top `k`: the float32 pass, with a rounding margin."""
        size = len(tenant)
        query32 = query.astype(np.float32)
        cosines = tenant.matrix[:size] @ query32
        cosines /= tenant.norms[:size] * np.float32(np.linalg.norm(query))
        margin = np.float32(4 * self._dimension * _FLOAT32_EPSILON)
        allowed: NDArray[np.bool_] | None = None
        if entity_types is not None:
            codes = [tenant.types[name] for name in set(entity_types) if name in tenant.types]
            allowed = np.isin(tenant.type_codes[:size], codes)
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
        self,
        tenant: _Tenant,
        query: NDArray[np.float64],
        rows: NDArray[np.intp],
        k: int,
        min_score: float | None,
    ) -> list[VectorMatch]:
        """Rescore `rows` in float64, row by row, and order them totally."""
        query_norm = math.sqrt(float(query @ query))
        scored: list[tuple[float, str, int]] = []
        for row in rows.tolist():
            stored = tenant.matrix[row].astype(np.float64)
            cosine = float(stored @ query) / (math.sqrt(float(stored @ stored)) * query_norm)
            score = cosine_to_score(cosine)
            if min_score is None or score >= min_score:
                scored.append((-score, str(tenant.ids[row]), row))
        scored.sort()
        return [
            VectorMatch(
                entity_id=tenant.ids[row],
                score=-negative_score,
                metadata=copy_json(tenant.metadata[row]),
            )
            for negative_score, _, row in scored[:k]
        ]
