"""The in-memory vector store: exact search over one float32 matrix per tenant.

Each tenant's vectors are rows of one contiguous, growable `float32` matrix,
so a search is one matrix-vector product rather than a Python loop
(`redstring.vector.exact`). Vectors are therefore stored, and returned by
`get`, at float32 precision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from redstring.domain.vector import VectorRecord
from redstring.ports._vector_input import check_dimension, check_metadata
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorSearch, VectorStoreBase
from redstring.vector.exact import RowSearch, copy_metadata, entity_type_of
from redstring.vector.rows import (
    DEFAULT_ANN_THRESHOLD,
    TenantRows,
    check_ann_threshold,
    latest_by_key,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.vector import VectorMatch

type _Tenant = TenantRows[EntityId, dict[str, Any]]

#: Value types a shared metadata dict may hold. Not `float`: `0.0 == -0.0`,
#: so equal keys would not mean equal JSON.
_SHAREABLE: Final = frozenset((str, int, bool, type(None)))
#: At most this many distinct metadata dicts are shared per store.
_MAX_SHARED: Final = 4_096


class _SharedMetadata:
    """One stored copy per distinct flat metadata dict, shared by every row that has it.

    Metadata is usually a handful of scalars repeated across a tenant
    (`{"entity_type": "person"}`). The store never changes stored metadata
    and copies it on every read, so rows with equal flat metadata can hold
    the same dict: a write then skips the check and the copy, and the
    garbage collector has one dict to walk instead of one per row. A dict
    is shared only if its values are strings, integers, booleans or `None`,
    compared with their types (`1`, `True` and `1.0` are equal in Python).
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[tuple[tuple[str, type, object], ...], dict[str, Any]] = {}

    def get(self, metadata: object, field: str) -> dict[str, Any]:
        """The store's copy of `metadata`, checked as `check_metadata` checks it.

        Raises:
            ValueError: `metadata` is not a dict of plain JSON; `field` names it.
        """
        if type(metadata) is not dict or len(metadata) > 8:
            return check_metadata(metadata, field)
        key = tuple((name, type(value), value) for name, value in metadata.items())
        if not all(kind in _SHAREABLE for _, kind, _ in key):
            return check_metadata(metadata, field)
        held = self._held.get(key)
        if held is None:
            held = check_metadata(metadata, field)
            if len(self._held) < _MAX_SHARED:
                self._held[key] = held
        return held


class InMemoryVectorStore(AsyncClosable, VectorStoreBase):
    """A `VectorStore` held in process memory, searched exactly with numpy.

    Keyed `(tenant_id, entity_id)`. Writes validate the whole batch before
    storing any of it; reads return copies. Not thread-safe: use it from one
    event loop. A tenant of at least `ann_threshold` vectors is searched
    through an approximate (HNSW) index when the `ann` extra is installed,
    built on its first search; `None` keeps every search exact. See
    `redstring.vector.rows.DEFAULT_ANN_THRESHOLD`.

    Raises:
        ValueError: `dimension` is not a positive integer, or
            `ann_threshold` is neither `None` nor a positive integer.
    """

    def __init__(
        self, *, dimension: int, ann_threshold: int | None = DEFAULT_ANN_THRESHOLD
    ) -> None:
        self._dimension = check_dimension(dimension)
        self._ann_threshold = check_ann_threshold(ann_threshold)
        self._tenants: dict[TenantId, _Tenant] = {}
        self._shared_metadata = _SharedMetadata()

    async def _release(self) -> None:
        self._tenants.clear()

    def _tenant(self, tenant_id: TenantId) -> _Tenant:
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            tenant = self._tenants[tenant_id] = TenantRows(
                self._dimension, ann_threshold=self._ann_threshold
            )
        return tenant

    # -- writes ---------------------------------------------------------------

    async def _upsert(self, record: VectorRecord, rows: NDArray[np.float32]) -> None:
        metadata = record.metadata
        self._tenant(record.tenant_id).put_many(
            [record.entity_id], rows, [entity_type_of(metadata)], [metadata]
        )

    async def _upsert_many(
        self, batch: Sequence[VectorRecord], rows: NDArray[np.float32], norms: NDArray[np.float32]
    ) -> None:
        records = batch
        shared = self._shared_metadata
        stored = [
            shared.get(record.metadata, f"records[{index}].metadata")
            for index, record in enumerate(records)
        ]
        # A later record for the same key wins; each tenant is written in one go.
        by_tenant: dict[int, tuple[TenantId, list[int]]] = {}
        for index in latest_by_key([(r.tenant_id.int, r.entity_id.int) for r in records]):
            tenant_id = records[index].tenant_id
            group = by_tenant.get(tenant_id.int)
            if group is None:
                group = by_tenant[tenant_id.int] = (tenant_id, [])
            group[1].append(index)
        for tenant_id, indexes in by_tenant.values():
            every = len(indexes) == len(records)  # then `indexes` is 0, 1, 2, ...
            self._tenant(tenant_id).put_many(
                [records[index].entity_id for index in indexes],
                rows if every else rows[indexes],
                [entity_type_of(stored[index]) for index in indexes],
                [stored[index] for index in indexes],
                norms=norms if every else norms[indexes],
                adopt=True,
            )

    async def _delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        tenant = self._tenants.get(tenant_id)
        return tenant is not None and tenant.remove(entity_id)

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        tenant = self._tenants.pop(tenant_id, None)
        return 0 if tenant is None else len(tenant)

    # -- reads ----------------------------------------------------------------

    async def _held_tenants(self) -> list[TenantId]:
        return sorted((key for key, held in self._tenants.items() if len(held)), key=str)

    async def _count(self, tenant_id: TenantId) -> int:
        tenant = self._tenants.get(tenant_id)
        return 0 if tenant is None else len(tenant)

    async def _get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        tenant = self._tenants.get(tenant_id)
        row = None if tenant is None else tenant.rows.get(entity_id)
        if tenant is None or row is None:
            return None
        return VectorRecord(
            entity_id=entity_id,
            tenant_id=tenant_id,
            vector=tenant.matrix[row],
            metadata=copy_metadata(tenant.metadata[row]),
        )

    async def _search(self, search: VectorSearch, tenant_id: TenantId) -> list[VectorMatch]:
        query, k, entity_types, min_score = search
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            return []
        return tenant.search(
            RowSearch(
                tenant.keys,
                lambda row: copy_metadata(tenant.metadata[row]),
                query,
                k,
                tenant.allowed_types(entity_types),
                min_score,
            )
        )
