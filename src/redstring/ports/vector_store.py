"""The vector store port.

Keyed `(tenant_id, entity_id)`: two tenants may hold the same entity id and
never see each other's vector.

`search` contract, which every adapter's compliance suite checks:

- best first, at most `k`; `k == 0` gives `[]`; `k < 0` raises `ValueError`;
- `score` is cosine mapped onto `0..1` (`redstring.domain.vector`), never a
  distance; `min_score` drops matches below it;
- `entity_types` is `None` for no filter and `[]` for "nothing matches"; it
  is compared, exactly and case-sensitively, against
  `metadata["entity_type"]`. A record whose `entity_type` is missing or not a
  string matches no filter -- it is never coerced with `str()`;
- filters apply **before** `k`: truncating first and filtering after returns
  too few results, or none, while matches exist;
- ties break by `str(entity_id)` ascending, so the order is total;
- a vector of the wrong length raises `DimensionMismatchError`; a zero, NaN
  or infinite vector raises `ValueError`, judged at float32, the stored
  precision, by `upsert` and `upsert_many` alike;
- a vector is any `VectorLike`: a sequence of floats or a float buffer (a
  float32 numpy array is taken without a step per component); `get` returns
  it as an immutable `Vector`;
- a refused write changes nothing: a batch is checked whole (vectors and
  metadata) before any of it is written.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from redstring.domain.validation import check_entity_id, check_sequence, check_tenant_id
from redstring.domain.vector import VectorRecord
from redstring.ports._vector_input import (
    check_metadata,
    check_query,
    check_rows,
    check_rows_and_norms,
)
from redstring.ports.tenants import TenantCounterBase

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.vector import VectorLike, VectorMatch


@runtime_checkable
class VectorReader(Protocol):
    """Reads vectors and searches them."""

    @property
    def dimension(self) -> int:
        """The length every stored vector has. Constant."""
        ...

    async def get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        """The stored record, or `None`. A copy: mutating it changes nothing stored."""
        ...

    async def search(
        self,
        vector: VectorLike,
        tenant_id: TenantId,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        min_score: float | None = None,
    ) -> list[VectorMatch]:
        """The `k` stored vectors most similar to `vector`, best first.

        See the module docstring for the full contract.
        """
        ...


@runtime_checkable
class VectorWriter(Protocol):
    """Writes vectors."""

    async def upsert(
        self,
        entity_id: EntityId,
        vector: VectorLike,
        tenant_id: TenantId,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Store `vector` for the entity, replacing any previous one."""
        ...

    async def upsert_many(self, records: Sequence[VectorRecord]) -> None:
        """Store every record, validating all of them before writing any.

        A later record for the same key wins over an earlier one.
        """
        ...

    async def delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity's vector. `True` if there was one."""
        ...


@runtime_checkable
class VectorPurge(Protocol):
    """Removes a whole tenant."""

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every vector of the tenant; return how many there were."""
        ...


@runtime_checkable
class VectorStore(VectorReader, VectorWriter, VectorPurge, Protocol):
    """Every vector store capability together."""


class VectorSearch(NamedTuple):
    """A search as `VectorStoreBase` hands it to `_search`, every field checked.

    `query` is the vector rounded to float32 (held as float64); `k` is at
    least 1; `entity_types` is `None` (no filter) or non-empty; `min_score`
    is `None` or within `0..1`.
    """

    query: NDArray[np.float64]
    k: int
    entity_types: Sequence[str] | None
    min_score: float | None


class VectorStoreBase(VectorStore, TenantCounterBase):
    """A `VectorStore` whose public methods check their arguments, then call its hooks.

    Every check of the module's contract runs here, once, so every store
    built on it refuses the same input with the same error: ids and tenant,
    `k`, `entity_types` and `min_score`, and every vector at float32 (the
    stored precision), a batch whole before any of it is written. An
    adapter subclasses `AsyncClosable` and this class, sets `_dimension`,
    and implements the hooks, which receive checked arguments. A class that
    implements `VectorStore`'s methods itself is a vector store all the same.
    """

    _dimension: int

    @property
    def dimension(self) -> int:
        """The length every stored vector has. Constant."""
        return self._dimension

    async def upsert(
        self,
        entity_id: EntityId,
        vector: VectorLike,
        tenant_id: TenantId,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Store `vector` for the entity, replacing any previous one.

        Checked as `upsert_many` checks a record: at float32, the stored
        precision, so a component beyond its range or a vector that rounds
        to zero is refused, and nothing is written.
        """
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        rows = check_rows([vector], self._dimension, field="vector")
        stored = {} if metadata is None else check_metadata(metadata, "metadata")
        record = VectorRecord(
            entity_id=entity_id, tenant_id=tenant_id, vector=rows[0], metadata=stored
        )
        await self._upsert(record, rows)

    async def upsert_many(self, records: Sequence[VectorRecord]) -> None:
        """Store every record after checking them all; a later duplicate key wins."""
        check_sequence(records, argument="records")
        for index, record in enumerate(records):
            if not isinstance(record, VectorRecord):
                raise ValueError(f"records[{index}] is not a VectorRecord: {record!r}")
        if not records:
            return
        rows, norms = check_rows_and_norms([record.vector for record in records], self._dimension)
        await self._upsert_many(records, rows, norms)

    async def delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove the entity's vector. `True` if there was one."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        return await self._delete(entity_id, tenant_id)

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every vector of the tenant; return how many there were."""
        check_tenant_id(tenant_id)
        return await self._delete_by_tenant(tenant_id)

    async def get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        """The stored record (vector at float32 precision), or `None`. A copy."""
        check_entity_id(entity_id), check_tenant_id(tenant_id)
        return await self._get(entity_id, tenant_id)

    async def search(
        self,
        vector: VectorLike,
        tenant_id: TenantId,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        min_score: float | None = None,
    ) -> list[VectorMatch]:
        """The `k` stored vectors most similar to `vector`, best first.

        Filters (`entity_types`, `min_score`) apply before `k`; ties break by
        `str(entity_id)`. See the module docstring for the full contract.
        """
        check_tenant_id(tenant_id)
        query = check_query(
            vector, self._dimension, k=k, entity_types=entity_types, min_score=min_score
        )
        if k == 0 or (entity_types is not None and not entity_types):
            return []
        return await self._search(VectorSearch(query, k, entity_types, min_score), tenant_id)

    @abstractmethod
    async def _upsert(self, record: VectorRecord, rows: NDArray[np.float32]) -> None:
        """Store one record: `rows` is its checked vector, its metadata checked and private."""

    @abstractmethod
    async def _upsert_many(
        self, batch: Sequence[VectorRecord], rows: NDArray[np.float32], norms: NDArray[np.float32]
    ) -> None:
        """Store a non-empty batch: `rows[i]` is `batch[i]`'s vector, `norms[i]` its length.

        `rows` is the caller's own, writable. Each record's metadata is not
        yet checked: a store checks (or encodes) it whole before writing.
        """

    @abstractmethod
    async def _delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        """Remove one vector; `True` if there was one."""

    @abstractmethod
    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove the tenant's vectors; return how many there were."""

    @abstractmethod
    async def _get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        """The stored record, or `None`."""

    @abstractmethod
    async def _search(self, search: VectorSearch, tenant_id: TenantId) -> list[VectorMatch]:
        """The best `search.k` matches of a checked search."""
