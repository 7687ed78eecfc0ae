"""The approximate index against the exact search, on real name embeddings, up to a million.

Loads (or embeds once, then caches) `--names` person names embedded by the
shipped e5 model (`bench/real_names.py`) and holds `QUERIES` of them out as
queries. One tenant of `--size` person entities goes into the in-memory
graph and vector stores: the real names with their vectors, then (past the
name set) noisy copies: a real name with a middle initial and sometimes a
dropped letter, and that name's vector plus small Gaussian noise, renormed,
so the added rows keep the names' neighbour structure (random vectors have
none). Everything is seeded: the same flags give the same tenant.

The vector store is searched through the HNSW index, and exactly by a second
store that shares the same rows with the index off; the built index is
cached under `~/.cache/redstring-bench/` (checked against the rows before it
is used), so a rerun skips the build. Prints, measured in one run, each
figure in milliseconds and as a ratio to the exact baseline:

- recall@10 of the index's answers against the exact ones;
- the numpy floor (one matrix-vector product plus `argpartition`), the
  vector search exactly and through the index;
- `Retriever.retrieve` p50 in hybrid, semantic and lexical mode, exactly and
  through the index, with the query's embedding looked up, not computed
  (the e5 model is timed by `bench/embedder.py`);
- the graph store's two lexical lookups on their own, and how many
  entities they hand the lexical scorer;
- the index build (or cache load) time, and resident memory per entity.

Usage: `uv run --all-extras python bench/ann.py [--names 60000] [--size N]
[--threads T]` (at `--size 1000000` the first run builds the index for
tens of minutes on two busy cores, and needs about 7 GiB).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import UUID

import numpy as np

from redstring import (
    Entity,
    EntityId,
    ExtractionMethod,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
    blocking_keys_for,
    normalize_name,
)
from redstring.domain.blocking import query_blocking_keys
from redstring.domain.lexical import lexical_score
from redstring.vector.adapters.hnsw import (
    BUILD_BREADTH,
    LINKS,
    HnswGraph,
    load_index,
    save_index,
)

if __package__ in (None, ""):  # run as `python bench/ann.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.real_names import CACHE, embedded

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

QUERIES = 300
K = 10
NOISE = 0.02
TENANT = TenantId(UUID(int=1))
STEP = 50_000


def rss() -> int:
    """This process's resident memory, in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def noisy_names(names: Sequence[str], sources: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Each source's name with a middle initial and, one time in three, a letter dropped."""
    initials = rng.integers(0, 26, len(sources))
    drops = rng.random(len(sources)) < 1 / 3
    positions = rng.integers(0, 1 << 30, len(sources))
    found = []
    for source, initial, drop, position in zip(sources, initials, drops, positions, strict=True):
        given, _, surname = names[source].partition(" ")
        if drop and len(surname) > 3:
            at = 1 + int(position) % (len(surname) - 1)
            surname = surname[:at] + surname[at + 1 :]
        found.append(f"{given} {chr(65 + int(initial))}. {surname}")
    return found


def tenant_of(names: Sequence[str], vectors: np.ndarray, size: int) -> tuple[list[str], np.ndarray]:
    """`size` names and unit vectors: the real ones, then their noisy copies."""
    if size <= len(vectors):
        return list(names[:size]), vectors[:size]
    rng = np.random.default_rng(7)
    sources = rng.integers(0, len(vectors), size - len(vectors))
    matrix = np.empty((size, vectors.shape[1]), dtype=np.float32)
    matrix[: len(vectors)] = vectors
    for start in range(0, len(sources), STEP):
        chunk = vectors[sources[start : start + STEP]]
        chunk = chunk + rng.normal(0.0, NOISE, chunk.shape).astype(np.float32)
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
        matrix[len(vectors) + start : len(vectors) + start + len(chunk)] = chunk
    return [*names, *noisy_names(names, sources, rng)], matrix


def entity_id(row: int) -> EntityId:
    return EntityId(UUID(int=row + 2))


async def fill_graph(graph: InMemoryGraphStore, names: Sequence[str]) -> None:
    for start in range(0, len(names), STEP):
        entities = []
        for row, name in enumerate(names[start : start + STEP], start=start):
            entity = Entity(
                id=entity_id(row),
                tenant_id=TENANT,
                name=name,
                normalized_name=normalize_name(name),
                entity_type="person",
                extraction_method=ExtractionMethod.MANUAL,
                confidence=1.0,
            )
            entities.append(entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)}))
        await graph.upsert_entities(entities)


async def fill_vectors(store: InMemoryVectorStore, matrix: np.ndarray) -> None:
    for start in range(0, len(matrix), STEP):
        await store.upsert_many(
            [
                VectorRecord(
                    entity_id=entity_id(row),
                    tenant_id=TENANT,
                    vector=vector,
                    metadata={"entity_type": "person"},
                )
                for row, vector in enumerate(matrix[start : start + STEP], start=start)
            ]
        )


def cached_index(matrix: np.ndarray, names: int, threads: int) -> tuple[HnswGraph, str]:
    """The index over `matrix`, from the cache if one there matches it, else built and cached."""
    name = f"ann-{len(matrix)}-{names}-m{LINKS}-ef{BUILD_BREADTH}"
    tag = {"size": len(matrix), "names": names, "noise": NOISE, "seed": 7}
    started = time.perf_counter()
    found = load_index(str(CACHE), name, tag=tag, dimension=matrix.shape[1])
    if found is not None and found[0].matches(matrix):
        return found[0], f"loaded from the cache in {time.perf_counter() - started:.1f} s"
    started = time.perf_counter()
    index = HnswGraph.build(matrix, threads=threads)
    built = time.perf_counter() - started
    save_index(index, str(CACHE), name, tag=tag, keys=[str(row) for row in range(len(matrix))])
    return index, f"built in {built:.0f} s ({len(matrix) / built:,.0f} rows/s, {threads} threads)"


class LookedUp:
    """An `EmbeddingProvider` answering the held-out names with their cached e5 vectors.

    Answers lists of floats, as the e5 provider does.
    """

    def __init__(self, names: Sequence[str], vectors: np.ndarray) -> None:
        rows: list[list[float]] = vectors.tolist()
        self._vectors = dict(zip(names, rows, strict=True))
        self.dimension = vectors.shape[1]
        self.model = "intfloat/multilingual-e5-small (cached)"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The cached vectors of `texts`."""
        return [self._vectors[text] for text in texts]


