"""The name index's lookup alone: the staged walk against counting every posting.

Builds one tenant of `--size` person entities the way `bench/ann.py` does
(the real names of `bench/real_names.py`, then noisy copies of them, no
embeddings needed beyond the cached names) in an `InMemoryGraphStore`, and
times its name index's `best_rows` for `QUERIES` held-out real names, the
query units computed once outside the timing. Each query is looked up both
ways in turn in the same run: counting every posting with `numpy.bincount`
(the lookup before ADR 0044, which tenants below `_COUNT_ALL_BELOW` rows
still take) and the staged walk; both must return the same rows. Before
each timed lookup the bench reads `FLUSH` bytes of other memory, as a
retrieve's other work would, so neither way finds the other's (or its own
previous query's) postings in the processor's caches; `--warm` skips
that. Prints, for each `--limit`, p50 and mean in milliseconds and the
walk's ratio to counting, and the postings each query reads when counting.

Usage: `uv run --all-extras python bench/name_index.py [--size N] [--limit L ...]`
(at `--size 1000000` building the tenant takes about two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from redstring import InMemoryGraphStore
from redstring.domain.names import query_name_units
from redstring.graph import name_index

if __package__ in (None, ""):  # run as `python bench/name_index.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.ann import QUERIES, TENANT, fill_graph, tenant_of
from bench.real_names import embedded

WALK_FROM = "_COUNT_ALL_BELOW"
FLUSH = 64 << 20


async def main(size: int, limits: list[int], rounds: int, *, warm: bool) -> None:
    names, vectors = embedded(60_000)
    queries = [query_name_units(name) for name in names[-QUERIES:]]
    entity_names, _ = tenant_of(names[:-QUERIES], vectors[:-QUERIES], size)
    del vectors
    graph = InMemoryGraphStore()
    await fill_graph(graph, entity_names)
    del entity_names
    index = graph._tenants[TENANT].names
    read = [sum(len(index.postings.get(unit, ())) for unit in units) for units in queries]
    print(
        f"{size:,} person entities in one tenant, {len(queries)} held-out real names, "
        f"{'warm' if warm else f'{FLUSH >> 20} MB read before each lookup'}; "
        f"postings read when counting: median {statistics.median(read):,.0f}, max {max(read):,}"
    )
    walk_from = name_index._COUNT_ALL_BELOW
    other = np.ones(FLUSH, dtype=np.uint8)
    for limit in limits:
        samples: dict[str, list[float]] = {"count every posting": [], "staged walk": []}
        for _ in range(rounds):
            for units in queries:
                answers = []
                for label, below in (("count every posting", size + 1), ("staged walk", 0)):
                    setattr(name_index, WALK_FROM, below)  # the module's own constant
                    if not warm:
                        other.sum()
                    started = time.perf_counter()
                    answers.append(index.best_rows(units, limit))
                    samples[label].append(time.perf_counter() - started)
                if answers[0] != answers[1]:
                    raise SystemExit(f"the two lookups differ for {units} at limit {limit}")
        setattr(name_index, WALK_FROM, walk_from)
        base = statistics.median(samples["count every posting"])
        print(f"limit {limit}:")
        for label, values in samples.items():
            p50 = statistics.median(values)
            mean = statistics.mean(values)
            print(
                f"  {label:22} p50 {p50 * 1e3:7.3f} ms  mean {mean * 1e3:7.3f} ms"
                f"  {p50 / base:5.2f}x counting"
            )
    shipped = "staged walk" if size >= walk_from else "count every posting"
    print(f"a tenant of this size takes: {shipped} (the walk from {walk_from:,} rows)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--limit", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warm", action="store_true", help="no other memory read between lookups")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.size, arguments.limit, arguments.rounds, warm=arguments.warm))
