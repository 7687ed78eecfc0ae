"""Retrieval quality on labelled name sets: what `Retriever.retrieve` finds, and how often.

Each set (see `bench/datasets.py`) becomes one tenant in the in-memory
stores, written as the library writes it: entities with their blocking keys
in `InMemoryGraphStore`, each name's vector in `InMemoryVectorStore` with
`metadata={"entity_type": ...}`. Every query then goes through the public
`Retriever.retrieve` in each mode, with the same `k`, no per-query tuning,
and ids derived from the records' keys, so two runs give the same table.

Per set (and per mention form), per mode and per embedder:

- R@1, R@10: the share of queries with a right answer first / in the top 10;
- MRR@10: the mean of 1/rank of the first right answer (0 past rank 10);
- empty: queries answered with nothing at all;
- p50 ms: the median `retrieve` call. With e5 the vectors come from the
  cache, so this is the stores and fusion, not the model.

Beside them, in the same run: the lexical channel's candidates (the share of
queries whose answer is among them, and how many it fetched), and two
full-scan baselines that look at every entity: Jaro-Winkler over every
name, and cosine against every entity's vector. A channel that does not beat
a full scan is leaving quality on the table.

Candidates come from the graph's `find_name_candidates` when it has one,
else from `find_by_blocking_keys(query_blocking_keys(query))`; the table
says which.

e5 vectors are cached under `~/.cache/redstring-bench/` keyed by model and
text hash (the first full run embeds about 45,000 texts, some minutes).

With more than one set: a leave-one-set-out table of the
evidence order (ADR 0104) -- weights fitted on every other set, judged on
each set in turn, beside plain RRF, each channel alone, the shipped
weights and, as a ceiling, weights fitted on that set alone
(`bench/fusion_fit.py`), and the weights fitted on every set, which are
what `redstring.domain.fusion_weights` ships.

Usage: `uv run python bench/quality.py [--sets febrl4,mentions] [--embedder fake|e5|all]
[--size N] [--no-baselines] [--json]`
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.metadata
import json
import os
import sqlite3
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import NAMESPACE_URL, uuid5

# One BLAS thread: a 5,000-row matrix-vector product is memory-bound, and on a
# shared two-core machine a threaded one waits for cores (20 ms against 0.3).
# Set before numpy loads; an explicit setting in the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jellyfish
import numpy as np

if __package__ in (None, ""):  # run as `python bench/quality.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.datasets import SET_NAMES, LabelledSet, load_set, normalize, tokens
from bench.fusion_fit import FusionQuery, fit, leave_one_set_out
from redstring import (
    Entity,
    EntityId,
    ExtractionMethod,
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
    blocking_keys_for,
)
from redstring.domain.blocking import query_blocking_keys
from redstring.domain.lexical import lexical_scores, word_rarity_matches
from redstring.domain.names import unit_overlap

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from redstring.ports.embedding import EmbeddingProvider

K = 10
"""Results asked of every method, and the depth of R@10 and MRR@10."""

DIMENSION = 384
"""The fake embedder's dimension, e5's."""

CACHE_DIR = Path.home() / ".cache" / "redstring-bench"
"""Where e5 vectors are kept between runs. Never inside the repository."""

MODES: tuple[RetrievalMode, ...] = (
    RetrievalMode.LEXICAL,
    RetrievalMode.SEMANTIC,
    RetrievalMode.HYBRID,
)


# -- embeddings --------------------------------------------------------------------


class CachedEmbeddings:
    """An `EmbeddingProvider` that asks `inner` only for texts it has never seen.

    Vectors live in one SQLite file keyed by a hash of model and text, so a
    second run of the bench costs no model time.
    """

    def __init__(self, inner: EmbeddingProvider, path: Path) -> None:
        self._inner = inner
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors "
            "(key TEXT PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL)"
        )
        self._memory: dict[str, NDArray[np.float32]] = {
            key: np.frombuffer(blob, dtype=np.float32)
            for key, blob in self._db.execute(
                "SELECT key, vector FROM vectors WHERE model = ?", (inner.model,)
            )
        }

    @property
    def model(self) -> str:
        """The inner provider's model."""
        return self._inner.model

    @property
    def dimension(self) -> int:
        """The inner provider's dimension."""
        return self._inner.dimension

    def _key(self, text: str) -> str:
        data = f"{self._inner.model}\x00{text}".encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest()

    async def warm(self, texts: Sequence[str], *, chunk: int = 512) -> None:
        """Embed and store every text not yet cached, reporting progress on stderr."""
        missing = sorted({text for text in texts if self._key(text) not in self._memory})
        started = time.perf_counter()
        for start in range(0, len(missing), chunk):
            batch = missing[start : start + chunk]
            vectors = await self._inner.embed(batch)
            rows = []
            for text, vector in zip(batch, vectors, strict=True):
                array = np.asarray(vector, dtype=np.float32)
                self._memory[self._key(text)] = array
                rows.append((self._key(text), self._inner.model, array.tobytes()))
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            self._db.commit()
            done = start + len(batch)
            rate = done / (time.perf_counter() - started)
            print(
                f"  embedded {done}/{len(missing)} with {self.model} ({rate:.0f}/s)",
                file=sys.stderr,
            )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; only texts never seen reach the model."""
        await self.warm(texts)
        return [self._memory[self._key(text)].tolist() for text in texts]

    def matrix(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The cached vectors of `texts` as rows; every text must have been warmed."""
        return np.stack([self._memory[self._key(text)] for text in texts])

    def close(self) -> None:
        """Close the cache file."""
        self._db.close()


