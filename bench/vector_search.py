"""InMemoryVectorStore.search against a bare numpy floor, measured in one run.

Two tenants of `SIZE` random vectors each; the store searches one of them.
The floor is what any exact search must do at least: one float32
matrix-vector product over the same tenant's vectors plus `argpartition` for
the top `K`. Figures are ratios to the floor (the machine is shared and noisy)
with absolute times beside them.

Usage: `uv run python bench/vector_search.py [--size N] [--repeats R]`
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from uuid import uuid4

import numpy as np

from redstring import EntityId, InMemoryVectorStore, TenantId, VectorRecord

DIMENSION = 384
K = 10


def median_seconds(samples: list[float]) -> float:
    return statistics.median(samples)


async def main(size: int, repeats: int) -> None:
    rng = np.random.default_rng(7)
    store = InMemoryVectorStore(dimension=DIMENSION)
    tenants = [TenantId(uuid4()), TenantId(uuid4())]
    matrices = {}
    load_seconds = 0.0
    for tenant in tenants:
        matrix = rng.standard_normal((size, DIMENSION), dtype=np.float32)
        matrices[tenant] = matrix
        records = [
            VectorRecord(
                entity_id=EntityId(uuid4()),
                tenant_id=tenant,
                vector=row,
                metadata={"entity_type": "person" if i % 2 else "organization"},
            )
            for i, row in enumerate(matrix.tolist())
        ]
        started = time.perf_counter()
        await store.upsert_many(records)
        load_seconds += time.perf_counter() - started

    tenant = tenants[0]
    floor_matrix = matrices[tenant]
    queries = rng.standard_normal((repeats, DIMENSION), dtype=np.float32)

    floor_samples, store_samples, filtered_samples = [], [], []
    for query in queries:
        started = time.perf_counter()
        scores = floor_matrix @ query
        np.argpartition(-scores, K)[:K]
        floor_samples.append(time.perf_counter() - started)

        as_list = query.tolist()
        started = time.perf_counter()
        await store.search(as_list, tenant, k=K)
        store_samples.append(time.perf_counter() - started)

        started = time.perf_counter()
        await store.search(as_list, tenant, k=K, entity_types=["person"])
        filtered_samples.append(time.perf_counter() - started)

    floor = median_seconds(floor_samples)
    search = median_seconds(store_samples)
    filtered = median_seconds(filtered_samples)
    print(
        f"{size:,} vectors per tenant x 2 tenants, dimension {DIMENSION}, k={K}, {repeats} queries"
    )
    rows = [
        ("floor (matvec + argpartition)", floor),
        ("InMemoryVectorStore.search", search),
        ("  with an entity_types filter", filtered),
    ]
    for label, seconds in rows:
        print(f"{label + ', median:':40} {seconds * 1e3:8.2f} ms  {seconds / floor:5.2f}x")
    print(f"upsert_many: {2 * size / load_seconds:,.0f} vectors/s ({load_seconds:.2f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.size, arguments.repeats))
