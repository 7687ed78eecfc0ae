"""Passage search quality: redstring's BM25 channel against `bm25s` on the PhantomWiki universes.

On each universe (`bench/phantomwiki.py`), the articles go through
`import_documents` into a chunk store (one chunk per article: the longest
article is well under the default 1,000-character window), and each
question's top chunks are mapped to their article. Three rankers:

- `redstring`: the store's `search` (Lucene BM25, k1 1.5, b 0.75, over
  `redstring.domain.bm25.tokenize`; ADR 0060);
- `bm25s-same`: `bm25s` with the same variant, k1, b and IDF, in float64, fed
  the very tokens redstring's tokenizer makes of each chunk and of the query
  (its distinct terms, sorted), scored by a full scan (`get_scores`) and
  ordered as redstring orders: score descending, then chunk id ascending;
- `bm25s-en`: `bm25s` as shipped (its tokenizer: lowercase, words of two or
  more characters, English stopwords dropped; float32): the reference
  RESEARCH.md measured (.379 / .476 / .533 on `dev`).

Recall@k is the fraction of a question's gold articles (the trace set)
among the top `k` distinct articles, averaged over the questions; p50 is
the median time of one question.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

import bm25s
import numpy as np

from bench.phantomwiki import Question, Universe, load_universe
from redstring import InMemoryChunkStore, TenantId, import_documents
from redstring.domain.bm25 import K1, B, id_halves, query_terms, tokenize

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from redstring import Chunk, ChunkStore

TENANT = TenantId(UUID("00000000-0000-4000-8000-0000000b2500"))
CUTS = (2, 5, 10)
#: Chunks asked of each ranker: enough for ten distinct articles at one chunk each.
DEPTH = 10


@dataclass
class Run:
    """One ranker on one universe: each question's ranked chunk ids, scores and article titles."""

    ids: dict[str, list[UUID]] = field(default_factory=dict)
    scores: dict[str, list[float]] = field(default_factory=dict)
    titles: dict[str, list[str]] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)


def recall(titles: Sequence[str], gold: frozenset[str], k: int) -> float:
    """The fraction of `gold` among the first `k` distinct titles of `titles`."""
    top = list(dict.fromkeys(titles))[:k]
    return len(gold.intersection(top)) / len(gold)


def figures(universe: Universe, run: Run) -> dict[str, float]:
    """R@2/5/10 overall and R@k by hop count (`r5@h2`...), with p50 in milliseconds."""
    found: dict[str, float] = {}
    questions = universe.questions
    for k in CUTS:
        found[f"r{k}"] = statistics.fmean(recall(run.titles[q.id], q.gold, k) for q in questions)
        for hops in sorted({q.hops for q in questions}):
            group = [q for q in questions if q.hops == hops]
            found[f"r{k}@h{hops}"] = statistics.fmean(
                recall(run.titles[q.id], q.gold, k) for q in group
            )
    found["p50"] = statistics.median(run.seconds) * 1000
    return found


async def stored_chunks(universe: Universe, store: ChunkStore) -> list[Chunk]:
    """Import every article into `store`; every chunk it holds, in title order."""
    await import_documents(universe.documents(), TENANT, chunks=store)
    found: list[Chunk] = []
    for title in universe.articles:
        found += await store.get_source_chunks(universe.source_id(title), TENANT)
    return found


async def redstring_run(
    universe: Universe, store: ChunkStore, questions: Sequence[Question]
) -> Run:
    """Each question through the store's BM25 `search`."""
    run = Run()
    await store.search(questions[0].question, TENANT, k=DEPTH)
    for question in questions:
        started = time.perf_counter()
        hits = await store.search(question.question, TENANT, k=DEPTH)
        run.seconds.append(time.perf_counter() - started)
        run.ids[question.id] = [hit.chunk.id for hit in hits]
        run.scores[question.id] = [hit.score for hit in hits]
        run.titles[question.id] = [universe.title_of(hit.chunk.source_id) for hit in hits]
    return run


def same_tokens_run(universe: Universe, chunks: list[Chunk], questions: Sequence[Question]) -> Run:
    """`bm25s` with redstring's scorer settings, fed redstring's tokens, full scan."""
    index = bm25s.BM25(k1=K1, b=B, method="lucene", idf_method="lucene", dtype="float64")
    index.index([tokenize(chunk.text) for chunk in chunks], show_progress=False)
    halves = np.asarray([id_halves(chunk.id) for chunk in chunks], dtype=np.uint64)
    titles = [universe.title_of(chunk.source_id) for chunk in chunks]
    run = Run()
    for question in questions:
        started = time.perf_counter()
        terms = [term for term in query_terms(question.question) if term in index.vocab_dict]
        scores: np.ndarray[Any, Any] = (
            index.get_scores(terms) if terms else np.zeros(len(chunks), dtype=np.float64)
        )
        order = np.lexsort((halves[:, 1], halves[:, 0], -scores))
        top = [int(slot) for slot in order[:DEPTH] if scores[slot] > 0.0]
        run.seconds.append(time.perf_counter() - started)
        run.ids[question.id] = [chunks[slot].id for slot in top]
        run.scores[question.id] = [float(scores[slot]) for slot in top]
        run.titles[question.id] = [titles[slot] for slot in top]
    return run