async def new_embedder(name: str, cache_dir: Path = CACHE_DIR) -> EmbeddingProvider:
    """`fake` (hash vectors, no meaning) or `e5` (the local model, cached)."""
    if name == "fake":
        return FakeEmbeddingProvider(dimension=DIMENSION)
    if name == "e5":
        from redstring.llm.adapters.e5 import E5EmbeddingProvider

        return CachedEmbeddings(E5EmbeddingProvider(), cache_dir / "embeddings.sqlite3")
    raise ValueError(f"unknown embedder {name!r}; expected fake or e5")


async def vectors_of(provider: EmbeddingProvider, texts: Sequence[str]) -> NDArray[np.float32]:
    """`texts` embedded as unit rows (the fake's vectors are not unit length)."""
    if isinstance(provider, CachedEmbeddings):
        await provider.warm(texts)
        matrix = provider.matrix(texts)
    else:
        matrix = np.asarray(await provider.embed(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
    return unit


# -- the stored set ----------------------------------------------------------------


@dataclass
class Stored:
    """One labelled set written into a graph store as one tenant."""

    labelled: LabelledSet
    tenant: TenantId
    entities: list[Entity]
    key_of: dict[EntityId, str]
    graph: InMemoryGraphStore


async def store(labelled: LabelledSet) -> Stored:
    """The set's records as entities of one tenant, with their blocking keys."""
    tenant = TenantId(uuid5(NAMESPACE_URL, f"redstring-bench/{labelled.name}"))
    entities = []
    for record in labelled.records:
        # A dict, so that `normalized_name` takes the library's own default.
        entity = Entity.model_validate(
            {
                "id": EntityId(
                    uuid5(NAMESPACE_URL, f"redstring-bench/{labelled.name}/{record.key}")
                ),
                "tenant_id": tenant,
                "name": record.name,
                "entity_type": record.entity_type,
                "properties": dict(record.properties),
                "extraction_method": ExtractionMethod.MANUAL,
                "confidence": 1.0,
            }
        )
        # As the extraction mapping writes them: the keys travel with the entity.
        entities.append(entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)}))
    graph = InMemoryGraphStore()
    await graph.upsert_entities(entities)
    key_of = {
        entity.id: record.key for entity, record in zip(entities, labelled.records, strict=True)
    }
    return Stored(labelled, tenant, entities, key_of, graph)