async def timed[T](samples: list[float], work: Awaitable[T]) -> T:
    """`work`'s answer, its time appended to `samples`."""
    started = time.perf_counter()
    answer = await work
    samples.append(time.perf_counter() - started)
    return answer


async def main(name_count: int, size: int, threads: int) -> None:
    names, vectors = embedded(name_count)
    query_names, query_vectors = names[-QUERIES:], vectors[-QUERIES:]
    entity_names, matrix = tenant_of(names[:-QUERIES], vectors[:-QUERIES], size)
    del names, vectors
    gc.collect()

    start_bytes = rss()
    graph = InMemoryGraphStore()
    await fill_graph(graph, entity_names)
    del entity_names
    gc.collect()
    graph_bytes = rss() - start_bytes
    approximate = InMemoryVectorStore(dimension=matrix.shape[1], ann_threshold=1)
    await fill_vectors(approximate, matrix)
    gc.collect()
    vector_bytes = rss() - start_bytes - graph_bytes
    real = min(size, name_count - QUERIES)
    del matrix  # the store holds its own copy
    gc.collect()
    before_index = rss()
    rows = approximate._tenants[TENANT]
    index, how = cached_index(rows.matrix[: len(rows)], name_count, threads)
    rows.adopt_ann(index)
    gc.collect()
    index_bytes = rss() - before_index
    # The exact baseline shares the same rows, with the index off.
    exact = InMemoryVectorStore(dimension=rows.matrix.shape[1], ann_threshold=None)
    exact_rows = copy.copy(rows)
    exact_rows.ann_threshold = None
    exact_rows._ann = None
    exact._tenants[TENANT] = exact_rows

    provider = LookedUp(query_names, query_vectors)
    through_index = Retriever(embeddings=provider, vectors=approximate, graph=graph)
    exactly = Retriever(embeddings=provider, vectors=exact, graph=graph)
    samples: dict[str, list[float]] = {}

    def timer(label: str) -> list[float]:
        return samples.setdefault(label, [])

    recalls, agreements, named, blocked = [], [], [], []
    live = rows.matrix[: len(rows)]
    for query, vector in zip(query_names, query_vectors, strict=True):
        started = time.perf_counter()
        np.argpartition(-(live @ vector), K)[:K]
        timer("floor").append(time.perf_counter() - started)
        truth = await timed(timer("exact vector search"), exact.search(vector, TENANT, k=K))
        found = await timed(timer("vector search"), approximate.search(vector, TENANT, k=K))
        recalls.append(len({m.entity_id for m in found} & {m.entity_id for m in truth}) / K)
        hybrid = {}
        for label, retriever in (("exact", exactly), ("index", through_index)):
            for mode in RetrievalMode:
                answer = await timed(
                    timer(f"{label} {mode.value}"),
                    retriever.retrieve(query, TENANT, k=K, mode=mode),
                )
                if mode is RetrievalMode.HYBRID:
                    hybrid[label] = {match.entity.id for match in answer.matches}
        agreements.append(len(hybrid["exact"] & hybrid["index"]) / max(len(hybrid["exact"]), 1))
        candidates = await timed(
            timer("find_name_candidates"), graph.find_name_candidates(query, TENANT, limit=50)
        )
        named.append(len(candidates))
        groups = await timed(
            timer("find_by_blocking_keys"),
            graph.find_by_blocking_keys(query_blocking_keys(query), TENANT),
        )
        blocked.append(sum(len(group) for group in groups.values()))
        started = time.perf_counter()
        for entity in candidates:
            lexical_score(query, entity)
        timer("lexical_score named").append(time.perf_counter() - started)
        started = time.perf_counter()
        scored = {entity.id: entity for group in (candidates, *groups.values()) for entity in group}
        for entity in scored.values():
            lexical_score(query, entity)
        timer("lexical_score").append(time.perf_counter() - started)

    median = {label: statistics.median(values) for label, values in samples.items()}

    def line(label: str, value: float, baseline: str | None) -> None:
        ratio = f"{value / median[baseline]:6.2f}x {baseline}" if baseline else ""
        print(f"  {label:44} {value * 1e3:8.2f} ms  {ratio}")

    print(
        f"{size:,} person entities in one tenant ({real:,} real e5 name vectors, "
        f"the rest noisy copies), {QUERIES} held-out real names as queries, k={K}"
    )
    print(f"  HNSW M {LINKS}, ef_construction {BUILD_BREADTH}: index {how}")
    print(f"  {'recall@10 of the index against exact':44} {statistics.mean(recalls):8.3f}")
    print(f"  {'hybrid top 10 shared with the exact hybrid':44} {statistics.mean(agreements):8.3f}")
    print("p50 over the queries (ratio to the exact baseline of this run):")
    line("numpy floor (matvec + argpartition)", median["floor"], None)
    line("vector search, exact", median["exact vector search"], "floor")
    line("vector search, through the index", median["vector search"], "exact vector search")
    for mode in RetrievalMode:
        line(f"Retriever.retrieve {mode.value}, exact", median[f"exact {mode.value}"], None)
        line(
            f"Retriever.retrieve {mode.value}, through the index",
            median[f"index {mode.value}"],
            f"exact {mode.value}",
        )
    print("  the lexical channel's parts, alone (the blocking groups are read only when")
    print("  fewer than k name candidates pass the filter):")
    line("  graph find_name_candidates (limit 50)", median["find_name_candidates"], "index hybrid")
    line("  lexical_score over those candidates", median["lexical_score named"], "index hybrid")
    line("  graph find_by_blocking_keys", median["find_by_blocking_keys"], "index hybrid")
    line("  lexical_score over candidates + groups", median["lexical_score"], "index hybrid")
    few = sum(1 for count in named if count < K)
    print(
        f"  {'  name candidates, median; queries with < k':44} "
        f"{statistics.median(named):8.0f}     {few} of {len(named)}"
    )
    print(
        f"  {'  entities in the blocking groups, median':44} "
        f"{statistics.median(blocked):8,.0f}     (max {max(blocked):,})"
    )
    print("resident memory per entity:")
    for label, held in (
        ("graph store", graph_bytes),
        ("vector store (float32 vector: 1,536 bytes)", vector_bytes),
        ("HNSW index", index_bytes),
        ("total", graph_bytes + vector_bytes + index_bytes),
    ):
        print(f"  {label:44} {held / size:8,.0f} bytes/entity")


