"""Free-text queries answered with ranked entities, from two channels fused by rank.

The semantic channel embeds the query and searches the vector store; the
lexical channel takes the graph store's name candidates (entities sharing
character trigrams of a name or alias, or of its romanization, with the
query; ADRs 0014 and 0041), adds the entities under the query's blocking
keys when fewer than `k` candidates pass the type filter (ADR 0042), and
scores them with `lexical_score`; equal scores break by `unit_overlap`.
A graph with no name index (an `EntityReader` alone) gives the blocking-key
groups as the only candidates.
`reciprocal_rank_fusion` combines the two id rankings and picks the best
`k`; ties in the fused score break by the evidence (the component scores),
and only then by id (ADR 0016). In `HYBRID` those `k` are then ordered by
`evidence_order`'s calibrated log-odds over each channel's rank, score and
gap to its first score, with shipped coefficients (ADR 0104), so a weak
lexical-only answer follows a confident semantic one instead of tying it;
how well each candidate holds the query's rare words, among all the
candidates both channels returned, is evidence too (`word_rarity_matches`,
ADR 0116), and so are each candidate's `unit_overlap` with the query and,
for a candidate only the semantic channel returned, its `lexical_score`
measured anyway (ADR 0119).
This module only orchestrates: scoring and fusion are pure functions in
`domain`.

Lexical recall is bounded by the name index. A query that shares fewer than
`MIN_SHARED_UNITS` trigrams with every name and alias of an entity, and no
blocking key, cannot be retrieved lexically; when nothing shares enough the
channel returns nothing rather than its least bad guess. At most
`_LEXICAL_CANDIDATES` (50) candidates are scored, chosen before the
`entity_types` filter. There is still no text index over documents, which is
why this channel is not called BM25 (ADR 0009).

A vector match whose entity the graph store does not have is skipped, and the
result is not backfilled to k; `RetrievalResult.skipped` counts it. The two
stores are independent projections of one log and lag independently, so this
is ordinary, not exceptional -- raising would make retrieval fail during
replay, and topping up would turn a badly lagging projection into silence.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING

from redstring.domain.blocking import query_blocking_keys
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.fusion import evidence_order, reciprocal_rank_fusion
from redstring.domain.lexical import lexical_scores, word_rarity_matches
from redstring.domain.limits import MAX_LIMIT
from redstring.domain.names import unit_overlap
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.validation import (
    check_collaborator,
    check_entity_types,
    check_limit,
    check_query,
    check_tenant_id,
)
from redstring.graph.stored import copy_entity
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.graph_store import (
    EntityReader,
    MergeResolver,
    NameCandidateReader,
    SharedNameCandidateReader,
)
from redstring.ports.vector_store import VectorReader

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.vector import VectorMatch


#: How many name candidates the lexical channel scores. On the quality
#: bench's four sets, 50 gave lexical R@1 and R@10 as good as 100 or 500, at
#: a tenth of the cost of 500; see ADR 0014.
_LEXICAL_CANDIDATES = 50


class Retriever:
    """Answers a query with the tenant's best-matching entities, best first.

    Holds a graph store and, for the semantic channel, an embedding provider
    and a vector store; reads from the stores and never writes. The graph
    needs only `EntityReader`'s two reads; a `GraphReader` also lends its
    name index and its merges (see `EntityReader`). The provider
    and the vector store come together or not at all, and must agree on the
    dimension. Without them only `RetrievalMode.LEXICAL` is available.

    Raises:
        ValueError: one of `embeddings` and `vectors` without the other.
        DimensionMismatchError: `embeddings` and `vectors` differ in dimension.
        ValueError: a collaborator does not implement its port (`None`, say).
    """

    def __init__(
        self,
        *,
        graph: EntityReader,
        embeddings: EmbeddingProvider | None = None,
        vectors: VectorReader | None = None,
    ) -> None:
        check_collaborator(graph, EntityReader, argument="graph")
        if embeddings is not None:
            check_collaborator(embeddings, EmbeddingProvider, argument="embeddings")
        if vectors is not None:
            check_collaborator(vectors, VectorReader, argument="vectors")
        if (embeddings is None) != (vectors is None):
            given, missing = (
                ("embeddings", "vectors") if vectors is None else ("vectors", "embeddings")
            )
            raise ValueError(
                f"{given} was given without {missing}: the semantic channel needs both, "
                "a lexical-only Retriever neither"
            )
        self._channel: tuple[EmbeddingProvider, VectorReader] | None = None
        if embeddings is not None and vectors is not None:
            self._check_dimensions(embeddings, vectors)
            self._channel = (embeddings, vectors)
        self._graph = graph
        # Asked once: a protocol check that fails walks every member each time.
        self._lender = graph if isinstance(graph, SharedNameCandidateReader) else None
        self._names = graph if isinstance(graph, NameCandidateReader) else None
        self._resolver = graph if isinstance(graph, MergeResolver) else None

    @staticmethod
    def _check_dimensions(embeddings: EmbeddingProvider, vectors: VectorReader) -> None:
        if embeddings.dimension != vectors.dimension:
            raise DimensionMismatchError(expected=vectors.dimension, actual=embeddings.dimension)

    async def retrieve(
        self,
        query: str,
        tenant_id: TenantId,
        *,
        k: int = 10,
        mode: RetrievalMode = RetrievalMode.HYBRID,
        entity_types: Sequence[str] | None = None,
    ) -> RetrievalResult:
        """The at most `k` entities of `tenant_id` that best match `query`.

        `mode` picks the channels; `entity_types` keeps only entities whose
        type is one of them, exactly and case-sensitively, on both channels
        and before `k` (`None` is no filter, `[]` matches nothing). Each match
        carries the fused score and the component scores of the channels
        that ranked it. See the module docstring for what lexical recall
        cannot reach and for vector matches the graph lacks.

        Which `k` are returned is fusion's choice: by fused score, equal
        fused scores by the sum of the component scores, higher first, then
        by `str(id)`. `score` is always that fused (RRF) score. In `HYBRID`,
        with both channels answering, those `k` are ordered by the
        calibrated evidence of ADR 0104, each one's share of it in
        `evidence`; one channel alone keeps its own order.

        Raises:
            ValueError: a blank query, one longer than `MAX_QUERY_LENGTH` or
                one no store could hold (NUL, an unpaired surrogate), a
                `tenant_id` that is not a `uuid.UUID`, a `k` that is not an
                integer within `0..MAX_LIMIT`, an unknown `mode`,
                `entity_types` that is not a sequence of type names, or a
                semantic or hybrid `mode` on a Retriever built without
                `embeddings` and `vectors`.
            EmbeddingProviderError: the semantic channel's model failed.
        """
        check_query(query), check_tenant_id(tenant_id), check_limit(k, argument="k")
        try:
            mode = RetrievalMode(mode)
        except ValueError:
            modes = ", ".join(each.value for each in RetrievalMode)
            raise ValueError(f"unknown retrieval mode {mode!r}; expected one of {modes}") from None
        check_entity_types(entity_types)
        if mode is not RetrievalMode.LEXICAL and self._channel is None:
            raise ValueError(
                f"mode {mode.value!r} needs the semantic channel; this Retriever was built "
                "without embeddings and vectors, so only 'lexical' is available"
            )
        if k == 0 or entity_types == []:
            return RetrievalResult(query=query, matches=[])

        # The channels share nothing until fusion, so when both are on they
        # run concurrently: the embedding call and the graph lookup overlap.
        # One channel alone is awaited directly; a task per call costs more
        # than a whole search of a small tenant.
        channel = self._channel if mode is not RetrievalMode.LEXICAL else None
        lexical_on = mode in (RetrievalMode.LEXICAL, RetrievalMode.HYBRID)
        semantic: list[tuple[EntityId, float]] = []
        lexical: dict[EntityId, tuple[Entity, float]] = {}
        if channel is not None and lexical_on:
            semantic, lexical = await asyncio.gather(
                self._semantic(channel, query, tenant_id, k, entity_types),
                self._lexical(query, tenant_id, k, entity_types),
            )
        elif channel is not None:
            semantic = await self._semantic(channel, query, tenant_id, k, entity_types)
        else:
            lexical = await self._lexical(query, tenant_id, k, entity_types)

        # Keyed by `id.int` from here on: a `UUID` hashes in Python, an `int` in C.
        semantic_scores = {entity_id.int: score for entity_id, score in semantic}
        lexical_found = {entity_id.int: scored for entity_id, scored in lexical.items()}
        # RRF picks the `k` and scores them; the calibrated evidence orders them (ADR 0104).
        lexical_ranking = [(entity_id, scored[1]) for entity_id, scored in lexical.items()]
        shared = bool(semantic) and bool(lexical_ranking)
        entities = {key: entity for key, (entity, _) in lexical_found.items()}
        if shared:
            # Every candidate's names are read first: what they say of each,
            # among them all, is evidence (ADRs 0116, 0119).
            await self._read_missing(semantic, entities, tenant_id)
            unranked = [entity for key, entity in entities.items() if key not in lexical_found]
            fused = evidence_order(
                semantic,
                lexical_ranking,
                k,
                words=word_rarity_matches(query, entities.values()),
                unranked_lexical=dict(
                    zip(
                        (entity.id for entity in unranked),
                        lexical_scores(query, unranked),
                        strict=True,
                    )
                ),
                overlaps={entity.id: unit_overlap(query, entity) for entity in entities.values()},
            )
        else:
            fused = evidence_order(semantic, lexical_ranking, k)
        rrf = (
            dict(reciprocal_rank_fusion([[entity_id for entity_id, _ in semantic], list(lexical)]))
            if shared
            else {}
        )
        if not shared:
            await self._read_missing(fused, entities, tenant_id)
        matches = []
        for entity_id, score in fused:
            key = entity_id.int
            found = entities.get(key)
            if found is not None:
                lexical_match = lexical_found.get(key)
                matches.append(
                    ScoredEntity(
                        entity=found,
                        score=rrf[entity_id] if shared else score,
                        semantic=semantic_scores.get(key),
                        lexical=None if lexical_match is None else lexical_match[1],
                        evidence=score if shared else None,
                    )
                )
        skipped = len(fused) - len(matches)
        if skipped:
            return RetrievalResult(query=query, matches=matches, skipped=skipped)
        return RetrievalResult(query=query, matches=matches)

    async def _read_missing(
        self,
        ranking: Sequence[tuple[EntityId, float]],
        entities: dict[int, Entity],
        tenant_id: TenantId,
    ) -> None:
        """Add to `entities` (by `id.int`) those of `ranking` it lacks that the graph holds."""
        missing = [entity_id for entity_id, _ in ranking if entity_id.int not in entities]
        if missing:
            for entity in await self._graph.get_entities(missing, tenant_id):
                entities[entity.id.int] = entity

    async def _semantic(
        self,
        channel: tuple[EmbeddingProvider, VectorReader],
        query: str,
        tenant_id: TenantId,
        k: int,
        entity_types: Sequence[str] | None,
    ) -> list[tuple[EntityId, float]]:
        """The vector store's best `k` for the query's embedding: (id, score), best first.

        With `entity_types`, the vector store's filter (on the type each
        vector was written with) proposes candidates and the graph judges
        them: a match whose entity the graph now holds under another type is
        dropped, and the search widens until `k` pass, the store runs out or
        the search reaches `MAX_LIMIT`. A match the graph lacks is kept here
        and skipped later, never backfilled. Ids follow merges: a vector of
        an entity merged into another counts for the canonical one, which
        keeps its best score, so each real-world entity is ranked once.
        """
        embeddings, vectors = channel
        [vector] = await embeddings.embed([query])
        if entity_types is None:
            return await self._canonical(await vectors.search(vector, tenant_id, k=k), tenant_id)
        allowed = frozenset(entity_types)
        types: dict[EntityId, str] = {}
        wanted = k
        while True:
            matches = await vectors.search(vector, tenant_id, k=wanted, entity_types=entity_types)
            unseen = [match.entity_id for match in matches if match.entity_id not in types]
            for entity in await self._graph.get_entities(unseen, tenant_id) if unseen else ():
                types[entity.id] = entity.entity_type
            kept = [
                match
                for match in matches
                if match.entity_id not in types or types[match.entity_id] in allowed
            ]
            if len(kept) >= k or len(matches) < wanted or wanted >= MAX_LIMIT:
                return await self._canonical(kept[:k], tenant_id)
            wanted = min(MAX_LIMIT, 2 * wanted)

    async def _canonical(
        self, matches: Sequence[VectorMatch], tenant_id: TenantId
    ) -> list[tuple[EntityId, float]]:
        """(Canonical id, score), best first: a merged entity's match counts for its canonical.

        Each canonical id appears once, with the score of its first (best) match.
        """
        if not matches:
            return []
        ids = [match.entity_id for match in matches]
        resolver = self._resolver
        canonical = dict(zip(ids, ids, strict=True))
        if resolver is not None:
            canonical = await resolver.resolve(ids, tenant_id)
        seen: set[int] = set()
        scores: list[tuple[EntityId, float]] = []
        for match in matches:
            entity_id = canonical[match.entity_id]
            if entity_id.int not in seen:
                seen.add(entity_id.int)
                scores.append((entity_id, match.score))
        return scores

    async def _lexical(
        self,
        query: str,
        tenant_id: TenantId,
        k: int,
        entity_types: Sequence[str] | None,
    ) -> dict[EntityId, tuple[Entity, float]]:
        """Name and blocking-key candidates that pass the type filter, scored, best `k` first.

        The name index's candidates are scored first; the blocking-key groups
        are read and scored only when fewer than `k` of those pass the type
        filter. An entity the index ranks below its first
        `_LEXICAL_CANDIDATES` shares no more units with the query than any
        one scored, so it reaches the top `k` so rarely that reading and
        scoring the groups (about as many entities again) on every query
        costs more than it finds (ADR 0042); an entity reachable only through
        its keys is still found whenever the index has too little to say.
        """
        allowed = None if entity_types is None else frozenset(entity_types)
        graph, lender, names = self._graph, self._lender, self._names
        # A store that lends its own entities saves a copy per candidate; only
        # the `k` returned are copied, below. Its candidates are distinct
        # rows of its index, so they need no check for repeats either.
        lent = lender is not None
        if lender is not None:
            found = await lender.find_shared_name_candidates(
                query, tenant_id, limit=_LEXICAL_CANDIDATES
            )
        elif names is not None:
            found = _distinct(
                await names.find_name_candidates(query, tenant_id, limit=_LEXICAL_CANDIDATES), set()
            )
        else:
            found = []  # No name index: the blocking-key groups are the candidates.
        entities = found if allowed is None else [e for e in found if e.entity_type in allowed]
        scores = lexical_scores(query, entities)
        if len(entities) < k:
            groups = await graph.find_by_blocking_keys(query_blocking_keys(query), tenant_id)
            seen = {entity.id.int for entity in entities}
            for group in groups.values():
                kept = [
                    entity
                    for entity in _distinct(group, seen)
                    if allowed is None or entity.entity_type in allowed
                ]
                entities.extend(kept)
                scores.extend(lexical_scores(query, kept))
        # Equal scores are common (a bare surname scores every name carrying
        # it alike): they break by unit overlap, then by id (ADR 0042). Only
        # scores at or above the k-th can reach the answer, so only their
        # ties are broken.
        chosen: Sequence[int] = range(len(scores))
        if len(scores) > k:
            cut = sorted(scores, reverse=True)[k - 1]
            chosen = [row for row in chosen if scores[row] >= cut]
        tied = {
            score for score, count in Counter(scores[row] for row in chosen).items() if count > 1
        }
        ranked = sorted(
            chosen,
            key=lambda row: (
                -scores[row],
                -unit_overlap(query, entities[row]) if scores[row] in tied else 0.0,
                entities[row].id.int,
            ),
        )[:k]
        if lent:
            return {entities[row].id: (copy_entity(entities[row]), scores[row]) for row in ranked}
        return {entities[row].id: (entities[row], scores[row]) for row in ranked}


def _distinct(group: Sequence[Entity], seen: set[int]) -> list[Entity]:
    """The entities of `group` whose `id.int` is not in `seen`, each once, in order."""
    # Keyed by `id.int`: a `UUID` hashes in Python, an `int` in C.
    kept = []
    for entity in group:
        key = entity.id.int
        if key not in seen:
            seen.add(key)
            kept.append(entity)
    return kept
