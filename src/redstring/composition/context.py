"""Free-text queries answered with a context: ranked passages, their entities and relationships.

`ContextRetriever` composes a `ChunkStore` (BM25 and mentions) + a graph
(+ optionally an `EmbeddingProvider` + a `VectorStore` of passage
vectors): the chunk store, the graph and the vector store are siblings
that may not import each other, so only composition can join a passage to
the entities it mentions and those entities to their relationships.

With `chunks` alone the context is the BM25 channel alone: its passages
are the chunk store's search, `score == bm25`. The other channels are
fused with it by normalized score (each channel's scores divided by its
best, then summed), so a passage that two channels rank well beats one
that a single channel ranks a little better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from redstring.domain.context import Context, ScoredPassage, fit_to_budget
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import ChunkId
from redstring.domain.limits import MAX_BUDGET_CHARS
from redstring.domain.retrieval import ScoredEntity
from redstring.domain.validation import (
    check_collaborator,
    check_integer,
    check_limit,
    check_query,
    check_tenant_id,
)
from redstring.ports.chunk_store import ChunkReader, MentionReader
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.graph_store import GraphReader
from redstring.ports.vector_store import VectorReader

if TYPE_CHECKING:
    from redstring.domain.chunk import Chunk
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship

#: How many candidates each channel proposes for fusion, at least.
_FUSION_DEPTH: Final = 50


def _normalized(scores: dict[ChunkId, float]) -> dict[ChunkId, float]:
    """Each score over the channel's best, so the best passage of every channel scores 1."""
    if not scores:
        return {}
    best = max(scores.values())
    return {chunk_id: score / best for chunk_id, score in scores.items()}