async def retriever_for(stored: Stored, provider: EmbeddingProvider) -> Retriever:
    """A `Retriever` over the stored set, with each entity's name embedded by `provider`."""
    vectors = InMemoryVectorStore(dimension=provider.dimension)
    if isinstance(provider, CachedEmbeddings):
        # Queries too, so that no `retrieve` waits for the model.
        texts = [entity.name for entity in stored.entities]
        await provider.warm(texts + [query.text for query in stored.labelled.queries])
    matrix = await provider.embed([entity.name for entity in stored.entities])
    await vectors.upsert_many(
        [
            VectorRecord(
                entity_id=entity.id,
                tenant_id=stored.tenant,
                vector=vector,
                metadata={"entity_type": entity.entity_type},
            )
            for entity, vector in zip(stored.entities, matrix, strict=True)
        ]
    )
    return Retriever(embeddings=provider, vectors=vectors, graph=stored.graph)


# -- measuring ---------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How one method answered one query."""

    rank: int | None
    """1-based rank of the first right answer within `K`, or `None`."""
    empty: bool
    seconds: float | None = None
    ranked: tuple[tuple[EntityId, float], ...] = ()
    """A one-channel mode's answer: (id, that channel's score), best first."""


def rank_of(keys: Sequence[str], gold: frozenset[str]) -> int | None:
    for position, key in enumerate(keys[:K], start=1):
        if key in gold:
            return position
    return None


async def run_mode(stored: Stored, retriever: Retriever, mode: RetrievalMode) -> list[Outcome]:
    outcomes = []
    for query in stored.labelled.queries:
        started = time.perf_counter()
        result = await retriever.retrieve(query.text, stored.tenant, k=K, mode=mode)
        seconds = time.perf_counter() - started
        keys = [stored.key_of[match.entity.id] for match in result.matches]
        ranked: tuple[tuple[EntityId, float], ...] = ()
        if mode is not RetrievalMode.HYBRID:
            scored = [
                (match.entity.id, match.lexical if match.semantic is None else match.semantic)
                for match in result.matches
            ]
            ranked = tuple((entity_id, score) for entity_id, score in scored if score is not None)
        outcomes.append(Outcome(rank_of(keys, query.gold), not keys, seconds, ranked))
    return outcomes


def candidate_source(graph: object) -> str:
    """Which graph capability the lexical candidates come from."""
    if getattr(graph, "find_name_candidates", None) is not None:
        return "find_name_candidates"
    return "find_by_blocking_keys"


async def candidates(stored: Stored) -> list[tuple[bool, int]]:
    """Per query: whether a right answer is among the lexical candidates, and how many."""
    finder = getattr(stored.graph, "find_name_candidates", None)
    found = []
    for query in stored.labelled.queries:
        if finder is not None:
            entities = list(await finder(query.text, stored.tenant))
        else:
            groups = await stored.graph.find_by_blocking_keys(
                query_blocking_keys(query.text), stored.tenant
            )
            entities = [entity for group in groups.values() for entity in group]
        ids = {entity.id for entity in entities}
        found.append((any(stored.key_of[i] in query.gold for i in ids), len(ids)))
    return found


def top_keys(scores: NDArray[np.float64] | NDArray[np.float32], keys: Sequence[str]) -> list[str]:
    """The `K` best keys by score, ties broken by the set's own record order."""
    order = np.argsort(-scores, kind="stable")[:K]
    return [keys[index] for index in order]


def jaro_winkler_scan(stored: Stored) -> list[Outcome]:
    """Jaro-Winkler of the casefolded query against every entity's casefolded name."""
    keys = [record.key for record in stored.labelled.records]
    names = [normalize(record.name) for record in stored.labelled.records]
    outcomes = []
    for query in stored.labelled.queries:
        text = normalize(query.text)
        scores = np.fromiter(
            (jellyfish.jaro_winkler_similarity(text, name) for name in names),
            dtype=np.float64,
            count=len(names),
        )
        outcomes.append(Outcome(rank_of(top_keys(scores, keys), query.gold), False))
    return outcomes


