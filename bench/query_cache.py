"""What remembering query vectors saves a hybrid retrieve with the local model (ADR 0125).

Builds `--size` person entities (the names `bench/retrieve.py` makes),
embeds them with the local e5 model (`E5EmbeddingProvider`, the `local`
extra), and asks `--queries` misspelled names, each twice, of two
Retrievers over the same stores, one of them given the model through a
`CachingEmbeddingProvider`. Prints, measured in one run, the hybrid p50 of:

- the plain Retriever, every query (the baseline: the model runs each time);
- the caching Retriever, each query the first time (a miss: the model runs);
- the caching Retriever, each query again (a hit: the model does not run);

each as a ratio to the baseline, then the machine's load. Both Retrievers
answer every query alike; the bench checks that too.

Usage: `uv run --all-extras python bench/query_cache.py [--size 2000] [--queries 200]`
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from uuid import uuid4

if __package__ in (None, ""):  # run as `python bench/query_cache.py`, as its usage says
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.retrieve import build, misspell, names
from redstring import (
    CachingEmbeddingProvider,
    E5EmbeddingProvider,
    EntityId,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Retriever,
    TenantId,
    import_entities,
)


async def p50(
    retriever: Retriever, tenant: TenantId, queries: list[str]
) -> tuple[float, list[list[EntityId]]]:
    """The hybrid p50 in seconds over `queries`, and each query's ranked ids."""
    samples: list[float] = []
    answers: list[list[EntityId]] = []
    for query in queries:
        started = time.perf_counter()
        result = await retriever.retrieve(query, tenant, k=10)
        samples.append(time.perf_counter() - started)
        answers.append([match.entity.id for match in result.matches])
    return statistics.median(samples), answers


async def main(size: int, query_count: int) -> None:
    rng = random.Random(5)
    tenant = TenantId(uuid4())
    model = E5EmbeddingProvider()
    try:
        all_names = names(size, rng)
        graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=model.dimension)
        await import_entities(
            build(tenant, all_names), graph=graph, embeddings=model, vectors=vectors
        )
        queries = [misspell(name, rng) for name in rng.sample(all_names, query_count)]
        plain = Retriever(graph=graph, embeddings=model, vectors=vectors)
        cached = Retriever(graph=graph, embeddings=CachingEmbeddingProvider(model), vectors=vectors)
        baseline, expected = await p50(plain, tenant, queries)
        missed, first = await p50(cached, tenant, queries)
        held, again = await p50(cached, tenant, queries)
    finally:
        await model.close()
    if first != expected or again != expected:
        raise SystemExit("the caching Retriever answered otherwise than the plain one")
    print(f"{size:,} entities, {query_count} misspelled queries, each asked twice, hybrid, e5")
    for label, seconds in (
        ("plain Retriever (baseline)", baseline),
        ("caching, first time (miss)", missed),
        ("caching, asked again (hit)", held),
    ):
        print(f"{label:<30} p50 {seconds * 1e3:8.3f} ms  {seconds / baseline:5.2f}x baseline")
    load = await asyncio.to_thread(Path("/proc/loadavg").read_text)
    print(f"load average: {load.strip()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.size, arguments.queries))