class ContextRetriever:
    """Answers a query with the passages, entities and relationships that bear on it.

    Holds a chunk store and, optionally, a graph (its entities, their
    relationships, and the chunk store's mentions joining the two) and an
    embedding provider with a vector store of passage vectors (keyed by
    chunk id, as `import_documents` writes them). Only reads.

    Raises:
        ValueError: a collaborator does not implement its port, a graph is
            given but `chunks` does not read mentions, or one of
            `embeddings` and `passage_vectors` is given without the other.
        DimensionMismatchError: `embeddings` and `passage_vectors` differ
            in dimension.
    """

    def __init__(
        self,
        *,
        chunks: ChunkReader,
        graph: GraphReader | None = None,
        embeddings: EmbeddingProvider | None = None,
        passage_vectors: VectorReader | None = None,
    ) -> None:
        check_collaborator(chunks, ChunkReader, argument="chunks")
        self._chunks = chunks
        self._mentions: MentionReader | None = None
        self._graph: GraphReader | None = None
        if graph is not None:
            check_collaborator(graph, GraphReader, argument="graph")
            check_collaborator(chunks, MentionReader, argument="chunks (given a graph)")
            self._graph = graph
            self._mentions = chunks  # type: ignore[assignment]
        if embeddings is not None:
            check_collaborator(embeddings, EmbeddingProvider, argument="embeddings")
        if passage_vectors is not None:
            check_collaborator(passage_vectors, VectorReader, argument="passage_vectors")
        if (embeddings is None) != (passage_vectors is None):
            raise ValueError(
                "embeddings and passage_vectors go together: the dense channel needs both"
            )
        self._dense: tuple[EmbeddingProvider, VectorReader] | None = None
        if embeddings is not None and passage_vectors is not None:
            if embeddings.dimension != passage_vectors.dimension:
                raise DimensionMismatchError(
                    expected=passage_vectors.dimension, actual=embeddings.dimension
                )
            self._dense = (embeddings, passage_vectors)

    async def retrieve_context(
        self,
        query: str,
        tenant_id: TenantId,
        *,
        k: int = 10,
        budget_chars: int | None = None,
    ) -> Context:
        """The at most `k` passages that best answer `query`, with their entities.

        Passages are ordered by fused score, then by `str(chunk.id)`. With
        `budget_chars`, the passages' texts together fit it: best first, a
        passage that does not fit whole trimmed at its last sentence end
        that fits, or skipped when none does (`fit_to_budget`).

        Raises:
            ValueError: a blank query, one longer than `MAX_QUERY_LENGTH` or
                not storable, a `tenant_id` that is not a `uuid.UUID`, a `k`
                not an integer within `0..MAX_LIMIT`, or a `budget_chars`
                not `None` nor an integer within `1..MAX_BUDGET_CHARS`.
            EmbeddingProviderError: the dense channel's model failed.
        """
        check_query(query)
        tenant = check_tenant_id(tenant_id)
        limit = check_limit(k, argument="k")
        if budget_chars is not None:
            check_integer(
                budget_chars, argument="budget_chars", minimum=1, maximum=MAX_BUDGET_CHARS
            )
        if limit == 0:
            return Context(query=query)
        passages = await self._passages(query, tenant, limit)
        if budget_chars is not None:
            passages = fit_to_budget(passages, budget_chars)
        entities, relationships = await self._entities(passages, tenant)
        return Context(
            query=query, passages=passages, entities=entities, relationships=relationships
        )

    async def _passages(self, query: str, tenant: TenantId, k: int) -> list[ScoredPassage]:
        if self._dense is None:
            found = await self._chunks.search(query, tenant, k=k)
            return [
                ScoredPassage(chunk=hit.chunk, score=hit.score, bm25=hit.score) for hit in found
            ]
        depth = max(k, _FUSION_DEPTH)
        hits = await self._chunks.search(query, tenant, k=depth)
        chunks: dict[ChunkId, Chunk] = {hit.chunk.id: hit.chunk for hit in hits}
        bm25 = {hit.chunk.id: hit.score for hit in hits}
        dense = await self._dense_scores(query, tenant, depth)
        missing = [chunk_id for chunk_id in dense if chunk_id not in chunks]
        if missing:
            for chunk in await self._chunks.get_chunks(missing, tenant):
                chunks[chunk.id] = chunk
        channels = [_normalized(bm25), _normalized(dense)]
        fused = {
            chunk_id: sum(channel.get(chunk_id, 0.0) for channel in channels) for chunk_id in chunks
        }
        order = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id.int))[:k]
        return [
            ScoredPassage(
                chunk=chunks[chunk_id],
                score=fused[chunk_id],
                bm25=bm25.get(chunk_id),
                dense=dense.get(chunk_id),
            )
            for chunk_id in order
        ]

    async def _dense_scores(self, query: str, tenant: TenantId, depth: int) -> dict[ChunkId, float]:
        assert self._dense is not None
        embeddings, vectors = self._dense
        [vector] = await embeddings.embed([query])
        matches = await vectors.search(vector, tenant, k=depth)
        return {ChunkId(match.entity_id): match.score for match in matches}

    async def _entities(
        self, passages: list[ScoredPassage], tenant: TenantId
    ) -> tuple[list[ScoredEntity], list[Relationship]]:
        """The entities the passages mention, scored by the passages' scores, and their edges."""
        if self._graph is None or self._mentions is None or not passages:
            return [], []
        graph = self._graph
        found = await self._mentions.mentions_in([p.chunk.id for p in passages], tenant)
        by_chunk = {p.chunk.id: p.score for p in passages}
        raw: dict[EntityId, float] = {}
        for mention in found:
            if mention.entity_id is not None:
                raw[mention.entity_id] = raw.get(mention.entity_id, 0.0) + by_chunk.get(
                    mention.chunk_id, 0.0
                )
        if not raw:
            return [], []
        canonical = await graph.resolve(list(raw), tenant)
        scores: dict[EntityId, float] = {}
        for entity_id, score in raw.items():
            target = canonical[entity_id]
            scores[target] = scores.get(target, 0.0) + score
        held: dict[EntityId, Entity] = {
            entity.id: entity for entity in await graph.get_entities(list(scores), tenant)
        }
        order = sorted(held, key=lambda entity_id: (-scores[entity_id], entity_id.int))
        entities = [ScoredEntity(entity=held[key], score=scores[key]) for key in order]
        return entities, await self._relationships(order, tenant)

    async def _relationships(
        self, entity_ids: list[EntityId], tenant: TenantId
    ) -> list[Relationship]:
        """The relationships with both ends among `entity_ids`, ordered by `str(id)`."""
        assert self._graph is not None
        wanted = set(entity_ids)
        kept: dict[str, Relationship] = {}
        for entity_id in entity_ids:
            for relationship in await self._graph.get_relationships(entity_id, tenant):
                if (
                    relationship.source_entity_id in wanted
                    and relationship.target_entity_id in wanted
                ):
                    kept[str(relationship.id)] = relationship
        return [kept[key] for key in sorted(kept)]