async def cosine_scan(stored: Stored, provider: EmbeddingProvider) -> list[Outcome]:
    """Cosine of the query's vector against every entity's vector."""
    keys = [record.key for record in stored.labelled.records]
    matrix = await vectors_of(provider, [record.name for record in stored.labelled.records])
    queries = await vectors_of(provider, [query.text for query in stored.labelled.queries])
    outcomes = []
    for query, vector in zip(stored.labelled.queries, queries, strict=True):
        outcomes.append(Outcome(rank_of(top_keys(matrix @ vector, keys), query.gold), False))
    return outcomes


# -- reporting ---------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One method's figures on one group of queries (a set, or one form of it)."""

    group: str
    method: str
    embedder: str
    queries: int
    r1: float
    r10: float
    mrr10: float
    empty: int
    p50_ms: float | None


@dataclass(frozen=True)
class CandidateRow:
    """The lexical channel's candidates on one group of queries."""

    group: str
    source: str
    queries: int
    recall: float
    mean: float
    max: int
    none: int
    """Queries for which the channel fetched no candidate at all."""
    empty_sharing_token: int
    """LEXICAL answers that were empty although the query shares a whole word with its answer."""


@dataclass
class Report:
    """Everything one run measured."""

    meta: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    candidates: list[CandidateRow] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    held_out: list[dict[str, Any]] = field(default_factory=list)
    """Leave-one-set-out rows of the evidence order, per embedder (`bench/fusion_fit.py`)."""

    def row(self, group: str, method: str, embedder: str) -> Row | None:
        """The row for this group, method and embedder, if measured."""
        for row in self.rows:
            if (row.group, row.method, row.embedder) == (group, method, embedder):
                return row
        return None

    def candidate(self, group: str) -> CandidateRow | None:
        """The candidate statistics of this group, if measured."""
        return next((row for row in self.candidates if row.group == group), None)


def groups(labelled: LabelledSet) -> list[tuple[str, list[int]]]:
    """The whole set, then each of its forms when it has more than one."""
    forms: dict[str, list[int]] = {}
    for index, query in enumerate(labelled.queries):
        forms.setdefault(query.form, []).append(index)
    found = [(labelled.name, list(range(len(labelled.queries))))]
    if len(forms) > 1:
        found += [(f"{labelled.name}/{form}", indices) for form, indices in forms.items()]
    return found


def summarize(
    group: str, method: str, embedder: str, outcomes: Sequence[Outcome], indices: Sequence[int]
) -> Row:
    chosen = [outcomes[index] for index in indices]
    count = len(chosen)
    timed = [each.seconds for each in chosen if each.seconds is not None]
    return Row(
        group=group,
        method=method,
        embedder=embedder,
        queries=count,
        r1=sum(each.rank == 1 for each in chosen) / count,
        r10=sum(each.rank is not None for each in chosen) / count,
        mrr10=sum(1 / each.rank for each in chosen if each.rank is not None) / count,
        empty=sum(each.empty for each in chosen),
        p50_ms=statistics.median(timed) * 1000 if timed else None,
    )


def fusion_query(
    text: str,
    semantic: tuple[tuple[EntityId, float], ...],
    lexical: tuple[tuple[EntityId, float], ...],
    gold: frozenset[EntityId],
    entity_of: dict[EntityId, Entity],
) -> FusionQuery:
    """One query's channel answers with what the names say of them, as the Retriever measures it.

    Among both channels' answers: each one's rare-word match (ADR 0116), its
    unit overlap with the query, and the lexical score of those the lexical
    channel did not return (ADR 0119).
    """
    candidates = [entity_of[each] for each in dict.fromkeys(i for i, _ in (*semantic, *lexical))]
    ranked = {each for each, _ in lexical}
    unranked = [entity for entity in candidates if entity.id not in ranked]
    return FusionQuery(
        semantic=semantic,
        lexical=lexical,
        gold=gold,
        words=word_rarity_matches(text, candidates),
        unranked_lexical=dict(
            zip((entity.id for entity in unranked), lexical_scores(text, unranked), strict=True)
        ),
        overlaps={entity.id: unit_overlap(text, entity) for entity in candidates},
    )


