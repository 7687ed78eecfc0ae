"""The SQLite stores against the in-memory ones, measured in the same run.

At each size (10,000 and 100,000 entities by default, one tenant, 384
dimensions), builds the same entities and name vectors into both backends
and prints:

- import throughput in entities/s into the graph store, into the vector
  store, and both (the vectors come from `FakeEmbeddingProvider`, so this
  is the stores' cost, not a model's), and the SQLite/memory ratio
  (target: at least 25,000/s into SQLite at 100k), by wall time and by
  processor time (every thread of the process; it leaves out waiting for
  the disk, and other processes' turns on a loaded machine);
- `Retriever.retrieve` p50 for misspelled queries in each mode, SQLite as a
  ratio to memory (target: at most 2x), after one warm-up query that loads
  the SQLite tenant into memory (its time is printed too), and the name
  index's own lookup (`find_name_candidates`, the lexical channel's 50);
- one-entity writes into the full graph, p50: a new entity, and a renamed
  one (which rewrites the postings of the units it leaves);
- a SQLite vector search right after this store wrote one vector, as a
  ratio to an idle search (target: at most 2x);
- the local embedding model's throughput on 500 names, when the `local`
  extra is installed, for scale: embedding, not storing, bounds a real import.

Usage: `uv run --all-extras python bench/sqlite.py [--sizes 10000 100000] [--no-model]`
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from uuid import uuid4

import numpy as np

from redstring import (
    Entity,
    EntityId,
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    SqliteGraphStore,
    SqliteVectorStore,
    TenantId,
    VectorRecord,
)

if __package__ in (None, ""):  # run as `python bench/sqlite.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.retrieve import build, misspell, names

DIMENSION = 384
QUERIES = 40
#: How many candidates the lexical channel asks the name index for.
LEXICAL_CANDIDATES = 50


async def import_into(
    graph: InMemoryGraphStore | SqliteGraphStore,
    vectors: InMemoryVectorStore | SqliteVectorStore,
    entities: list[Entity],
    records: list[VectorRecord],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Seconds to write the graph alone, then the vectors: by wall time, then processor time."""
    started, started_cpu = time.perf_counter(), time.process_time()
    await graph.upsert_entities(entities)
    graph_seconds = time.perf_counter() - started
    graph_cpu = time.process_time() - started_cpu
    started, started_cpu = time.perf_counter(), time.process_time()
    await vectors.upsert_many(records)
    return (graph_seconds, time.perf_counter() - started), (
        graph_cpu,
        time.process_time() - started_cpu,
    )


async def p50(retriever: Retriever, tenant: TenantId, queries: list[str], mode: str) -> float:
    samples = []
    for query in queries:
        started = time.perf_counter()
        await retriever.retrieve(query, tenant, k=10, mode=RetrievalMode(mode))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def candidates_p50(
    graph: InMemoryGraphStore | SqliteGraphStore, tenant: TenantId, queries: list[str]
) -> float:
    samples = []
    for query in queries:
        started = time.perf_counter()
        await graph.find_name_candidates(query, tenant, limit=LEXICAL_CANDIDATES)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def one_entity_writes(
    graph: InMemoryGraphStore | SqliteGraphStore, tenant: TenantId, rng: random.Random
) -> tuple[float, float]:
    """p50 of upserting one new entity, then of renaming it."""
    new, renamed = [], []
    fresh = build(tenant, names(QUERIES, random.Random(rng.random())))
    for entity in fresh:
        started = time.perf_counter()
        await graph.upsert_entity(entity)
        new.append(time.perf_counter() - started)
    for entity, other in zip(fresh, reversed(fresh), strict=True):
        changed = entity.model_copy(update={"name": other.name, "normalized_name": other.name})
        started = time.perf_counter()
        await graph.upsert_entity(changed)
        renamed.append(time.perf_counter() - started)
    return statistics.median(new), statistics.median(renamed)


