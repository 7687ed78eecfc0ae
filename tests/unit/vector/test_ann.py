"""Searches through the approximate index answer as the exact search does where it is exact.

With a few hundred rows and the index's search breadth of 200, HNSW finds
every true neighbour, so a store past its `ann_threshold` must return what
an exact store returns, matches and scores, through writes, deletes and
filters. Recall on real embeddings at scale is measured by `bench/ann.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import numpy as np
import pytest

from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import OTHER_TENANT, TENANT
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.adapters.sqlite import SqliteVectorStore
from redstring.vector.rows import TenantRows, check_ann_threshold

if TYPE_CHECKING:
    from pathlib import Path

    from redstring.ports.vector_store import VectorStore

pytest.importorskip("hnswlib")

DIMENSION = 16
SIZE = 300


def entity_id(n: int) -> EntityId:
    return EntityId(UUID(int=n))


def clustered(rng: np.random.Generator, count: int) -> np.ndarray:
    """Vectors around 12 centres: neighbours exist, unlike uniform noise."""
    centres = rng.standard_normal((12, DIMENSION))
    picks = rng.integers(0, 12, count)
    return (centres[picks] + 0.1 * rng.standard_normal((count, DIMENSION))).astype(np.float32)


def records(matrix: np.ndarray, start: int = 0) -> list[VectorRecord]:
    return [
        VectorRecord(
            entity_id=entity_id(start + n),
            tenant_id=TENANT,
            vector=row,
            # "rare" is 3 rows in 300: below the share the index over-fetches for.
            metadata={"entity_type": "rare" if n % 100 == 7 else "abc"[n % 3]},
        )
        for n, row in enumerate(matrix)
    ]


async def assert_same_answers(
    approximate: VectorStore, exact: VectorStore, queries: np.ndarray
) -> None:
    for query in queries:
        for types in (None, ["a"], ["a", "b"], ["rare"], ["missing"]):
            for k, min_score in ((1, None), (10, None), (10, 0.9), (400, None)):
                expected = await exact.search(
                    query, TENANT, k=k, entity_types=types, min_score=min_score
                )
                found = await approximate.search(
                    query, TENANT, k=k, entity_types=types, min_score=min_score
                )
                assert found == expected


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_past_the_threshold_answers_equal_the_exact_search_through_writes(
    backend: str, tmp_path: Path
) -> None:
    rng = np.random.default_rng(3)
    approximate: VectorStore
    if backend == "memory":
        approximate = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=SIZE // 2)
    else:
        approximate = SqliteVectorStore(
            tmp_path / "v.db", dimension=DIMENSION, ann_threshold=SIZE // 2
        )
    exact = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=None)
    matrix = clustered(rng, SIZE)
    for store in (approximate, exact):
        await store.upsert_many(records(matrix))
        # The same ids in another tenant, pointing the other way: never crossed.
        await store.upsert_many(
            [
                VectorRecord(entity_id=entity_id(n), tenant_id=OTHER_TENANT, vector=-row)
                for n, row in enumerate(matrix[:50])
            ]
        )
    queries = matrix[rng.integers(0, SIZE, 6)] + 0.05 * rng.standard_normal((6, DIMENSION))
    await assert_same_answers(approximate, exact, queries)
    # Writes after the index exists: new rows, replaced rows, deleted rows.
    more = clustered(rng, 40)
    for store in (approximate, exact):
        await store.upsert_many(records(more, start=SIZE))
        await store.upsert(entity_id(5), more[0], TENANT, metadata={"entity_type": "a"})
        for n in (0, 1, 2, SIZE + 39, 77):
            assert await store.delete(entity_id(n), TENANT)
        await store.upsert(entity_id(0), more[1], TENANT, metadata={"entity_type": "b"})
    # Querying with the moved rows' own vectors catches an index left stale by a move.
    await assert_same_answers(approximate, exact, np.vstack([queries, more[::3]]))
    await approximate.close()


async def test_the_index_exists_only_at_or_past_the_threshold() -> None:
    rows: TenantRows[int, None] = TenantRows(DIMENSION, ann_threshold=3)
    matrix = clustered(np.random.default_rng(1), 3)
    rows.put_many([1, 2], matrix[:2], [None, None], [None, None])
    assert rows.ann_index() is None
    rows.put_many([3], matrix[2:], [None], [None])
    assert rows.ann_index() is not None
    assert rows.remove(3)
    assert rows.ann_index() is None
    assert TenantRows(DIMENSION).ann_index() is None


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "10"])
def test_an_ann_threshold_that_is_not_a_positive_integer_or_none_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="ann_threshold"):
        check_ann_threshold(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ann_threshold"):
        InMemoryVectorStore(dimension=DIMENSION, ann_threshold=bad)  # type: ignore[arg-type]
    assert check_ann_threshold(None) is None


def test_the_index_grows_past_its_first_capacity_and_answers_for_every_row() -> None:
    rows: TenantRows[int, None] = TenantRows(DIMENSION, ann_threshold=3)
    matrix = clustered(np.random.default_rng(2), 40)
    rows.put_many([0, 1, 2], matrix[:3], [None] * 3, [None] * 3)
    assert rows.ann_index() is not None
    rows.put_many(list(range(3, 40)), matrix[3:], [None] * 37, [None] * 37)
    index = rows.ann_index()
    assert index is not None
    found = index.nearest(matrix[39], 40)
    assert found is not None
    assert sorted(found.tolist()) == list(range(40))


def test_asking_the_index_for_more_rows_than_it_holds_gives_none() -> None:
    from redstring.vector.adapters.hnsw import HnswGraph

    index = HnswGraph(DIMENSION, capacity=4)
    matrix = clustered(np.random.default_rng(4), 2)
    index.put(np.arange(2, dtype=np.intp), matrix)
    assert index.nearest(matrix[0], 3) is None


async def test_too_few_candidates_after_deletes_falls_back_to_the_exact_search() -> None:
    approximate = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=4)
    exact = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=None)
    matrix = clustered(np.random.default_rng(5), 6)
    for store in (approximate, exact):
        await store.upsert_many(records(matrix))
        await store.search(matrix[0], TENANT, k=1)
        assert await store.delete(entity_id(5), TENANT)
    for k in (3, 5, 10):
        assert await approximate.search(matrix[1], TENANT, k=k) == await exact.search(
            matrix[1], TENANT, k=k
        )


def test_without_the_ann_extra_a_large_tenant_is_searched_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "redstring.vector.adapters.hnsw", None)
    rows: TenantRows[int, None] = TenantRows(DIMENSION, ann_threshold=1)
    rows.put_many([1], clustered(np.random.default_rng(6), 1), [None], [None])
    assert rows.ann_index() is None


def test_a_lazy_map_converts_each_item_when_it_is_read() -> None:
    from redstring.vector.rows import LazyMap

    ids = [entity_id(n) for n in range(5)]
    read: list[int] = []

    def convert(row: int) -> EntityId:
        read.append(row)
        return ids[row]

    subset = LazyMap([4, 1, 3], convert)
    assert read == []
    assert (len(subset), subset[0], subset[1:]) == (3, ids[4], [ids[1], ids[3]])
    assert read == [4, 1, 3]