async def evaluate(
    labelled: LabelledSet,
    embedders: Sequence[EmbeddingProvider],
    *,
    baselines: bool = True,
    names: Sequence[str] | None = None,
    modes: Sequence[RetrievalMode] = MODES,
    fusion: dict[str, dict[str, list[FusionQuery]]] | None = None,
) -> Report:
    """Every mode, candidate statistic and (optionally) baseline on one set.

    `names` labels the embedders in the report (default: each one's model).
    LEXICAL does not depend on the embedder, so it is measured once, with the first.
    `modes` picks the modes measured (default: all three). With `fusion`,
    each embedder's two channel answers per query are added to it, under
    the embedder's label and the set's name, for `leave_one_set_out`.
    """
    labels = list(names) if names is not None else [each.model for each in embedders]
    report = Report()
    stored = await store(labelled)
    parts = groups(labelled)
    outcomes: dict[tuple[str, str], list[Outcome]] = {}
    for position, (provider, label) in enumerate(zip(embedders, labels, strict=True)):
        retriever = await retriever_for(stored, provider)
        for mode in modes:
            if mode is RetrievalMode.LEXICAL and position > 0:
                continue
            embedder = "-" if mode is RetrievalMode.LEXICAL else label
            outcomes[(mode.value, embedder)] = await run_mode(stored, retriever, mode)
        if baselines:
            outcomes[("cosine-scan", label)] = await cosine_scan(stored, provider)
    if baselines:
        outcomes[("jw-scan", "-")] = jaro_winkler_scan(stored)
    lexical_answers = outcomes.get((RetrievalMode.LEXICAL.value, "-"))
    if fusion is not None and lexical_answers is not None:
        ids_of: dict[str, set[EntityId]] = {}
        for entity_id, key in stored.key_of.items():
            ids_of.setdefault(key, set()).add(entity_id)
        entity_of = {entity.id: entity for entity in stored.entities}
        for label in labels:
            semantic_answers = outcomes.get((RetrievalMode.SEMANTIC.value, label))
            if semantic_answers is None:
                continue
            fusion.setdefault(label, {})[labelled.name] = [
                fusion_query(
                    query.text,
                    semantic.ranked,
                    lexical.ranked,
                    frozenset(each for key in query.gold for each in ids_of.get(key, ())),
                    entity_of,
                )
                for query, semantic, lexical in zip(
                    labelled.queries, semantic_answers, lexical_answers, strict=True
                )
            ]

    found = await candidates(stored)
    lexical = outcomes.get((RetrievalMode.LEXICAL.value, "-"))
    name_of = {record.key: record.name for record in labelled.records}
    sharing = [
        any(tokens(query.text) & tokens(name_of[key]) for key in query.gold)
        for query in labelled.queries
    ]
    for group, indices in parts:
        for (method, embedder), each in outcomes.items():
            report.rows.append(summarize(group, method, embedder, each, indices))
        counts = [found[index][1] for index in indices]
        report.candidates.append(
            CandidateRow(
                group=group,
                source=candidate_source(stored.graph),
                queries=len(indices),
                recall=sum(found[index][0] for index in indices) / len(indices),
                mean=statistics.fmean(counts),
                max=max(counts),
                none=sum(count == 0 for count in counts),
                empty_sharing_token=0
                if lexical is None
                else sum(lexical[index].empty and sharing[index] for index in indices),
            )
        )
    return report


