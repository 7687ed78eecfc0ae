"""The in-memory vector store: exact search over one float32 matrix per tenant.

Each tenant's vectors are rows of one contiguous, growable `float32` matrix,
so a search is one matrix-vector product rather than a Python loop
(`redstring.vector.exact`). Vectors are therefore stored, and returned by
`get`, at float32 precision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from redstring.domain.json_safety import check_json, copy_json
from redstring.domain.validation import (
    check_entity_id,
    check_metadata,
    check_sequence,
    check_tenant_id,
)
from redstring.domain.vector import VectorMatch, VectorRecord
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorStore
from redstring.vector.exact import (
    NO_TYPE,
    check_batch,
    check_dimension,
    check_query,
    check_vector,
    entity_type_of,
    search_exactly,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId, TenantId

_INITIAL_CAPACITY = 64


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
        entity_type = entity_type_of(metadata)
        if entity_type is None:
            return NO_TYPE
        return self.types.setdefault(entity_type, len(self.types))

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


class InMemoryVectorStore(AsyncClosable, VectorStore):
    """A `VectorStore` held in process memory, searched exactly with numpy.

    Keyed `(tenant_id, entity_id)`. Writes validate the whole batch before
    storing any of it; reads return copies. Not thread-safe: use it from one
    event loop.

    Raises:
        ValueError: `dimension` is not a positive integer.
    """

    def __init__(self, *, dimension: int) -> None:
        self._dimension = check_dimension(dimension)
        self._tenants: dict[TenantId, _Tenant] = {}

    @property
    def dimension(self) -> int:
        """The length of every stored vector."""
        return self._dimension

    async def _release(self) -> None:
        self._tenants.clear()

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
        check_entity_id(entity_id), check_tenant_id(tenant_id), check_metadata(metadata)
        array = check_vector(vector, self._dimension)
        stored = copy_json(check_json(metadata or {}, field="metadata"))
        vectors = array.astype(np.float32)[np.newaxis, :]
        self._tenant(tenant_id).put_many([entity_id], vectors, [stored])

    async def upsert_many(self, records: Sequence[VectorRecord]) -> None:
        """Store every record after checking them all; a later duplicate key wins."""
        check_sequence(records, argument="records")
        rows = check_batch(records, self._dimension)
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
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        tenant = self._tenants.get(tenant_id)
        return tenant is not None and tenant.remove(entity_id)

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every vector of the tenant; return how many there were."""
        check_tenant_id(tenant_id)
        tenant = self._tenants.pop(tenant_id, None)
        return 0 if tenant is None else len(tenant)

    # -- reads ----------------------------------------------------------------

    async def get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        """A copy of the stored record (vector at float32 precision), or `None`."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
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
        check_tenant_id(tenant_id)
        query = check_query(
            vector, self._dimension, k=k, entity_types=entity_types, min_score=min_score
        )
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        size = len(tenant)
        allowed_types = None
        if entity_types is not None:
            allowed_types = [tenant.types[name] for name in entity_types if name in tenant.types]
        return search_exactly(
            tenant.matrix[:size],
            tenant.norms[:size],
            tenant.type_codes[:size],
            tenant.ids,
            lambda row: copy_json(tenant.metadata[row]),
            query,
            k=k,
            allowed_types=allowed_types,
            min_score=min_score,
        )
