"""Context retrieval on PhantomWiki: passage recall by hop count for BM25, the graph walk, fused.

Loads a committed universe (`bench/phantomwiki.py`) into memory stores: its
entities and stated relations into a graph, its articles into a chunk store
through `import_documents` (which links each article's mentions of the
graph's names). For every question, asks `ContextRetriever` three ways:

- `bm25`: chunks alone (the BM25 channel);
- `graph`: the walk's passage score ruling (graph weight 1000; BM25 only
  breaks its ties);
- `fused`: the default settings (BM25 and the walk fused by normalized score,
  the walk lifting the entities the question's relation chain binds).

Recall@k is the fraction of a question's gold articles (its trace set) among
the top k distinct articles. Prints R@2/5/10 overall and R@5 by hop count, the
share of person questions whose answer is among the context's top-10
entities, the share of those whose answer comes with a relation path
(`Context.paths`) and how much of their gold set the answers' paths name,
and the
fused call's p50. `--ablations` adds fused runs with no
query linking, with no edge weighting and with no relation chains.
`--diagnose` adds the ceiling (R@5 of an oracle ranking every gold article
first: what the gold set sizes allow) and where the fused run's gold
articles beyond the top 5 are: ranked 6-10, ranked 11-100, ranked below 100
though the graph channel scored them, or not scored
by the graph channel at all (no entity among the walk's best `reach` mentions
them); and how many BM25 ranked in its top 5 but fused did not; with the
defaults, and with the walk's bounds (`frontier`, `reach`) lifted to
10,000. `--size N` instead times the fused call over N synthetic chunks
(copies of the universe's articles under new titles) in memory. `--sqlite`
runs the quality half on SQLite stores.

Usage: `uv run --all-extras python bench/context.py [--universe dev]
[--ablations] [--diagnose] [--size 100000]`
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import UUID

if __package__ in (None, ""):  # run as `python bench/context.py`, as its usage says
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.phantomwiki import UNIVERSES, Universe, load_universe
from redstring import (
    ContextRetriever,
    ContextSettings,
    InMemoryChunkStore,
    InMemoryGraphStore,
    SqliteChunkStore,
    SqliteGraphStore,
    TenantId,
    import_documents,
)
from redstring.domain.ids import SourceId
from redstring.domain.source import SourceDocument

if TYPE_CHECKING:
    from bench.phantomwiki import Question
    from redstring import ChunkStore, Context, GraphStore

TENANT = TenantId(UUID("00000000-0000-4000-8000-0000000c0de5"))
KS = (2, 5, 10)


type Chunks = InMemoryChunkStore | SqliteChunkStore
type Graph = InMemoryGraphStore | SqliteGraphStore


async def stores(universe: Universe, path: Path | None = None) -> tuple[Chunks, Graph]:
    """The universe's graph and its articles, mentions linked: in memory, or in SQLite at `path`."""
    graph: Graph = InMemoryGraphStore() if path is None else SqliteGraphStore(path)
    chunks: Chunks = InMemoryChunkStore() if path is None else SqliteChunkStore(path)
    await graph.upsert_entities(universe.entities(TENANT))
    await graph.upsert_relationships(universe.relationships(TENANT))
    await import_documents(
        universe.documents(), TENANT, chunks=chunks, graph=graph, link_lowercase=True
    )
    return chunks, graph


def articles(universe: Universe, context: Context) -> list[str]:
    """The titles of the context's passages, best first, each once."""
    return list(dict.fromkeys(universe.title_of(p.chunk.source_id) for p in context.passages))


def recall(found: list[str], gold: frozenset[str], k: int) -> float:
    return len(gold & set(found[:k])) / len(gold)