def check(report: Report) -> list[dict[str, Any]]:
    """The issue's must-hold lines that this run has the figures for."""
    results: list[dict[str, Any]] = []

    def claim(text: str, passed: bool, detail: str) -> None:
        results.append({"claim": text, "passed": passed, "detail": detail})

    set_groups = sorted({row.group for row in report.rows if "/" not in row.group})
    for group in set_groups:
        # Hash vectors have no meaning: a channel fusing them is not expected to win.
        for embedder in ("e5",):
            hybrid = report.row(group, "hybrid", embedder)
            if hybrid is None:
                continue
            rivals = [
                report.row(group, "lexical", "-"),
                report.row(group, "semantic", embedder),
                report.row(group, "jw-scan", "-"),
                report.row(group, "cosine-scan", embedder),
            ]
            for rival in (each for each in rivals if each is not None):
                name = rival.method if rival.embedder == "-" else f"{rival.method}/{embedder}"
                claim(
                    f"{group} {embedder}: hybrid R@1, R@10 >= {name}",
                    hybrid.r1 >= rival.r1 and hybrid.r10 >= rival.r10,
                    f"{hybrid.r1:.3f}/{hybrid.r10:.3f} vs {rival.r1:.3f}/{rival.r10:.3f}",
                )
    targets = {"febrl4": (0.86, 0.92), "countrynames": (0.72, 0.90)}
    for group, (r1, r10) in targets.items():
        row = report.row(group, "hybrid", "e5")
        if row is not None:
            claim(
                f"{group} e5: hybrid R@1 >= {r1:.2f} and R@10 >= {r10:.2f}",
                row.r1 >= r1 and row.r10 >= r10,
                f"{row.r1:.3f}/{row.r10:.3f}",
            )
    for held in report.held_out:
        if held["embedder"] != "e5":
            continue
        loso = held["loso"]
        for name in ("rrf", "semantic", "lexical"):
            rival = held[name]
            claim(
                f"{held['held_out']} e5 leave-one-set-out: R@1, R@10 >= {name}",
                loso[0] >= rival[0] and loso[1] >= rival[1],
                f"{loso[0]:.3f}/{loso[1]:.3f} vs {rival[0]:.3f}/{rival[1]:.3f}",
            )
    febrl = report.candidate("febrl4")
    if febrl is not None:
        claim(
            "febrl4: lexical candidate recall >= .97 with <= 500 candidates per query",
            febrl.recall >= 0.97 and febrl.max <= 500,
            f"recall {febrl.recall:.3f}, max {febrl.max}",
        )
    surname = report.row("mentions/surname", "lexical", "-")
    if surname is not None:
        claim(
            "mentions: a surname alone finds its full name lexically (R@10 = 1)",
            surname.r10 == 1.0,
            f"R@10 {surname.r10:.3f}, empty {surname.empty}",
        )
    for found in report.candidates:
        if "/" not in found.group:
            claim(
                f"{found.group}: no empty lexical answer"
                " for a query sharing a word with its answer",
                found.empty_sharing_token == 0,
                f"{found.empty_sharing_token} empty",
            )
    return results


