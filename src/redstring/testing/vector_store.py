"""The `VectorStore` contract, as a suite every adapter's tests subclass.

Subclass `VectorStoreCompliance` in a `Test...` class and implement
`new_store(dimension)`; every test here then runs against that adapter. The
suite is the sum of one suite per capability (`VectorReaderWriterCompliance`,
`VectorSearchCompliance`, `VectorPurgeCompliance`,
`VectorTenantCounterCompliance`): a store offering fewer capabilities
subclasses only the ones it offers.
Hypothesis properties build a fresh store per example.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.limits import MAX_LIMIT
from redstring.domain.vector import VectorRecord
from redstring.ports.vector_store import VectorStore
from redstring.testing.factories import OTHER_TENANT, TENANT
from redstring.testing.lifetime import StoreLifetimeCompliance
from redstring.testing.support import property_settings, run
from redstring.testing.tenants import TenantCounterCompliance

if TYPE_CHECKING:
    from collections.abc import Sequence


DIMENSION = 384
PROPERTY_SETTINGS = property_settings(40)


def entity_id(n: int) -> EntityId:
    """A fixed id whose string order is its number's order."""
    return EntityId(UUID(int=n))


def basis(index: int, dimension: int = DIMENSION, scale: float = 1.0) -> list[float]:
    """A vector along one axis: orthogonal to every other axis."""
    vector = [0.0] * dimension
    vector[index] = scale
    return vector


def towards(index: int, weight: float, dimension: int = DIMENSION) -> list[float]:
    """Axis 0 plus `weight` along `index`: closer to axis 0 the smaller the weight."""
    vector = basis(0, dimension)
    vector[index] = weight
    return vector


async def _held(store: VectorStore, n: int, tenant_id: TenantId = TENANT) -> VectorRecord:
    """The record `store` holds for `entity_id(n)` in `tenant_id`; fails the test when none is."""
    record = await store.get(entity_id(n), tenant_id)
    assert record is not None, f"no vector held for entity_id({n})"
    return record


finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, width=32)
safe_keys = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=5)
vectors = st.lists(finite, min_size=4, max_size=4).filter(lambda v: any(abs(x) > 1e-3 for x in v))


