"""build_graph throughput by document size: is the per-character cost flat?

Builds documents of 10k, 50k and 200k characters through `FakeLlmProvider`
(so the model costs nothing and redstring's own work is what is timed) into
in-memory stores with embeddings, and prints documents/s, chunks/s and the
cost per character as a ratio to the smallest size, measured in the same
run. Linear time means the ratio stays near 1.0 (the target is at most 1.5).

Usage: `uv run python bench/build_graph.py [--repeats R]`
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from uuid import uuid4

from redstring import (
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    SourceDocument,
    SourceId,
    TenantId,
    build_graph,
)

SIZES = (10_000, 50_000, 200_000)
WORDS = ["ada", "lovelace", "charles", "babbage", "analytical", "engine", "mechanical"]
ANSWER = {
    "entities": [
        {"name": f"Entity {n}", "entity_type": "person" if n % 2 else "machine"} for n in range(8)
    ],
    "relationships": [
        {"source_name": f"Entity {n}", "target_name": f"Entity {n + 1}", "relationship_type": "r"}
        for n in range(7)
    ],
}


def document(size: int) -> SourceDocument:
    rng = random.Random(size)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return SourceDocument(id=SourceId(f"doc-{size}"), text=" ".join(words)[:size])


async def one_build(text: SourceDocument) -> tuple[float, int]:
    started = time.perf_counter()
    report = await build_graph(
        text,
        provider=FakeLlmProvider(by_substring={}, default=ANSWER),
        store=InMemoryGraphStore(),
        tenant_id=TenantId(uuid4()),
        embedding_provider=FakeEmbeddingProvider(dimension=384),
        vector_store=InMemoryVectorStore(dimension=384),
    )
    return time.perf_counter() - started, report.chunks


async def main(repeats: int) -> None:
    rows = []
    for size in SIZES:
        text = document(size)
        samples = [await one_build(text) for _ in range(repeats)]
        seconds = statistics.median(sample for sample, _ in samples)
        rows.append((size, seconds, samples[0][1]))
    base = rows[0][1] / rows[0][0]
    print(
        f"{'characters':>10} {'chunks':>7} {'median':>10} {'docs/s':>8} {'chunks/s':>9} cost/char"
    )
    for size, seconds, chunks in rows:
        ratio = (seconds / size) / base
        print(
            f"{size:>10,} {chunks:>7} {seconds * 1e3:>8.1f}ms {1 / seconds:>8.1f} "
            f"{chunks / seconds:>9.0f} {ratio:>8.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    asyncio.run(main(parser.parse_args().repeats))
