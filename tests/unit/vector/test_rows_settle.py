"""A bulk-loaded matrix moves into numpy's own memory at its first exact search.

`TenantRows.put_many(adopt=True)` keeps the writer's buffer as the matrix, so
the write copies nothing; the first exact search copies a large one into
memory numpy allocated (eligible for huge pages) and every later search and
write uses the copy. Answers never change.
"""

from __future__ import annotations

from uuid import UUID

import numpy as np
import pytest

from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vector import VectorRecord
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.exact import RowSearch
from redstring.vector.rows import SETTLE_BYTES, TenantRows

DIMENSION = 256
ROW_BYTES = 4 * DIMENSION
#: The fewest rows whose matrix is copied.
SETTLED_ROWS = SETTLE_BYTES // ROW_BYTES
TENANT = TenantId(UUID(int=1))
OTHER_TENANT = TenantId(UUID(int=2))


def key(n: int) -> EntityId:
    return EntityId(UUID(int=n + 1))


def adopted(count: int, seed: int = 0) -> tuple[TenantRows[EntityId, int], np.ndarray]:
    """Rows bulk-loaded into an empty tenant, and the buffer they adopted."""
    matrix = np.random.default_rng(seed).standard_normal((count, DIMENSION), dtype=np.float32)
    rows: TenantRows[EntityId, int] = TenantRows(DIMENSION)
    rows.put_many([key(n) for n in range(count)], matrix, [None] * count, list(range(count)),
                  adopt=True)  # fmt: skip
    assert rows.matrix is matrix
    return rows, matrix


def search(
    rows: TenantRows[EntityId, int], query: np.ndarray, k: int = 5
) -> list[tuple[EntityId, float]]:
    matches = rows.search(RowSearch(rows.keys, lambda row: {"row": row}, query.astype(np.float64),
                                    k=k, allowed_types=None, min_score=None))  # fmt: skip
    return [(match.entity_id, match.score) for match in matches]


@pytest.mark.parametrize(("count", "copied"), [(SETTLED_ROWS, True), (SETTLED_ROWS - 1, False)])
def test_an_adopted_matrix_is_copied_at_its_first_search_only_from_the_size_numpy_pages(
    count: int, copied: bool
) -> None:
    rows, buffer = adopted(count)
    query = buffer[7].copy()
    expected = search(rows, query)

    # The first search has run: a large matrix is now the store's own.
    assert np.shares_memory(rows.matrix, buffer) is not copied
    assert rows.matrix.base is None or not copied
    np.testing.assert_array_equal(rows.matrix[:count], buffer)
    assert search(rows, query) == expected
    assert expected[0][0] == key(7)


def test_a_matrix_is_copied_once_and_later_writes_land_in_the_copy() -> None:
    rows, buffer = adopted(SETTLED_ROWS)
    search(rows, buffer[0])
    settled = rows.matrix
    search(rows, buffer[1])
    assert rows.matrix is settled

    # Row 3 now holds what row 0 held: the search finds it there, not in the
    # buffer the rows started from.
    rows.put_many([key(3)], buffer[:1].copy(), [None], [3])
    assert rows.matrix is settled
    found = search(rows, buffer[0], k=2)
    assert {entity for entity, _ in found} == {key(0), key(3)}
    assert not np.array_equal(buffer[3], buffer[0])


def test_a_matrix_the_rows_allocated_is_never_copied_by_a_search() -> None:
    matrix = np.random.default_rng(3).standard_normal((SETTLED_ROWS, DIMENSION), dtype=np.float32)
    rows: TenantRows[EntityId, int] = TenantRows(DIMENSION)
    # Not adopted: copied into the rows' own (grown) matrix by the write.
    rows.put_many([key(n) for n in range(SETTLED_ROWS)], matrix, [None] * SETTLED_ROWS,
                  list(range(SETTLED_ROWS)))  # fmt: skip
    own = rows.matrix
    search(rows, matrix[0])
    assert rows.matrix is own


def test_a_grown_adopted_matrix_is_the_rows_own_and_is_not_copied_again() -> None:
    rows, buffer = adopted(SETTLED_ROWS)
    extra = np.random.default_rng(4).standard_normal((1, DIMENSION), dtype=np.float32)
    rows.put_many([key(SETTLED_ROWS)], extra, [None], [SETTLED_ROWS])
    grown = rows.matrix
    assert not np.shares_memory(grown, buffer)
    found = search(rows, extra[0], k=1)
    assert rows.matrix is grown
    assert found[0][0] == key(SETTLED_ROWS)


async def test_the_store_answers_the_same_before_and_after_the_copy_in_both_tenants() -> None:
    # The same ids in two tenants, bulk-loaded in one batch: each tenant's
    # first search copies its own matrix and neither answers with the other's.
    rng = np.random.default_rng(5)
    matrices = {
        tenant: rng.standard_normal((SETTLED_ROWS, DIMENSION), dtype=np.float32)
        for tenant in (TENANT, OTHER_TENANT)
    }
    store = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=None)
    await store.upsert_many([
        VectorRecord(entity_id=key(n), tenant_id=tenant, vector=matrix[n])
        for tenant, matrix in matrices.items()
        for n in range(SETTLED_ROWS)
    ])  # fmt: skip
    for tenant, matrix in matrices.items():
        other = matrices[OTHER_TENANT if tenant == TENANT else TENANT]
        first = await store.search(matrix[11], tenant, k=3)
        again = await store.search(matrix[11], tenant, k=3)
        assert first == again
        assert first[0].entity_id == key(11)
        assert first[0].score == pytest.approx(1.0)
        assert (await store.search(other[11], tenant, k=1))[0].score < 0.9
