"""The in-memory vector store against the shared `VectorStore` contract."""

from __future__ import annotations

import pytest

from redstring.domain.vector import VectorRecord
from redstring.ports.vector_store import VectorStore
from redstring.testing.factories import TENANT
from redstring.testing.vector_store import DIMENSION, VectorStoreCompliance, basis, entity_id
from redstring.vector.adapters.memory import InMemoryVectorStore


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