def english_run(universe: Universe, chunks: list[Chunk], questions: Sequence[Question]) -> Run:
    """`bm25s` as shipped: its own tokenizer with English stopwords, its own top-k."""
    index = bm25s.BM25()
    index.index(
        bm25s.tokenize([chunk.text for chunk in chunks], stopwords="en", show_progress=False),
        show_progress=False,
    )
    titles = [universe.title_of(chunk.source_id) for chunk in chunks]
    run = Run()
    for question in questions:
        started = time.perf_counter()
        tokens = bm25s.tokenize(question.question, stopwords="en", show_progress=False)
        slots, scores = index.retrieve(tokens, k=DEPTH, show_progress=False, n_threads=1)
        run.seconds.append(time.perf_counter() - started)
        kept = [int(slot) for slot, score in zip(slots[0], scores[0], strict=True) if score > 0]
        run.ids[question.id] = [chunks[slot].id for slot in kept]
        run.scores[question.id] = [float(score) for score in scores[0] if score > 0]
        run.titles[question.id] = [titles[slot] for slot in kept]
    return run


@dataclass(frozen=True)
class Comparison:
    """redstring against `bm25s-same` on one universe."""

    same_top: int
    same_ids_other_order: int
    questions: int
    max_score_gap: float


def compare(left: Run, right: Run) -> Comparison:
    """How many questions get the same top chunks, in the same order, and the largest score gap."""
    same = sum(left.ids[q] == right.ids[q] for q in left.ids)
    reordered = sum(
        left.ids[q] != right.ids[q] and set(left.ids[q]) == set(right.ids[q]) for q in left.ids
    )
    gap = max(
        (
            abs(a - b)
            for q in left.ids
            if left.ids[q] == right.ids[q]
            for a, b in zip(left.scores[q], right.scores[q], strict=True)
        ),
        default=0.0,
    )
    return Comparison(same, reordered, len(left.ids), gap)


async def measure(
    name: str, stores: Mapping[str, Callable[[str], ChunkStore]] | None = None
) -> tuple[Universe, dict[str, Run]]:
    """Every ranker on the universe `name`; redstring also on each of `stores` (`redstring-<key>`).

    Each of `stores` makes an empty store for a universe's name; the tenant's
    chunks are deleted from it after the run.
    """
    universe = load_universe(name)
    async with InMemoryChunkStore() as store:
        chunks = await stored_chunks(universe, store)
        if len(chunks) != len(universe.articles):
            raise ValueError(f"{name}: {len(chunks)} chunks for {len(universe.articles)} articles")
        runs = {"redstring": await redstring_run(universe, store, universe.questions)}
    for backend, new_store in (stores or {}).items():
        other = new_store(name)
        async with other:  # type: ignore[attr-defined]
            await stored_chunks(universe, other)
            runs[f"redstring-{backend}"] = await redstring_run(universe, other, universe.questions)
            await other.delete_by_tenant(TENANT)
    runs["bm25s-same"] = same_tokens_run(universe, chunks, universe.questions)
    runs["bm25s-en"] = english_run(universe, chunks, universe.questions)
    return universe, runs


async def quality(
    names: Sequence[str], stores: Mapping[str, Callable[[str], ChunkStore]] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Measure every universe in `names`, print the tables; the figures per universe and ranker."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name in names:
        universe, runs = await measure(name, stores)
        table[name] = {ranker: figures(universe, run) for ranker, run in runs.items()}
        agreement = compare(runs["redstring"], runs["bm25s-same"])
        gold = statistics.fmean(len(q.gold) for q in universe.questions)
        print(
            f"\n{name}: {len(universe.articles)} articles, {len(universe.questions)} questions, "
            f"gold mean {gold:.1f} articles; redstring == bm25s-same top-{DEPTH} on "
            f"{agreement.same_top}/{agreement.questions} "
            f"(same chunks, other order: {agreement.same_ids_other_order}; "
            f"largest score gap {agreement.max_score_gap:.1e})"
        )
        for backend in stores or {}:
            other = runs[f"redstring-{backend}"]
            alike = other.ids == runs["redstring"].ids and other.scores == runs["redstring"].scores
            print(f"redstring on {backend} == on memory (ids and scores, ==): {alike}")
        hops = sorted({q.hops for q in universe.questions})
        print(
            f"{'ranker':18} {'R@2':>5} {'R@5':>5} {'R@10':>5}  "
            + "  ".join(f"R@5/R@10 h{h}" for h in hops)
            + f"  {'p50 ms':>7}"
        )
        for ranker, row in table[name].items():
            print(
                f"{ranker:18} {row['r2']:5.3f} {row['r5']:5.3f} {row['r10']:5.3f}  "
                + "  ".join(f"{row[f'r5@h{h}']:5.3f}/{row[f'r10@h{h}']:5.3f}" for h in hops)
                + f"  {row['p50']:7.2f}"
            )
    return table