async def reopen(name_count: int, size: int) -> None:
    """A SQLite store's first search: building and saving the index, then after a reopen."""
    import tempfile

    from redstring import SqliteVectorStore

    names, vectors = embedded(name_count)
    query = vectors[-1]
    _, matrix = tenant_of(names[:-QUERIES], vectors[:-QUERIES], size)
    dimension = matrix.shape[1]
    del names, vectors
    with tempfile.TemporaryDirectory(dir=CACHE) as directory:
        path = Path(directory) / "vectors.db"

        def store() -> SqliteVectorStore:
            return SqliteVectorStore(path, dimension=dimension, ann_threshold=1)

        first = store()
        exact = SqliteVectorStore(path, dimension=dimension, ann_threshold=None)
        for start in range(0, len(matrix), STEP):
            await first.upsert_many(
                [
                    VectorRecord(entity_id=entity_id(row), tenant_id=TENANT, vector=vector)
                    for row, vector in enumerate(matrix[start : start + STEP], start=start)
                ]
            )
        del matrix
        gc.collect()
        timings: dict[str, float] = {}
        for label, each in (("build", first), ("exact", exact), ("reopen", None)):
            if each is None:
                each = store()
            started = time.perf_counter()
            await each.search(query, TENANT, k=K)
            timings[label] = time.perf_counter() - started
            await each.close()
        saved = sum(file.stat().st_size for file in (Path(directory) / "vectors.db-ann").iterdir())
    print(f"SQLite vector store, {size:,} rows in one tenant, first search after opening:")
    for label, text in (
        ("exact", "exact (loads the rows)"),
        ("build", "through the index, building and saving it"),
        ("reopen", "through the index, after a reopen"),
    ):
        ratio = timings[label] / timings["exact"]
        print(f"  {text:44} {timings[label]:8.1f} s  {ratio:6.2f}x exact")
    print(f"  {'saved index, both files':44} {saved / 2**20:8,.0f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=60_000)
    parser.add_argument("--size", type=int, default=0, help="entities (default: the names)")
    parser.add_argument("--threads", type=int, default=2, help="hnswlib threads for the build")
    parser.add_argument(
        "--sqlite", action="store_true", help="time a SQLite store's reopen instead"
    )
    arguments = parser.parse_args()
    size = arguments.size or arguments.names - QUERIES
    if arguments.sqlite:
        asyncio.run(reopen(arguments.names, size))
    else:
        asyncio.run(main(arguments.names, size, arguments.threads))