async def one_size(size: int, folder: Path) -> None:
    rng = random.Random(size)
    tenant = TenantId(uuid4())
    all_names = names(size, rng)
    entities = build(tenant, all_names)
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    matrix = np.asarray(await embeddings.embed(all_names), dtype=np.float32)
    records = [
        VectorRecord(
            entity_id=entity.id,
            tenant_id=tenant,
            vector=vector,
            metadata={"entity_type": entity.entity_type},
        )
        for entity, vector in zip(entities, matrix, strict=True)
    ]
    queries = [misspell(name, rng) for name in rng.sample(all_names, QUERIES)]

    memory_graph, memory_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    memory_import = await import_into(memory_graph, memory_vectors, entities, records)
    memory = Retriever(embeddings=embeddings, vectors=memory_vectors, graph=memory_graph)

    database = folder / f"bench-{size}.db"
    async with (
        SqliteGraphStore(database) as sqlite_graph,
        SqliteVectorStore(database, dimension=DIMENSION) as sqlite_vectors,
    ):
        sqlite_import = await import_into(sqlite_graph, sqlite_vectors, entities, records)
        sqlite = Retriever(embeddings=embeddings, vectors=sqlite_vectors, graph=sqlite_graph)
        started = time.perf_counter()
        await sqlite.retrieve(queries[0], tenant)
        warm_up = time.perf_counter() - started
        latencies = {
            mode: (
                await p50(memory, tenant, queries, mode),
                await p50(sqlite, tenant, queries, mode),
            )
            for mode in ("hybrid", "semantic", "lexical")
        }
        lookups = (
            await candidates_p50(memory_graph, tenant, queries),
            await candidates_p50(sqlite_graph, tenant, queries),
        )
        idle, after_write = await search_after_write(sqlite_vectors, tenant, matrix, rng)
        memory_writes = await one_entity_writes(memory_graph, tenant, rng)
        sqlite_writes = await one_entity_writes(sqlite_graph, tenant, rng)

    print(f"\n{size:,} entities, dimension {DIMENSION}")
    for clock, (memory_times, sqlite_times) in (
        ("time", (memory_import[0], sqlite_import[0])),
        ("processor time", (memory_import[1], sqlite_import[1])),
    ):
        rows = [
            ("import graph", memory_times[0], sqlite_times[0]),
            ("import vectors", memory_times[1], sqlite_times[1]),
            ("import graph and vectors", sum(memory_times), sum(sqlite_times)),
        ]
        for label, in_memory, on_disk in rows:
            print(
                f"  {label:<28} memory {size / in_memory:>9,.0f}/s  "
                f"sqlite {size / on_disk:>9,.0f}/s  "
                f"sqlite/memory {on_disk / in_memory:5.2f}x ({clock})"
            )
    print(f"  first sqlite retrieve (loads the tenant): {warm_up * 1e3:,.0f} ms")
    for mode, (in_memory, on_disk) in latencies.items():
        print(
            f"  retrieve {mode:<9} p50   memory {in_memory * 1e3:7.2f} ms  "
            f"sqlite {on_disk * 1e3:7.2f} ms  sqlite/memory {on_disk / in_memory:5.2f}x"
        )
    print(
        f"  name candidates ({LEXICAL_CANDIDATES}) p50 memory {lookups[0] * 1e3:7.2f} ms  "
        f"sqlite {lookups[1] * 1e3:7.2f} ms  sqlite/memory {lookups[1] / lookups[0]:5.2f}x"
    )
    for label, in_memory, on_disk in (
        ("upsert one new entity", memory_writes[0], sqlite_writes[0]),
        ("upsert one renamed entity", memory_writes[1], sqlite_writes[1]),
    ):
        print(
            f"  {label:<26} p50 memory {in_memory * 1e3:7.2f} ms  sqlite {on_disk * 1e3:7.2f} ms"
            f"  sqlite/memory {on_disk / in_memory:5.2f}x"
        )
    print(
        f"  sqlite search p50: idle {idle * 1e3:7.2f} ms  right after a write "
        f"{after_write * 1e3:7.2f} ms  after/idle {after_write / idle:5.2f}x"
    )


async def search_after_write(
    vectors: SqliteVectorStore, tenant: TenantId, matrix: np.ndarray, rng: random.Random
) -> tuple[float, float]:
    """p50 of a search alone, and of a search right after this store wrote one vector."""
    idle, after = [], []
    for _ in range(QUERIES):
        query = matrix[rng.randrange(len(matrix))]
        started = time.perf_counter()
        await vectors.search(query, tenant, k=10)
        idle.append(time.perf_counter() - started)
        await vectors.upsert(EntityId(uuid4()), query, tenant, metadata={"entity_type": "person"})
        started = time.perf_counter()
        await vectors.search(query, tenant, k=10)
        after.append(time.perf_counter() - started)
    return statistics.median(idle), statistics.median(after)


async def local_model_rate() -> None:
    try:
        from redstring.llm.adapters.e5 import E5EmbeddingProvider
    except ImportError:
        print("\nlocal embedding model: not installed (the `local` extra)")
        return
    texts = names(500, random.Random(1))
    async with E5EmbeddingProvider() as provider:
        await provider.embed(texts[:8])
        started = time.perf_counter()
        await provider.embed(texts)
        seconds = time.perf_counter() - started
    print(f"\nlocal embedding model ({provider.model}): {len(texts) / seconds:,.0f} names/s")


async def main(sizes: list[int], *, model: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            await one_size(size, Path(folder))
    if model:
        await local_model_rate()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--no-model", action="store_true", help="skip timing the local embedding model"
    )
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, model=not arguments.no_model))
