"""A type-filtered search through the index keeps fetching until `k` rows of the type pass."""

from __future__ import annotations

from uuid import UUID

import numpy as np
import pytest

from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import TENANT
from redstring.vector.adapters.memory import InMemoryVectorStore

pytest.importorskip("hnswlib")

DIMENSION = 8


def _records(rng: np.random.Generator) -> list[VectorRecord]:
    """100 rows of type "far" around one axis, 200 of type "near" around another.

    "far" is a third of the tenant, well above the share the index is used
    for, so the first fetch (about 70 rows for k=10) is all "near": every "far"
    row is farther from the query than every "near" row.
    """
    far, near = np.eye(DIMENSION)[0], np.eye(DIMENSION)[1]
    rows = [(far, "far")] * 100 + [(near, "near")] * 200
    return [
        VectorRecord(
            entity_id=EntityId(UUID(int=n + 1)),
            tenant_id=TENANT,
            vector=(centre + 0.05 * rng.standard_normal(DIMENSION)).tolist(),
            metadata={"entity_type": entity_type},
        )
        for n, (centre, entity_type) in enumerate(rows)
    ]


async def test_a_type_every_first_candidate_lacks_still_gets_k_matches() -> None:
    records = _records(np.random.default_rng(11))
    approximate = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=10)
    exact = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=None)
    for store in (approximate, exact):
        await store.upsert_many(records)
    query = np.eye(DIMENSION)[1]

    found = await approximate.search(query, TENANT, k=10, entity_types=["far"])

    assert len(found) == 10
    assert {match.metadata["entity_type"] for match in found} == {"far"}
    assert found == await exact.search(query, TENANT, k=10, entity_types=["far"])
