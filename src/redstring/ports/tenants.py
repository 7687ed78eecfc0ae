"""Tenant counts: a capability every store redstring ships offers beside its port."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from redstring.domain.validation import check_tenant_id

if TYPE_CHECKING:
    from redstring.domain.ids import TenantId


@runtime_checkable
class TenantCounter(Protocol):
    """Says which tenants a store holds records of, and how many each holds.

    A record is what the store keys by `(tenant_id, id)`: an entity in a
    graph store (merged-away ids and relationships are not counted), a
    vector in a vector store. Read-only, and answered from the store's
    index or a count query, never by reading the records.
    """

    async def tenants(self) -> list[TenantId]:
        """Every tenant holding at least one record, ordered by `str(id)`."""
        ...

    async def count(self, tenant_id: TenantId) -> int:
        """How many records the tenant holds; 0 for a tenant the store has never seen.

        Raises:
            ValueError: `tenant_id` is not a UUID.
        """
        ...


class TenantCounterBase(ABC):
    """`TenantCounter`, its tenant id checked once; a store base mixes it in.

    The store implements `_held_tenants()` and `_count(tenant_id)`.
    """

    async def tenants(self) -> list[TenantId]:
        """Every tenant holding at least one record, ordered by `str(id)`."""
        return await self._held_tenants()

    async def count(self, tenant_id: TenantId) -> int:
        """How many records the tenant holds; 0 for a tenant never seen."""
        check_tenant_id(tenant_id)
        return await self._count(tenant_id)

    @abstractmethod
    async def _held_tenants(self) -> list[TenantId]:
        """The tenants holding any record, ordered by `str(id)`."""

    @abstractmethod
    async def _count(self, tenant_id: TenantId) -> int:
        """How many records the (checked) tenant holds."""
