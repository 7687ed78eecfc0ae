"""Free-text queries answered with ranked entities, from two channels fused by rank.

The semantic channel embeds the query and searches the vector store; the
lexical channel looks up candidates by the query's blocking keys and scores
them with `lexical_score`. `reciprocal_rank_fusion` combines the two id
rankings. This module only orchestrates: scoring and fusion are pure
functions in `domain`.

Lexical recall is bounded by blocking. A query that shares no blocking key
with an entity cannot be retrieved lexically, however high its string
similarity would have been. There is no text index in this library, so
candidates come from the same prefix and soundex keys consolidation uses. This
is the honest cost of storing no text, and it is the second reason this
channel is not called BM25.

A vector match whose entity the graph store does not have is skipped, and the
result is not backfilled to k. The two stores are independent projections of
one log and lag independently, so this is ordinary, not exceptional --
raising would make retrieval fail during replay, and topping up would turn a
badly lagging projection into silence.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from redstring.domain.blocking import query_blocking_keys
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.fusion import reciprocal_rank_fusion
from redstring.domain.json_safety import check_text
from redstring.domain.lexical import lexical_score
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.ports.embedding import EmbeddingProvider
    from redstring.ports.graph_store import GraphReader
    from redstring.ports.vector_store import VectorReader


async def _nothing() -> dict[EntityId, Any]:
    """What a channel that is off contributes: an empty ranking."""
    return {}


class Retriever:
    """Answers a query with the tenant's best-matching entities, best first.

    Holds an embedding provider, a vector store and a graph store; reads from
    the stores and never writes. The provider and the vector store must agree
    on the dimension.

    Raises:
        DimensionMismatchError: `embeddings` and `vectors` differ in dimension.
    """

    def __init__(
        self, *, embeddings: EmbeddingProvider, vectors: VectorReader, graph: GraphReader
    ) -> None:
        if embeddings.dimension != vectors.dimension:
            raise DimensionMismatchError(expected=vectors.dimension, actual=embeddings.dimension)
        self._embeddings = embeddings
        self._vectors = vectors
        self._graph = graph

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

        Raises:
            ValueError: a blank query or one no store could hold (NUL, an
                unpaired surrogate), a `k` that is not a non-negative integer,
                an unknown `mode`, or a bare string for `entity_types`.
            EmbeddingProviderError: the semantic channel's model failed.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-blank string, got {query!r}")
        check_text(query, field="query")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        try:
            mode = RetrievalMode(mode)
        except ValueError:
            modes = ", ".join(each.value for each in RetrievalMode)
            raise ValueError(f"unknown retrieval mode {mode!r}; expected one of {modes}") from None
        if isinstance(entity_types, str):
            raise ValueError(
                f"entity_types must be a sequence of types, not the string {entity_types!r}"
            )
        if k == 0 or entity_types == []:
            return RetrievalResult(query=query, matches=[])

        # The channels share nothing until fusion, so they run concurrently:
        # the embedding call and the graph lookup overlap.
        semantic, lexical = await asyncio.gather(
            self._semantic(query, tenant_id, k, entity_types)
            if mode in (RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)
            else _nothing(),
            self._lexical(query, tenant_id, k, entity_types)
            if mode in (RetrievalMode.LEXICAL, RetrievalMode.HYBRID)
            else _nothing(),
        )

        fused = reciprocal_rank_fusion([list(semantic), list(lexical)])[:k]
        entities = {entity_id: entity for entity_id, (entity, _) in lexical.items()}
        missing = [entity_id for entity_id, _ in fused if entity_id not in entities]
        if missing:
            for entity in await self._graph.get_entities(missing, tenant_id):
                entities[entity.id] = entity
        return RetrievalResult(
            query=query,
            matches=[
                ScoredEntity(
                    entity=entities[entity_id],
                    score=score,
                    semantic=semantic.get(entity_id),
                    lexical=lexical[entity_id][1] if entity_id in lexical else None,
                )
                for entity_id, score in fused
                if entity_id in entities
            ],
        )

    async def _semantic(
        self,
        query: str,
        tenant_id: TenantId,
        k: int,
        entity_types: Sequence[str] | None,
    ) -> dict[EntityId, float]:
        """The vector store's best `k` for the query's embedding: score per id, best first.

        Ids follow merges: a vector of an entity merged into another counts
        for the canonical one, which keeps its best score, so each real-world
        entity is ranked once.
        """
        [vector] = await self._embeddings.embed([query])
        matches = await self._vectors.search(vector, tenant_id, k=k, entity_types=entity_types)
        if not matches:
            return {}
        canonical = await self._graph.resolve([match.entity_id for match in matches], tenant_id)
        scores: dict[EntityId, float] = {}
        for match in matches:
            scores.setdefault(canonical[match.entity_id], match.score)
        return scores

    async def _lexical(
        self,
        query: str,
        tenant_id: TenantId,
        k: int,
        entity_types: Sequence[str] | None,
    ) -> dict[EntityId, tuple[Entity, float]]:
        """Blocking-key candidates that pass the type filter, scored, best `k` first."""
        groups = await self._graph.find_by_blocking_keys(query_blocking_keys(query), tenant_id)
        allowed = None if entity_types is None else frozenset(entity_types)
        scored: dict[EntityId, tuple[Entity, float]] = {}
        for group in groups.values():
            for entity in group:
                if entity.id in scored:
                    continue
                if allowed is not None and entity.entity_type not in allowed:
                    continue
                scored[entity.id] = (entity, lexical_score(query, entity))
        ranked = sorted(scored.items(), key=lambda item: (-item[1][1], str(item[0])))
        return dict(ranked[:k])
