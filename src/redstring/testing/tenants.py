"""The `TenantCounter` contract, shared by the graph and vector suites."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from redstring.ports.tenants import TenantCounter
from redstring.testing.factories import OTHER_TENANT, TENANT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import TenantId


class TenantCounterCompliance:
    """Every rule of `redstring.ports.TenantCounter`.

    A suite mixing it in implements `hold(store, tenant_id, numbers)`, which
    writes one record per number (its id `UUID(int=number)`), and
    `drop(store, tenant_id, number)`, which deletes one.
    """

    def new_counter(self) -> Any:
        raise NotImplementedError

    async def hold(self, store: Any, tenant_id: TenantId, numbers: Sequence[int]) -> None:
        raise NotImplementedError

    async def drop(self, store: Any, tenant_id: TenantId, number: int) -> bool:
        raise NotImplementedError

    async def test_an_empty_store_holds_no_tenant_and_counts_zero(self) -> None:
        store = self.new_counter()
        assert isinstance(store, TenantCounter)
        assert await store.tenants() == []
        assert await store.count(TENANT) == 0

    async def test_tenants_sharing_an_id_are_counted_apart_and_listed_by_id(self) -> None:
        store = self.new_counter()
        first, second = sorted([TENANT, OTHER_TENANT], key=str)
        await self.hold(store, second, [1])
        await self.hold(store, first, [1, 2, 2])
        assert await store.tenants() == [first, second]
        assert (await store.count(first), await store.count(second)) == (2, 1)
        assert await self.drop(store, first, 1)
        assert await store.count(first) == 1
        await store.delete_by_tenant(first)
        assert await store.tenants() == [second]

    @pytest.mark.parametrize("bad", [str(TENANT), None])
    async def test_a_count_of_something_not_a_tenant_id_is_refused(self, bad: object) -> None:
        with pytest.raises(ValueError, match=r"^tenant_id"):
            await self.new_counter().count(bad)