class VectorReaderWriterCompliance:
    """The rules of `VectorWriter` and `VectorReader.get`: round trips, copies, refused writes."""

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        raise NotImplementedError

    @PROPERTY_SETTINGS
    @given(
        vector=vectors,
        metadata=st.dictionaries(safe_keys, st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    )
    @example(vector=[1.0, 0.0, 0.0, 0.0], metadata={})
    def test_a_stored_vector_reads_back_at_float32_precision(
        self, vector: list[float], metadata: dict[str, int]
    ) -> None:
        async def scenario() -> None:
            store = self.new_store(4)
            await store.upsert(entity_id(1), vector, TENANT, metadata=metadata)
            record = await _held(store, 1)
            assert record.vector == pytest.approx(vector, rel=1e-6, abs=1e-30)
            assert record.metadata == metadata
            assert record.tenant_id == TENANT

        run(scenario())

    async def test_the_last_write_wins(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "a"})
        await store.upsert(entity_id(1), basis(1), TENANT, metadata={"entity_type": "b"})
        record = await _held(store, 1)
        assert record.vector == basis(1)
        assert record.metadata == {"entity_type": "b"}
        matches = await store.search(basis(1), TENANT, k=10)
        assert [match.entity_id for match in matches] == [entity_id(1)]

    async def test_mutating_what_was_written_or_read_changes_nothing_stored(self) -> None:
        store = self.new_store()
        metadata: dict[str, Any] = {"entity_type": "person", "tags": ["a"]}
        vector = basis(0)
        await store.upsert(entity_id(1), vector, TENANT, metadata=metadata)
        metadata["tags"].append("written")
        vector[0] = 5.0
        record = await _held(store, 1)
        record.metadata["tags"].append("read")
        with pytest.raises(TypeError):
            record.vector[0] = 7.0  # type: ignore[index]
        with pytest.raises(ValueError, match="read-only"):
            np.asarray(record.vector)[0] = 7.0
        [match] = await store.search(basis(0), TENANT, k=1)
        match.metadata["tags"].append("matched")
        again = await _held(store, 1)
        assert again.vector == basis(0)
        assert again.metadata == {"entity_type": "person", "tags": ["a"]}

    async def test_a_float32_array_is_stored_as_a_copy(self) -> None:
        store = self.new_store()
        matrix = np.zeros((2, DIMENSION), dtype=np.float32)
        matrix[:, 0] = 1.0
        await store.upsert(entity_id(1), matrix[0], TENANT)
        await store.upsert_many(
            [VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=matrix[1])]
        )
        matrix[:, 0], matrix[:, 1] = 0.0, 1.0
        for n in (1, 2):
            record = await _held(store, n)
            assert record.vector == basis(0)
        matches = await store.search(basis(0), TENANT, k=2)
        assert [match.score for match in matches] == [1.0, 1.0]

    async def test_a_missing_vector_reads_as_none(self) -> None:
        assert await self.new_store().get(entity_id(1), TENANT) is None

    async def test_two_tenants_holding_the_same_entity_id_never_cross(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "mine"})
        await store.upsert(entity_id(1), basis(1), OTHER_TENANT, metadata={"entity_type": "its"})
        mine = await _held(store, 1)
        assert mine.vector == basis(0)
        [match] = await store.search(basis(1), TENANT, k=5)
        assert match.metadata == {"entity_type": "mine"}
        assert match.score == pytest.approx(0.5)
        assert await store.delete(entity_id(1), TENANT)
        assert await store.get(entity_id(1), OTHER_TENANT) is not None

    async def test_delete_removes_one_vector_and_reports_whether_it_existed(self) -> None:
        store = self.new_store()
        for n in range(1, 4):
            await store.upsert(entity_id(n), towards(n, 0.1 * n), TENANT)
        assert await store.delete(entity_id(1), TENANT)
        assert not await store.delete(entity_id(1), TENANT)
        matches = await store.search(basis(0), TENANT, k=10)
        assert [match.entity_id for match in matches] == [entity_id(2), entity_id(3)]
        assert await store.get(entity_id(3), TENANT) is not None

    async def test_a_wrong_length_vector_names_both_dimensions(self) -> None:
        store = self.new_store()
        with pytest.raises(DimensionMismatchError) as raised:
            await store.upsert(entity_id(1), [1.0] * 8, TENANT)
        assert (raised.value.expected, raised.value.actual) == (DIMENSION, 8)
        with pytest.raises(DimensionMismatchError, match=str(DIMENSION)):
            await store.search([1.0] * 8, TENANT)

    @pytest.mark.parametrize(
        "bad",
        [
            pytest.param([0.0] * DIMENSION, id="zero"),
            pytest.param([math.nan] + [1.0] * (DIMENSION - 1), id="nan"),
            pytest.param([math.inf] + [1.0] * (DIMENSION - 1), id="inf"),
        ],
    )
    async def test_a_degenerate_vector_is_refused_on_write_and_on_search(
        self, bad: list[float]
    ) -> None:
        store = self.new_store()
        with pytest.raises(ValueError, match="vector"):
            await store.upsert(entity_id(1), bad, TENANT)
        with pytest.raises(ValueError, match="vector"):
            await store.search(bad, TENANT)
        assert await store.get(entity_id(1), TENANT) is None

    async def test_a_batch_with_one_bad_record_writes_nothing(self) -> None:
        store = self.new_store()
        good = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(0))
        for bad_vector in ([0.0] * DIMENSION, [1.0] * 3, [math.nan] * DIMENSION):
            bad = VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=bad_vector)
            with pytest.raises((ValueError, DimensionMismatchError)):
                await store.upsert_many([good, bad])
            assert await store.get(entity_id(1), TENANT) is None

    @pytest.mark.parametrize(
        "component",
        [
            pytest.param(1e300, id="beyond-float32"),
            pytest.param(-1e39, id="just-beyond-float32"),
            pytest.param(1e-50, id="rounds-to-zero"),
        ],
    )
    async def test_upsert_and_upsert_many_refuse_what_float32_cannot_hold(
        self, component: float
    ) -> None:
        store = self.new_store()
        vector = [component] + [0.0] * (DIMENSION - 1)
        with pytest.raises(ValueError, match="vector"):
            await store.upsert(entity_id(1), vector, TENANT)
        record = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=vector)
        with pytest.raises(ValueError, match=r"records\[0\]\.vector"):
            await store.upsert_many([record])
        assert await store.get(entity_id(1), TENANT) is None

    async def test_a_vector_longer_than_float32_allows_is_refused(self) -> None:
        store = self.new_store()
        largest = float(np.finfo(np.float32).max)
        vector = [largest, largest] + [0.0] * (DIMENSION - 2)
        with pytest.raises(ValueError, match="longer than float32"):
            await store.upsert(entity_id(1), vector, TENANT)
        assert await store.get(entity_id(1), TENANT) is None

    async def test_the_largest_and_smallest_float32_values_are_stored(self) -> None:
        store = self.new_store()
        largest = float(np.finfo(np.float32).max)
        await store.upsert(entity_id(1), [largest] + [0.0] * (DIMENSION - 1), TENANT)
        await store.upsert(entity_id(2), [1e-45] + [0.0] * (DIMENSION - 1), TENANT)
        matches = await store.search(basis(0), TENANT, k=2)
        assert [match.score for match in matches] == [1.0, 1.0]

    async def test_bad_metadata_before_a_good_record_is_refused_and_writes_nothing(
        self,
    ) -> None:
        store = self.new_store()
        await store.upsert(entity_id(9), basis(3), TENANT, metadata={"entity_type": "kept"})
        bad = VectorRecord(entity_id=entity_id(1), tenant_id=OTHER_TENANT, vector=basis(0))
        good = VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=basis(1))
        # A record's dict can be changed after the record checked it.
        bad.metadata["when"] = object()
        with pytest.raises(ValueError, match=r"records\[0\]\.metadata"):
            await store.upsert_many([bad, good])
        looped: dict[str, Any] = {"entity_type": "person"}
        looped["self"] = looped
        with pytest.raises(ValueError, match="metadata"):
            await store.upsert(entity_id(3), basis(2), TENANT, metadata=looped)
        for bad_metadata in ({"at": math.nan}, {1: "x"}, ["entity_type"]):
            with pytest.raises(ValueError, match="metadata"):
                await store.upsert(entity_id(3), basis(2), TENANT, metadata=bad_metadata)  # type: ignore[arg-type]
        for n, tenant in ((1, OTHER_TENANT), (2, TENANT), (3, TENANT)):
            assert await store.get(entity_id(n), tenant) is None
        [match] = await store.search(basis(3), TENANT, k=5)
        assert (match.entity_id, match.metadata) == (entity_id(9), {"entity_type": "kept"})
        assert await store.search(basis(0), OTHER_TENANT, k=5) == []

    async def test_a_batch_writes_every_record_and_a_later_duplicate_wins(self) -> None:
        store = self.new_store()
        await store.upsert_many(
            [
                VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(0)),
                VectorRecord(entity_id=entity_id(1), tenant_id=OTHER_TENANT, vector=basis(2)),
                VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(1)),
            ]
        )
        mine, theirs = await _held(store, 1), await _held(store, 1, OTHER_TENANT)
        assert mine.vector == basis(1)
        assert theirs.vector == basis(2)
        await store.upsert_many([])

    async def test_the_dimension_is_the_one_it_was_made_with(self) -> None:
        assert self.new_store(16).dimension == 16


