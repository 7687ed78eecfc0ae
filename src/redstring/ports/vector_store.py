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

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.vector import VectorLike, VectorMatch, VectorRecord


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
