"""A bounded cache of tenants' rows, each tagged with the generation it reflects.

A store that keeps its vectors elsewhere (a SQLite file) searches a tenant
from its rows in memory. Each tenant's rows carry the generation, a counter
the store bumps in the same transaction as every write to the tenant, that
they are current for. A store applies its own writes to the cached rows and
moves their generation on; rows whose generation another writer moved are
dropped and reloaded. At most `capacity` tenants are kept, the least
recently used dropped first. Nothing here does I/O or locking.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from redstring.vector.rows import TenantRows

DEFAULT_CACHED_TENANTS: Final = 8
"""How many tenants a store keeps in memory unless told otherwise."""


def check_capacity(capacity: int) -> int:
    """Return `capacity`, or raise `ValueError` unless it is a positive `int`."""
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"cached_tenants must be a positive integer, got {capacity!r}")
    return capacity


@dataclass(slots=True)
class CachedTenant[K, M]:
    """A tenant's rows and the generation they are current for."""

    generation: int
    rows: TenantRows[K, M]


class TenantCache[K, M]:
    """At most `capacity` tenants' rows, least recently used dropped first."""

    __slots__ = ("_capacity", "_tenants")

    def __init__(self, capacity: int = DEFAULT_CACHED_TENANTS) -> None:
        self._capacity = check_capacity(capacity)
        self._tenants: OrderedDict[str, CachedTenant[K, M]] = OrderedDict()

    def __contains__(self, tenant: object) -> bool:
        return tenant in self._tenants

    def tenants(self) -> list[str]:
        """The cached tenants, least recently used first."""
        return list(self._tenants)

    def get(self, tenant: str) -> CachedTenant[K, M] | None:
        """The tenant's entry, marked as just used, or `None`."""
        entry = self._tenants.get(tenant)
        if entry is not None:
            self._tenants.move_to_end(tenant)
        return entry

    def peek(self, tenant: str) -> CachedTenant[K, M] | None:
        """The tenant's entry without marking it used, or `None`."""
        return self._tenants.get(tenant)

    def put(self, tenant: str, generation: int, rows: TenantRows[K, M]) -> CachedTenant[K, M]:
        """Cache `rows` as the tenant's, at `generation`, evicting past the capacity."""
        entry = self._tenants[tenant] = CachedTenant(generation, rows)
        self._tenants.move_to_end(tenant)
        while len(self._tenants) > self._capacity:
            self._tenants.popitem(last=False)
        return entry

    def drop(self, tenant: str) -> None:
        """Forget the tenant, if it is cached."""
        self._tenants.pop(tenant, None)

    def clear(self) -> None:
        """Forget every tenant."""
        self._tenants.clear()