async def run(
    universe: Universe, retriever: ContextRetriever, questions: tuple[Question, ...]
) -> dict[str, object]:
    """Recall by k and hop, answer-among-entities, and p50 of one retriever over the questions."""
    by_k: dict[int, list[float]] = {k: [] for k in KS}
    by_hop: dict[int, list[float]] = {}
    answers: list[bool] = []
    with_path: list[bool] = []
    on_path: list[float] = []
    times: list[float] = []
    for question in questions:
        started = time.perf_counter()
        context = await retriever.retrieve_context(question.question, TENANT, k=10)
        times.append(time.perf_counter() - started)
        found = articles(universe, context)
        for k in KS:
            by_k[k].append(recall(found, question.gold, k))
        by_hop.setdefault(question.hops, []).append(recall(found, question.gold, 5))
        if question.answer_is_person:
            names = {scored.entity.name for scored in context.entities[:10]}
            answers.append(bool(names & set(question.answers)))
            if answers[-1]:
                paths = [p for p in context.paths if p.entities[-1].name in question.answers]
                with_path.append(bool(paths))
                if paths:
                    named = {entity.name for path in paths for entity in path.entities}
                    on_path.append(len(named & question.gold) / len(question.gold))
    return {
        **{f"R@{k}": statistics.fmean(values) for k, values in by_k.items()},
        **{f"R@5 hop {hop}": statistics.fmean(by_hop[hop]) for hop in sorted(by_hop)},
        "answer in top-10 entities": statistics.fmean(answers) if answers else float("nan"),
        "of those, with a path": statistics.fmean(with_path) if with_path else float("nan"),
        "gold on the path": statistics.fmean(on_path) if on_path else float("nan"),
        "p50 ms": statistics.median(times) * 1000,
    }


