"""The approximate index against the exact search, on real name embeddings.

Loads (or embeds once, then caches) `--names` person names embedded by the
shipped e5 model (`bench/real_names.py`), puts all but `QUERIES` of them in
one tenant of an `InMemoryVectorStore` with the index on
(`ann_threshold=1`) and of one with it off (`ann_threshold=None`), and
queries both with the held-out names. With `--size` larger than the name
set, the tenant is padded with copies of the real vectors plus small noise,
so the added rows keep the names' neighbour structure (random vectors have
none). Prints, measured in one run:

- recall@10 of the index's answers against the exact ones;
- search p50 with the index and exactly, and their ratio;
- the first search's time (it builds the index);
- memory per entity beyond the float32 vector, with the index.

Usage: `uv run --all-extras python bench/ann.py [--names 60000] [--size N]`
(`--size 1000000` takes a long time to build on two cores.)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from uuid import UUID

import numpy as np

from redstring import EntityId, InMemoryVectorStore, TenantId, VectorRecord

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_names import embedded

QUERIES = 300
K = 10
TENANT = TenantId(UUID(int=1))


def padded(vectors: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """`vectors`, then noisy copies of them up to `size` rows, each row unit length."""
    if size <= len(vectors):
        return vectors[:size]
    extra = vectors[rng.integers(0, len(vectors), size - len(vectors))]
    extra = extra + rng.normal(0.0, 0.02, extra.shape).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    return np.vstack([vectors, extra]).astype(np.float32)


async def fill(store: InMemoryVectorStore, matrix: np.ndarray) -> None:
    step = 50_000
    for start in range(0, len(matrix), step):
        await store.upsert_many(
            [
                VectorRecord(
                    entity_id=EntityId(UUID(int=start + n + 2)),
                    tenant_id=TENANT,
                    vector=row,
                    metadata={"entity_type": "person"},
                )
                for n, row in enumerate(matrix[start : start + step])
            ]
        )


async def main(name_count: int, size: int) -> None:
    _, vectors = embedded(name_count)
    rng = np.random.default_rng(7)
    queries, base = vectors[-QUERIES:], vectors[:-QUERIES]
    matrix = padded(base, size, rng)
    exact = InMemoryVectorStore(dimension=matrix.shape[1], ann_threshold=None)
    await fill(exact, matrix)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    approximate = InMemoryVectorStore(dimension=matrix.shape[1], ann_threshold=1)
    await fill(approximate, matrix)
    started = time.perf_counter()
    await approximate.search(queries[0], TENANT, k=K)
    build = time.perf_counter() - started
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()

    recalls, exact_times, ann_times = [], [], []
    for query in queries:
        started = time.perf_counter()
        truth = await exact.search(query, TENANT, k=K)
        exact_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        found = await approximate.search(query, TENANT, k=K)
        ann_times.append(time.perf_counter() - started)
        recalls.append(
            len({m.entity_id for m in found} & {m.entity_id for m in truth}) / len(truth)
        )
    exact_p50, ann_p50 = statistics.median(exact_times), statistics.median(ann_times)
    print(f"{len(matrix):,} e5 name vectors ({len(base):,} real), {QUERIES} held-out name queries")
    print(f"{'recall@10 of the index against exact':44} {statistics.mean(recalls):8.3f}")
    print(f"{'exact search p50':44} {exact_p50 * 1e3:8.2f} ms  1.00x")
    print(
        f"{'search through the index p50':44} {ann_p50 * 1e3:8.2f} ms {ann_p50 / exact_p50:5.2f}x"
    )
    print(f"{'first search (builds the index)':44} {build:8.1f} s")
    # tracemalloc sees numpy's allocations but not hnswlib's; the index's own
    # memory is its vectors plus its links, estimated from its parameters.
    from redstring.vector.adapters.hnsw import LINKS

    index_bytes = len(matrix) * (matrix.shape[1] * 4 + LINKS * 2 * 4 + 16)
    per_entity = (held + index_bytes) / len(matrix) - matrix.shape[1] * 4
    print(f"{'memory beyond the float32 vector, with index':44} {per_entity:8,.0f} bytes/entity")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=60_000)
    parser.add_argument("--size", type=int, default=0, help="rows in the tenant (default: names)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.names, arguments.size or arguments.names - QUERIES))