class VectorSearchCompliance:
    """The rules of `VectorReader.search`: order, ties, filters before `k`, bounds."""

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        raise NotImplementedError

    async def test_a_search_of_an_unknown_tenant_is_empty(self) -> None:
        assert await self.new_store().search(basis(0), TenantId(uuid4())) == []

    async def test_search_is_best_first_with_the_pinned_score_scale(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT)
        await store.upsert(entity_id(2), basis(1), TENANT)
        await store.upsert(entity_id(3), basis(0, scale=-2.0), TENANT)
        matches = await store.search(basis(0, scale=3.0), TENANT, k=3)
        assert [match.entity_id for match in matches] == [entity_id(1), entity_id(2), entity_id(3)]
        assert [match.score for match in matches] == pytest.approx([1.0, 0.5, 0.0], abs=1e-6)

    async def test_ties_break_by_ascending_id_string(self) -> None:
        store = self.new_store()
        ids = [EntityId(uuid4()) for _ in range(50)]
        for each in ids:
            await store.upsert(each, basis(0), TENANT)
        matches = await store.search(basis(0), TENANT, k=7)
        assert [str(match.entity_id) for match in matches] == sorted(map(str, ids))[:7]

    async def test_a_tie_straddling_k_is_cut_by_id_not_by_insertion_order(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(9), basis(0), TENANT)
        await store.upsert(entity_id(1), towards(1, 1.0), TENANT)
        await store.upsert(entity_id(3), basis(0), TENANT)
        await store.upsert(entity_id(2), basis(0), TENANT)
        matches = await store.search(basis(0), TENANT, k=2)
        assert [match.entity_id for match in matches] == [entity_id(2), entity_id(3)]

    @PROPERTY_SETTINGS
    @given(count=st.integers(min_value=0, max_value=12), k=st.integers(min_value=0, max_value=15))
    @example(count=0, k=0)
    @example(count=5, k=5)
    @example(count=5, k=4)
    @example(count=1, k=0)
    def test_search_returns_min_of_k_and_the_tenant_size(self, count: int, k: int) -> None:
        async def scenario() -> None:
            store = self.new_store(4)
            for n in range(count):
                await store.upsert(entity_id(n + 1), [1.0, float(n), 0.5, 0.0], TENANT)
            matches = await store.search([1.0, 0.0, 0.0, 0.0], TENANT, k=k)
            assert len(matches) == min(k, count)
            keys = [(-match.score, str(match.entity_id)) for match in matches]
            assert keys == sorted(keys)
            assert all(0.0 <= match.score <= 1.0 for match in matches)

        run(scenario())

    async def test_entity_types_filter_applies_before_k(self) -> None:
        """k=1 with a non-matching record ranked above a matching one."""
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "org"})
        await store.upsert(
            entity_id(2), towards(1, 0.5), TENANT, metadata={"entity_type": "person"}
        )
        matches = await store.search(basis(0), TENANT, k=1, entity_types=["person"])
        assert [match.entity_id for match in matches] == [entity_id(2)]

    async def test_entity_types_none_is_no_filter_and_empty_matches_nothing(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "org"})
        assert len(await store.search(basis(0), TENANT, entity_types=None)) == 1
        assert await store.search(basis(0), TENANT, entity_types=[]) == []

    async def test_entity_types_compare_exactly_and_never_coerce(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "Person"})
        await store.upsert(entity_id(2), basis(0), TENANT, metadata={"entity_type": 7})
        await store.upsert(entity_id(3), basis(0), TENANT, metadata={})
        assert await store.search(basis(0), TENANT, entity_types=["person"]) == []
        assert await store.search(basis(0), TENANT, entity_types=["7"]) == []
        found = await store.search(basis(0), TENANT, entity_types=["Person", "absent"])
        assert [match.entity_id for match in found] == [entity_id(1)]

    async def test_min_score_drops_weaker_matches_before_k(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(1), TENANT)
        await store.upsert(entity_id(2), basis(0), TENANT)
        await store.upsert(entity_id(3), basis(0, scale=-1.0), TENANT)
        matches = await store.search(basis(0), TENANT, k=10, min_score=0.5)
        assert [match.entity_id for match in matches] == [entity_id(2), entity_id(1)]
        exact = await store.search(basis(0), TENANT, k=10, min_score=1.0)
        assert [match.entity_id for match in exact] == [entity_id(2)]

    async def test_k_zero_is_empty_and_a_negative_k_raises(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT)
        assert await store.search(basis(0), TENANT, k=0) == []
        with pytest.raises(ValueError, match="-1"):
            await store.search(basis(0), TENANT, k=-1)

    async def test_a_huge_k_returns_what_there_is(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT)
        assert len(await store.search(basis(0), TENANT, k=MAX_LIMIT)) == 1

    @pytest.mark.parametrize(
        ("arguments", "named"),
        [
            ({"k": MAX_LIMIT + 1}, "k"),
            ({"k": 2**64}, "k"),
            ({"k": True}, "k"),
            ({"k": 1.0}, "k"),
            ({"k": "3"}, "k"),
            ({"min_score": "0.5"}, "min_score"),
            ({"min_score": math.nan}, "min_score"),
            ({"min_score": True}, "min_score"),
            ({"entity_types": [1]}, r"entity_types\[0\]"),
            ({"entity_types": ["\ud800"]}, r"entity_types\[0\]"),
            ({"entity_types": {"person"}}, "entity_types"),
            ({"entity_types": "person"}, "entity_types"),
        ],
    )
    async def test_a_search_argument_of_the_wrong_type_or_past_its_bound_is_refused(
        self, arguments: dict[str, Any], named: str
    ) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "person"})
        with pytest.raises(ValueError, match=rf"^{named}"):
            await store.search(basis(0), TENANT, **arguments)