def table(report: Report) -> str:
    """The report as a fixed-width table, one block per group."""
    lines = []
    header = f"{'group':<22}{'method':<13}{'embedder':<9}{'queries':>8}"
    header += f"{'R@1':>7}{'R@10':>7}{'MRR@10':>8}{'empty':>7}{'p50 ms':>8}"
    lines.append(header)
    lines.append("-" * len(header))
    order = {"lexical": 0, "semantic": 1, "hybrid": 2, "jw-scan": 3, "cosine-scan": 4}
    seen: list[str] = []
    for row in report.rows:
        if row.group not in seen:
            seen.append(row.group)
    for group in seen:
        rows = sorted(
            (row for row in report.rows if row.group == group),
            key=lambda row: (row.embedder != "-", row.embedder, order[row.method]),
        )
        for row in rows:
            p50 = "" if row.p50_ms is None else f"{row.p50_ms:.2f}"
            lines.append(
                f"{group:<22}{row.method:<13}{row.embedder:<9}{row.queries:>8}"
                f"{row.r1:>7.3f}{row.r10:>7.3f}{row.mrr10:>8.3f}{row.empty:>7}{p50:>8}"
            )
        candidate = report.candidate(group)
        if candidate is not None:
            lines.append(
                f"{'':<22}candidates ({candidate.source}): recall {candidate.recall:.3f}, "
                f"mean {candidate.mean:.1f}, max {candidate.max}, none {candidate.none}; "
                f"empty lexical answers sharing a word: {candidate.empty_sharing_token}"
            )
        lines.append("")
    if report.held_out:
        lines.append("leave-one-set-out: evidence order fitted on the other sets (R@1/R@10)")
        heading = f"{'held out':<16}{'embedder':<9}"
        for name in ("rrf", "held-out fit", "semantic", "lexical", "shipped", "own fit"):
            heading += f"{name:>15}"
        lines.append(heading)
        lines.append("-" * len(heading))
        for held in report.held_out:
            shipped = report.row(held["held_out"], "hybrid", held["embedder"])
            cells = [held["rrf"], held["loso"], held["semantic"], held["lexical"]]
            cells.append((shipped.r1, shipped.r10) if shipped is not None else (float("nan"),) * 2)
            cells.append(held["own"])
            line = f"{held['held_out']:<16}{held['embedder']:<9}"
            line += "".join(f"{f'{r1:.3f}/{r10:.3f}':>15}" for r1, r10 in cells)
            lines.append(line)
        for label, weights in report.meta.get("fitted_weights", {}).items():
            shown = ", ".join(f"{name}={value}" for name, value in weights.items())
            lines.append(f"fitted on every set ({label}): {shown}")
        lines.append("")
    if report.checks:
        lines.append("must hold:")
        for each in report.checks:
            mark = "ok  " if each["passed"] else "FAIL"
            lines.append(f"  {mark} {each['claim']}: {each['detail']}")
    return "\n".join(lines)


def versions() -> dict[str, str]:
    found = {}
    for package in ("redstring", "recordlinkage", "countrynames", "pycountry", "nicknames"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "missing"
    return found


async def main(arguments: argparse.Namespace) -> Report:
    set_names = [name.strip() for name in arguments.sets.split(",") if name.strip()]
    wanted = ["fake", "e5"] if arguments.embedder == "all" else [arguments.embedder]
    embedders = [await new_embedder(name, arguments.cache_dir) for name in wanted]
    report = Report(
        meta={
            "k": K,
            "size": arguments.size,
            "embedders": wanted,
            "candidates": candidate_source(InMemoryGraphStore()),
            "versions": versions(),
        }
    )
    fusion: dict[str, dict[str, list[FusionQuery]]] = {}
    try:
        for name in set_names:
            labelled = load_set(name, size=arguments.size)
            print(f"{name}: {len(labelled.records)} entities, {len(labelled.queries)} queries",
                  file=sys.stderr)  # fmt: skip
            started = time.perf_counter()
            part = await evaluate(
                labelled,
                embedders,
                baselines=not arguments.no_baselines,
                names=wanted,
                fusion=fusion,
            )
            print(f"  measured in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            report.rows += part.rows
            report.candidates += part.candidates
    finally:
        for provider in embedders:
            if isinstance(provider, CachedEmbeddings):
                provider.close()
    for label, by_set in fusion.items():
        if len(by_set) < 2:
            continue  # nothing to fit on but the set judged
        for held in leave_one_set_out(by_set, K):
            report.held_out.append({"embedder": label, **asdict(held)})
        report.meta.setdefault("fitted_weights", {})[label] = asdict(fit(list(by_set.values())))
    report.checks = check(report)
    return report


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sets", default=",".join(SET_NAMES), help="comma-separated set names")
    parser.add_argument("--embedder", choices=["fake", "e5", "all"], default="all")
    parser.add_argument("--size", type=int, default=None, help="queries per set (a seeded cut)")
    parser.add_argument("--no-baselines", action="store_true", help="skip the full scans")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse()
    result = asyncio.run(main(options))
    if options.json:
        print(json.dumps({**asdict(result)}, indent=2))
    else:
        print(table(result))
