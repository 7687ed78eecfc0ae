"""A Postgres vector batch larger than one COPY message arrives whole."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import numpy as np

from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import OTHER_TENANT, TENANT

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas

DIMENSION = 384
#: About 1.6 kB a row in the binary COPY stream, so over three 1 MiB messages.
ROWS = 1_200


async def test_a_batch_of_several_copy_messages_is_written_whole(
    postgres: PostgresSchemas,
) -> None:
    rng = np.random.default_rng(3)
    vectors = {
        tenant: rng.standard_normal((ROWS, DIMENSION)).astype(np.float32)
        for tenant in (TENANT, OTHER_TENANT)
    }
    # The same entity ids in both tenants, each with its own vector.
    records = [
        VectorRecord(
            entity_id=EntityId(UUID(int=n + 1)),
            tenant_id=tenant,
            vector=matrix[n],
            metadata={"entity_type": "person", "row": n},
        )
        for tenant, matrix in vectors.items()
        for n in range(ROWS)
    ]
    store = postgres.vector_store(DIMENSION)

    await store.upsert_many(records)

    assert await store.count_by_tenant() == {TENANT: ROWS, OTHER_TENANT: ROWS}
    for tenant, matrix in vectors.items():
        for n in (0, 1, 640, 641, ROWS // 2, ROWS - 2, ROWS - 1):
            found = await store.get(EntityId(UUID(int=n + 1)), tenant)
            assert found is not None
            assert found.metadata == {"entity_type": "person", "row": n}
            np.testing.assert_array_equal(np.asarray(found.vector, dtype=np.float32), matrix[n])