class VectorPurgeCompliance:
    """The rules of `VectorPurge`: a whole tenant removed, and counted."""

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        raise NotImplementedError

    async def test_deleting_a_tenant_leaves_the_other_and_counts_what_it_removed(self) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT)
        await store.upsert(entity_id(2), basis(1), TENANT)
        await store.upsert(entity_id(1), basis(0), OTHER_TENANT)
        assert await store.delete_by_tenant(TENANT) == 2
        assert await store.delete_by_tenant(TENANT) == 0
        assert await store.search(basis(0), TENANT) == []
        assert len(await store.search(basis(0), OTHER_TENANT)) == 1


class VectorTenantCounterCompliance(TenantCounterCompliance):
    """The rules of `redstring.ports.TenantCounter`, for a vector store: vectors per tenant."""

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        raise NotImplementedError

    def new_counter(self) -> VectorStore:
        return self.new_store()

    async def hold(self, store: VectorStore, tenant_id: TenantId, numbers: Sequence[int]) -> None:
        await store.upsert_many(
            [
                VectorRecord(entity_id=entity_id(n), tenant_id=tenant_id, vector=basis(n))
                for n in numbers
            ]
        )

    async def drop(self, store: VectorStore, tenant_id: TenantId, number: int) -> bool:
        return await store.delete(entity_id(number), tenant_id)


