"""The in-memory vector store against the shared `VectorStore` contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from redstring.domain.vector import VectorRecord
from redstring.ports.vector_store import VectorStore
from redstring.testing.factories import OTHER_TENANT, TENANT
from redstring.testing.vector_store import DIMENSION, VectorStoreCompliance, basis, entity_id
from redstring.vector.adapters.memory import InMemoryVectorStore

if TYPE_CHECKING:
    from redstring.domain.ids import TenantId


class TestInMemoryVectorStore(VectorStoreCompliance):
    def new_store(self, dimension: int = DIMENSION) -> VectorStore:
        return InMemoryVectorStore(dimension=dimension)

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryVectorStore(dimension=4), VectorStore)

    @pytest.mark.parametrize("bad", [0, -3, True, 2.0])
    def test_a_non_positive_or_non_integer_dimension_is_refused(self, bad: object) -> None:
        with pytest.raises(ValueError, match="dimension"):
            InMemoryVectorStore(dimension=bad)  # type: ignore[arg-type]

    async def test_growing_past_the_initial_capacity_keeps_every_row(self) -> None:
        store = InMemoryVectorStore(dimension=DIMENSION)
        count = 300
        await store.upsert_many(
            [
                VectorRecord(entity_id=entity_id(n), tenant_id=TENANT, vector=basis(n % DIMENSION))
                for n in range(1, count + 1)
            ]
        )
        matches = await store.search(basis(5), TENANT, k=count)
        assert len(matches) == count
        assert matches[0].entity_id == entity_id(5)

    async def test_deleting_a_middle_row_keeps_the_last_row_findable(self) -> None:
        store = InMemoryVectorStore(dimension=DIMENSION)
        for n in range(1, 5):
            await store.upsert(entity_id(n), basis(n), TENANT, metadata={"n": n})
        await store.delete(entity_id(2), TENANT)
        [match] = await store.search(basis(4), TENANT, k=1)
        assert (match.entity_id, match.metadata) == (entity_id(4), {"n": 4})
        await store.upsert(entity_id(4), basis(7), TENANT)
        record = await store.get(entity_id(4), TENANT)
        assert record is not None
        assert record.vector == basis(7)

    async def test_a_string_entity_types_is_refused_rather_than_iterated(self) -> None:
        store = InMemoryVectorStore(dimension=DIMENSION)
        with pytest.raises(ValueError, match="person"):
            await store.search(basis(0), TENANT, entity_types="person")

    @pytest.mark.parametrize("bad", [-0.1, 1.5])
    async def test_min_score_outside_zero_to_one_is_refused(self, bad: float) -> None:
        store = InMemoryVectorStore(dimension=DIMENSION)
        with pytest.raises(ValueError, match="min_score"):
            await store.search(basis(0), TENANT, min_score=bad)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        pytest.param(["a"] * DIMENSION, "flat sequence of 384 numbers", id="not-numbers"),
        pytest.param([[1.0]] * DIMENSION, "flat sequence of 384 numbers", id="nested"),
    ],
)
async def test_a_vector_that_is_not_flat_numbers_is_refused_by_name(
    bad: list[object], message: str
) -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    with pytest.raises(ValueError, match=message):
        await store.upsert(entity_id(1), bad, TENANT)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        await store.search(bad, TENANT)  # type: ignore[arg-type]


async def test_a_batch_holding_something_else_names_its_index() -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    good = VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(0))
    with pytest.raises(ValueError, match=r"records\[1\] is not a VectorRecord"):
        await store.upsert_many([good, {"vector": basis(1)}])  # type: ignore[list-item]
    assert await store.get(entity_id(1), TENANT) is None


async def test_filters_that_leave_nothing_return_nothing_rather_than_the_rest() -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    await store.upsert(entity_id(1), basis(0), TENANT, metadata={"entity_type": "person"})
    await store.upsert(entity_id(2), basis(1), TENANT, metadata={"entity_type": "person"})
    assert await store.search(basis(2), TENANT, entity_types=["ship"]) == []
    assert await store.search(basis(2), TENANT, min_score=0.9) == []
    close = [1.0, 0.01] + [0.0] * (DIMENSION - 2)
    [match] = await store.search(close, TENANT, min_score=0.99995)
    assert match.entity_id == entity_id(1)


def _record(n: int, metadata: dict[str, Any], tenant: TenantId = TENANT) -> VectorRecord:
    return VectorRecord(
        entity_id=entity_id(n), tenant_id=tenant, vector=basis(n % DIMENSION), metadata=metadata
    )


async def test_rows_written_with_equal_metadata_never_reach_each_other() -> None:
    # Equal flat metadata is stored once and shared; every read is a copy.
    store = InMemoryVectorStore(dimension=DIMENSION)
    given = {"entity_type": "person"}
    await store.upsert_many([_record(1, given), _record(2, dict(given))])
    await store.upsert(entity_id(3), basis(3), TENANT, metadata=dict(given))
    given["entity_type"] = "changed by the writer"
    [match] = await store.search(basis(1), TENANT, k=1)
    match.metadata["entity_type"] = "changed by a reader"
    record = await store.get(entity_id(1), TENANT)
    assert record is not None
    record.metadata["entity_type"] = "changed by a reader"
    for n in (1, 2, 3):
        [found] = await store.search(basis(n), TENANT, k=1)
        assert found.metadata == {"entity_type": "person"}
    assert [match.entity_id for match in await store.search(basis(2), TENANT, k=3,
            entity_types=["person"])] == [entity_id(2), entity_id(1), entity_id(3)]  # fmt: skip


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([1, True, 1.0], id="int-bool-float"),
        pytest.param([0.0, -0.0], id="signed-zeros"),
        pytest.param([0, False, None], id="falsy"),
    ],
)
async def test_metadata_values_that_compare_equal_keep_their_own_type(
    values: list[object],
) -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    await store.upsert_many(
        [_record(n, {"flag": value}) for n, value in enumerate(values, start=1)]
    )
    for n, value in enumerate(values, start=1):
        record = await store.get(entity_id(n), TENANT)
        assert record is not None
        [stored] = record.metadata.values()
        assert type(stored) is type(value)
        assert repr(stored) == repr(value)


async def test_unstorable_metadata_is_refused_after_equal_looking_good_metadata() -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    await store.upsert_many([_record(1, {"entity_type": "person"})])
    # A record's metadata dict can be changed after the record was validated.
    bad = _record(3, {"entity_type": "person"})
    bad.metadata["entity_type"] = "per" + chr(0) + "son"
    with pytest.raises(ValueError, match=r"records\[1\]\.metadata"):
        await store.upsert_many([_record(2, {"entity_type": "person"}), bad])
    assert await store.get(entity_id(2), TENANT) is None


async def test_a_bulk_load_then_single_writes_and_deletes_keep_every_row() -> None:
    # The first batch into an empty tenant becomes its matrix without a copy.
    store = InMemoryVectorStore(dimension=DIMENSION)
    await store.upsert_many([_record(n, {"n": n}) for n in range(1, 4)])
    await store.upsert(entity_id(4), basis(4), TENANT, metadata={"n": 4})
    await store.upsert(entity_id(1), basis(9), TENANT, metadata={"n": 1})
    assert await store.delete(entity_id(2), TENANT)
    for n, axis in ((1, 9), (3, 3), (4, 4)):
        [match] = await store.search(basis(axis), TENANT, k=1)
        assert (match.entity_id, match.metadata, match.score) == (entity_id(n), {"n": n}, 1.0)
    assert len(await store.search(basis(0), TENANT, k=10)) == 3


async def test_a_bulk_load_into_two_tenants_keeps_each_rows_own_length() -> None:
    # Rows of different lengths: a row given another's length loses the first pass.
    store = InMemoryVectorStore(dimension=DIMENSION)
    await store.upsert_many(
        [
            VectorRecord(entity_id=entity_id(1), tenant_id=TENANT, vector=basis(1),
                         metadata={"t": 1}),
            VectorRecord(entity_id=entity_id(1), tenant_id=OTHER_TENANT,
                         vector=basis(1, scale=100.0), metadata={"t": 2}),
            VectorRecord(entity_id=entity_id(2), tenant_id=TENANT, vector=basis(2, scale=3.0),
                         metadata={"t": 1}),
        ]
    )  # fmt: skip
    query = basis(2)
    query[1] = 0.5
    [mine] = await store.search(query, TENANT, k=1)
    [theirs] = await store.search(basis(1), OTHER_TENANT, k=1)
    assert (mine.entity_id, mine.metadata) == (entity_id(2), {"t": 1})
    assert (theirs.entity_id, theirs.metadata, theirs.score) == (entity_id(1), {"t": 2}, 1.0)
    assert len(await store.search(basis(1), OTHER_TENANT, k=5)) == 1


async def test_metadata_too_large_to_share_is_still_checked_and_stored() -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    wide: dict[str, object] = {f"field{n}": n for n in range(9)}
    await store.upsert_many([_record(1, wide), _record(2, dict(wide))])
    wide["field0"] = "changed by the writer"
    for n in (1, 2):
        record = await store.get(entity_id(n), TENANT)
        assert record is not None
        assert record.metadata == {f"field{n}": n for n in range(9)}


async def test_distinct_metadata_past_the_sharing_limit_is_stored_unshared() -> None:
    store = InMemoryVectorStore(dimension=DIMENSION)
    count = 4_100  # more distinct dicts than a store shares
    await store.upsert_many([_record(n, {"n": n}) for n in range(1, count + 1)])
    await store.upsert_many([_record(count + 1, {"n": count})])
    for n in (1, 4_096, 4_097, count, count + 1):
        record = await store.get(entity_id(n), TENANT)
        assert record is not None
        assert record.metadata == {"n": min(n, count)}


async def test_a_bulk_load_into_an_emptied_indexed_tenant_is_searched_through_the_index() -> None:
    pytest.importorskip("hnswlib")
    store = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=2)
    await store.upsert_many([_record(n, {"n": n}) for n in range(1, 4)])
    [first] = await store.search(basis(2), TENANT, k=1)  # builds the index
    assert first.entity_id == entity_id(2)
    for n in range(1, 4):
        assert await store.delete(entity_id(n), TENANT)
    await store.upsert_many([_record(n, {"n": n}) for n in range(5, 8)])
    # The index itself holds the new rows (an exact fallback would hide it if not).
    index = store._tenants[TENANT].ann_index()
    assert index is not None
    found = index.nearest(np.asarray(basis(6), dtype=np.float32), 3)
    assert found is not None
    assert sorted(found.tolist()) == [0, 1, 2]
    for n in range(5, 8):
        [match] = await store.search(basis(n), TENANT, k=1)
        assert (match.entity_id, match.score) == (entity_id(n), 1.0)