def show(name: str, results: dict[str, dict[str, object]]) -> None:
    columns = list(next(iter(results.values())))
    print(f"\n## {name}\n")
    print("| run | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for run_name, values in results.items():
        cells = [
            f"{value:.3f}" if isinstance(value, float) else str(value) for value in values.values()
        ]
        print(f"| {run_name} | " + " | ".join(cells) + " |")


def ceiling(questions: tuple[Question, ...]) -> dict[str, float]:
    """R@5 of an oracle that ranks every gold article first, overall and by hop count."""
    best = {question.id: min(5, len(question.gold)) / len(question.gold) for question in questions}
    hops = sorted({question.hops for question in questions})
    return {
        "R@5": statistics.fmean(best.values()),
        **{
            f"R@5 hop {hop}": statistics.fmean(best[q.id] for q in questions if q.hops == hop)
            for hop in hops
        },
    }


#: The walk's bounds lifted: every entity a hop reaches walks on and scores its passages.
UNBOUNDED = ContextSettings(frontier=10_000, reach=10_000)


async def diagnose(
    universe: Universe, chunks: ChunkStore, graph: GraphStore
) -> dict[str, dict[str, object]]:
    """Where the fused run's gold articles are, as shares of every gold article."""
    rows: dict[str, dict[str, object]] = {}
    for name, settings in (("fused", ContextSettings()), ("fused, walk unbounded", UNBOUNDED)):
        rows[name] = dict(await _where(universe, chunks, graph, settings))
    return rows


async def _where(
    universe: Universe, chunks: ChunkStore, graph: GraphStore, settings: ContextSettings
) -> dict[str, float]:
    fused = ContextRetriever(chunks=chunks, graph=graph, settings=settings)
    bm25 = ContextRetriever(chunks=chunks)
    counts = dict.fromkeys(
        (
            "top 5",
            "ranked 6-10",
            "ranked 11-100",
            "ranked below 100",
            "no graph score",
            "BM25 top 5, fused not",
        ),
        0,
    )
    total = 0
    every = len(universe.articles)
    for question in universe.questions:
        # Every passage either channel scored: a graph-scored one may rank below 100.
        context = await fused.retrieve_context(question.question, TENANT, k=every)
        scored = {
            universe.title_of(p.chunk.source_id) for p in context.passages if p.graph is not None
        }
        found = articles(universe, context)
        by_bm25 = articles(universe, await bm25.retrieve_context(question.question, TENANT, k=5))
        for title in question.gold:
            total += 1
            rank = found.index(title) if title in found else len(found)
            if rank < 5:
                counts["top 5"] += 1
                continue
            if title in by_bm25:
                counts["BM25 top 5, fused not"] += 1
            if title not in scored:
                counts["no graph score"] += 1
            elif rank < 10:
                counts["ranked 6-10"] += 1
            elif rank < 100:
                counts["ranked 11-100"] += 1
            else:
                counts["ranked below 100"] += 1
    return {key: value / total for key, value in counts.items()}


async def quality(name: str, *, ablations: bool, sqlite: bool, diagnosis: bool = False) -> None:
    universe = load_universe(name)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "context.db" if sqlite else None
        chunks, graph = await stores(universe, path)
        try:
            await _quality(universe, chunks, graph, ablations=ablations)
            if diagnosis:
                show(f"{universe.name}: the ceiling", {"oracle": dict(ceiling(universe.questions))})
                show(
                    f"{universe.name}: where the gold articles are, shares of all",
                    await diagnose(universe, chunks, graph),
                )
        finally:
            await chunks.close()
            await graph.close()


async def _quality(
    universe: Universe, chunks: ChunkStore, graph: GraphStore, *, ablations: bool
) -> None:
    name = f"{universe.name} ({type(chunks).__name__})"
    runs: dict[str, ContextRetriever] = {
        "bm25": ContextRetriever(chunks=chunks),
        "graph": ContextRetriever(
            chunks=chunks, graph=graph, settings=ContextSettings(graph_weight=1000.0)
        ),
        "fused": ContextRetriever(chunks=chunks, graph=graph),
    }
    if ablations:
        runs["fused, no linking"] = ContextRetriever(
            chunks=chunks, graph=graph, settings=ContextSettings(link_entities=False)
        )
        runs["fused, no edge weighting"] = ContextRetriever(
            chunks=chunks, graph=graph, settings=ContextSettings(weight_edges=False)
        )
        runs["fused, no chains"] = ContextRetriever(
            chunks=chunks, graph=graph, settings=ContextSettings(follow_chains=False)
        )
    results = {
        key: await run(universe, retriever, universe.questions) for key, retriever in runs.items()
    }
    show(f"{name}: {len(universe.articles)} articles, {len(universe.questions)} questions", results)


async def speed(name: str, size: int) -> None:
    """The fused call's p50 over `size` chunks: the universe plus renamed copies of its articles."""
    universe = load_universe(name)
    chunks, graph = await stores(universe)
    texts = list(universe.articles.values())
    extra = size - len(texts)
    batch: list[SourceDocument] = []
    for index in range(max(extra, 0)):
        batch.append(SourceDocument(id=SourceId(f"copy/{index}"), text=texts[index % len(texts)]))
        if len(batch) == 5_000:
            await import_documents(batch, TENANT, chunks=chunks)
            batch = []
    if batch:
        await import_documents(batch, TENANT, chunks=chunks)
    retriever = ContextRetriever(chunks=chunks, graph=graph)
    times = []
    for question in universe.questions[:100]:
        started = time.perf_counter()
        await retriever.retrieve_context(question.question, TENANT, k=10)
        times.append(time.perf_counter() - started)
    count = await chunks.count_chunks(TENANT)
    print(f"{count} chunks: fused p50 {statistics.median(times) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--universe", choices=UNIVERSES, action="append")
    parser.add_argument("--ablations", action="store_true")
    parser.add_argument("--diagnose", action="store_true", help="the ceiling, the misses")
    parser.add_argument("--size", type=int)
    parser.add_argument("--sqlite", action="store_true", help="SQLite stores, not memory")
    arguments = parser.parse_args()
    names = arguments.universe or list(UNIVERSES)
    for name in names:
        if arguments.size:
            asyncio.run(speed(name, arguments.size))
        else:
            asyncio.run(
                quality(
                    name,
                    ablations=arguments.ablations,
                    sqlite=arguments.sqlite,
                    diagnosis=arguments.diagnose,
                )
            )


if __name__ == "__main__":
    main()