class VectorStoreCompliance(
    VectorReaderWriterCompliance,
    VectorSearchCompliance,
    VectorPurgeCompliance,
    VectorTenantCounterCompliance,
    StoreLifetimeCompliance[VectorStore],
):
    """Every rule of `redstring.ports.VectorStore`; subclass and provide `new_store`."""

    port = VectorStore

    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        raise NotImplementedError

    # -- the edges: ids and bounds ---------------------------------------------

    @pytest.mark.parametrize("bad", [str(TENANT), TENANT.int, None])
    async def test_a_tenant_id_that_is_not_a_uuid_is_refused_by_every_method(
        self, bad: object
    ) -> None:
        store = self.new_store()
        await store.upsert(entity_id(1), basis(0), TENANT)
        calls = [
            store.upsert(entity_id(2), basis(1), bad),  # type: ignore[arg-type]
            store.get(entity_id(1), bad),  # type: ignore[arg-type]
            store.search(basis(0), bad),  # type: ignore[arg-type]
            store.delete(entity_id(1), bad),  # type: ignore[arg-type]
            store.delete_by_tenant(bad),  # type: ignore[arg-type]
        ]
        for call in calls:
            with pytest.raises(ValueError, match=r"^tenant_id must be a TenantId"):
                await call
        assert [match.entity_id for match in await store.search(basis(0), TENANT)] == [entity_id(1)]

    @pytest.mark.parametrize("bad", [str(entity_id(1)), 1])
    async def test_an_entity_id_that_is_not_a_uuid_is_refused_by_every_method(
        self, bad: object
    ) -> None:
        store = self.new_store()
        for call in [
            store.upsert(bad, basis(0), TENANT),  # type: ignore[arg-type]
            store.get(bad, TENANT),  # type: ignore[arg-type]
            store.delete(bad, TENANT),  # type: ignore[arg-type]
        ]:
            with pytest.raises(ValueError, match=r"^entity_id must be an EntityId"):
                await call
        assert await store.search(basis(0), TENANT) == []
