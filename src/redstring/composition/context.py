"""Free-text queries answered with a context: ranked passages, their entities and relationships.

`ContextRetriever` composes a `ChunkStore` (BM25 and mentions) + a graph
(+ optionally an `EmbeddingProvider` + a `VectorStore` of passage
vectors): the chunk store, the graph and the vector store are siblings
that may not import each other, so only composition can join a passage to
the entities it mentions and those entities to their relationships.

With `chunks` alone the context is the BM25 channel alone: its passages
are the chunk store's search, `score == bm25`. The other channels are
fused with it by normalized score (each channel's scores divided by its
best, then weighted and summed), so a passage that two channels rank well
beats one that a single channel ranks a little better.

Given a graph, the query's entities are linked (`link_query`, ADR 0077)
and, with the subjects of the best BM25 passages, seed a walk over the
graph's relationships (`redstring.graph.walk`, ADR 0078); where the
query composes relations ("the sister of the uncle of X"), the entities
its chain binds from the same seeds (`redstring.graph.chains`, ADR 0126)
score well above the rest, and each of its answers comes with the path that
reached it (ADR 0128). Passages score by the entities the walk
reached that they mention, under their own ids or, on a graph that lists
them (`MergedIdReader`), those merged into them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from redstring.domain.context import (
    Context,
    ContextSettings,
    RelationPath,
    ScoredPassage,
    fit_to_budget,
)
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import ChunkId
from redstring.domain.limits import MAX_BUDGET_CHARS
from redstring.domain.linking import name_key
from redstring.domain.names import entity_names
from redstring.domain.query_linking import FIT_FLOOR, link_query, type_fit
from redstring.domain.relation_chains import read_relation_chain
from redstring.domain.retrieval import ScoredEntity
from redstring.domain.validation import (
    check_collaborator,
    check_integer,
    check_limit,
    check_query,
    check_tenant_id,
)
from redstring.graph.chains import follow_chain
from redstring.graph.walk import PassageMention, Walk, score_passages, walk
from redstring.ports.chunk_store import ChunkReader, MentionReader
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.graph_reads import read_merged_ids
from redstring.ports.graph_store import GraphReader, MergedIdReader
from redstring.ports.vector_store import VectorReader

if TYPE_CHECKING:
    from collections.abc import Mapping

    from redstring.domain.chunk import Chunk, ScoredChunk
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.graph.chains import ChainPath

#: How many candidates each channel proposes for fusion, at least.
_FUSION_DEPTH: Final = 50
#: How many name-index candidates the query's entities are linked from.
_LINK_CANDIDATES: Final = 50
#: The seed weight of a best BM25 passage's subject, beside linked entities (whose weight is
#: their link score); alone, they seed with their normalized BM25 score.
_PASSAGE_SEED_SHARE: Final = 0.5


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
    chunk id, as `import_documents` writes them). Only reads. `settings`
    tunes the walk and the fusion (`ContextSettings`; the defaults are what
    measured best, ADR 0078).

    Raises:
        ValueError: a collaborator does not implement its port, a graph is
            given but `chunks` does not read mentions, one of `embeddings`
            and `passage_vectors` is given without the other, or `settings`
            is not a `ContextSettings`.
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
        settings: ContextSettings | None = None,
    ) -> None:
        check_collaborator(chunks, ChunkReader, argument="chunks")
        if settings is not None and not isinstance(settings, ContextSettings):
            raise ValueError(
                f"settings must be a ContextSettings, got {type(settings).__name__} {settings!r}"
            )
        self._settings = settings if settings is not None else ContextSettings()
        self._chunks = chunks
        self._mentions: MentionReader | None = None
        self._graph: GraphReader | None = None
        self._merges: MergedIdReader | None = None
        if graph is not None:
            check_collaborator(graph, GraphReader, argument="graph")
            check_collaborator(chunks, MentionReader, argument="chunks (given a graph)")
            self._graph = graph
            self._mentions = chunks  # type: ignore[assignment]
            self._merges = graph if isinstance(graph, MergedIdReader) else None
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
        """The at most `k` passages that best answer `query`, with its entities and relationships.

        Passages are ordered by fused score, then by `str(chunk.id)`. With
        a graph, `entities` are the at most `k` best of the entities the
        walk reached and those the passages are about, each scored by the
        walk and by the best passage about it (`subject_weight`, ADR 0079),
        `relationships` those the walk read between two of them,
        ordered by `str(id)`, and `paths` the path by which the query's
        relation chain reached each of `entities` it answers with, in
        their order (ADR 0128). With
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
        if self._graph is None and self._dense is None:
            found = await self._chunks.search(query, tenant, k=limit)
            passages = [
                ScoredPassage(chunk=hit.chunk, score=hit.score, bm25=hit.score) for hit in found
            ]
            return Context(query=query, passages=_fitted(passages, budget_chars))
        depth = max(limit, _FUSION_DEPTH)
        hits = await self._chunks.search(query, tenant, k=depth)
        chunks: dict[ChunkId, Chunk] = {hit.chunk.id: hit.chunk for hit in hits}
        bm25 = {hit.chunk.id: hit.score for hit in hits}
        dense = await self._dense_scores(query, tenant, depth) if self._dense else {}
        walked: Walk | None = None
        trails: dict[EntityId, ChainPath] = {}
        graph: dict[ChunkId, float] = {}
        if self._graph is not None:
            walked, trails = await self._walk(self._graph, query, tenant, hits)
            graph = await self._graph_passages(self._graph, walked, tenant, chunks)
        missing = [chunk_id for chunk_id in dense if chunk_id not in chunks]
        if missing:
            for chunk in await self._chunks.get_chunks(missing, tenant):
                chunks[chunk.id] = chunk
        settings = self._settings
        channels = [
            (1.0, _normalized(bm25)),
            (settings.dense_weight, _normalized(dense)),
            (settings.graph_weight, _normalized(graph)),
        ]
        fused = {
            chunk_id: sum(weight * channel.get(chunk_id, 0.0) for weight, channel in channels)
            for chunk_id in chunks
        }
        order = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id.int))[:limit]
        passages = [
            ScoredPassage(
                chunk=chunks[chunk_id],
                score=fused[chunk_id],
                bm25=bm25.get(chunk_id),
                graph=graph.get(chunk_id),
                dense=dense.get(chunk_id),
            )
            for chunk_id in order
        ]
        if walked is None or self._graph is None:
            return Context(query=query, passages=_fitted(passages, budget_chars))
        entities, relationships = await self._entities(self._graph, walked, tenant, limit, passages)
        paths = await _paths(self._graph, trails, entities, tenant)
        passages = _fitted(passages, budget_chars)
        return Context(
            query=query,
            passages=passages,
            entities=entities,
            relationships=relationships,
            paths=paths,
        )

    async def _dense_scores(self, query: str, tenant: TenantId, depth: int) -> dict[ChunkId, float]:
        assert self._dense is not None
        embeddings, vectors = self._dense
        [vector] = await embeddings.embed([query])
        matches = await vectors.search(vector, tenant, k=depth)
        return {ChunkId(match.entity_id): match.score for match in matches}

    async def _walk(
        self, graph: GraphReader, query: str, tenant: TenantId, hits: list[ScoredChunk]
    ) -> tuple[Walk, dict[EntityId, ChainPath]]:
        """Walk from the query's linked entities and the subjects of its best BM25 passages.

        With `follow_chains` and a query that composes relations, the
        entities its chain binds from the same seeds score `chain_weight`
        (over the chain's best) on top of their walk score over the walk's
        best (ADR 0126); the chain's answers come with their paths.
        """
        seeds, names = await self._seeds(graph, query, tenant, hits)
        read: dict[EntityId, list[Relationship]] = {}
        walked = await self._spread(graph, query, tenant, seeds, read)
        settings = self._settings
        # A word of a linked name ("Will Son") is the name's, not a relation.
        chain = read_relation_chain(query).outside(names) if settings.follow_chains else None
        if chain is None or not chain.terms or not seeds:
            return walked, {}
        followed = await follow_chain(
            graph, tenant, seeds, chain, limit=settings.chain_limit, read=read
        )
        walk_best = max(walked.scores.values(), default=0.0)
        chain_best = max(followed.scores.values(), default=0.0)
        combined = Walk(relationships={**walked.relationships, **followed.relationships})
        for entity_id, score in walked.scores.items():
            combined.scores[entity_id] = score / walk_best if walk_best > 0 else 0.0
        for entity_id, score in followed.scores.items():
            gained = settings.chain_weight * score / chain_best if chain_best > 0 else 0.0
            combined.scores[entity_id] = combined.scores.get(entity_id, 0.0) + gained
        return combined, followed.paths

    async def _seeds(
        self, graph: GraphReader, query: str, tenant: TenantId, hits: list[ScoredChunk]
    ) -> tuple[dict[EntityId, float], list[tuple[int, int]]]:
        """The walk's seeds, and the spans of the query that name the linked ones.

        The seeds are the query's linked entities (by link score) and the
        subjects of its best BM25 passages.
        """
        settings = self._settings
        seeds: dict[EntityId, float] = {}
        names: list[tuple[int, int]] = []
        if settings.link_entities:
            candidates = await graph.find_name_candidates(query, tenant, limit=_LINK_CANDIDATES)
            for link in link_query(query, candidates):
                seeds[link.entity.id] = max(seeds.get(link.entity.id, 0.0), link.score)
                names.append((link.start, link.end))
        top = hits[: settings.passage_seeds]
        if top and self._mentions is not None:
            best = top[0].score
            share = _PASSAGE_SEED_SHARE if seeds else 1.0
            subjects = await self._subjects(graph, [hit.chunk for hit in top], tenant)
            for hit in top:
                for entity_id in subjects.get(hit.chunk.id, ()):
                    seeds[entity_id] = seeds.get(entity_id, 0.0) + share * hit.score / best
        return seeds, names

    async def _spread(
        self,
        graph: GraphReader,
        query: str,
        tenant: TenantId,
        seeds: dict[EntityId, float],
        read: dict[EntityId, list[Relationship]],
    ) -> Walk:
        """The walk from `seeds`, each relationship weighted by how well its type fits `query`.

        `read` gains the relationships the walk reads.
        """
        settings = self._settings
        fits: dict[str, float] = {}

        def edge_weight(relationship_type: str, forward: bool) -> float:
            if not settings.weight_edges:
                return 1.0
            if not forward and settings.forward_fit:
                return FIT_FLOOR / (1.0 + FIT_FLOOR)
            weight = fits.get(relationship_type)
            if weight is None:
                weight = (FIT_FLOOR + type_fit(query, relationship_type)) / (1.0 + FIT_FLOOR)
                fits[relationship_type] = weight
            return weight

        return await walk(
            graph,
            tenant,
            seeds,
            edge_weight=edge_weight,
            depth=settings.depth,
            decay=settings.decay,
            frontier=settings.frontier,
            normalize=settings.normalize,
            best_path=settings.best_path,
            read=read,
        )

    async def _subjects(
        self, graph: GraphReader, chunks: list[Chunk], tenant: TenantId
    ) -> dict[ChunkId, list[EntityId]]:
        """The entities each chunk is about: mentioned, and named as its document's title."""
        assert self._mentions is not None
        titles = {chunk.id: _title_key(chunk) for chunk in chunks}
        mentions = await self._mentions.mentions_in([chunk.id for chunk in chunks], tenant)
        said = list(dict.fromkeys(m.entity_id for m in mentions if m.entity_id is not None))
        # A mention keeps the id it was recorded with, perhaps merged away since.
        canonical = await graph.resolve(said, tenant) if said else {}
        ids = list(dict.fromkeys(canonical.values()))
        names = {entity.id: _name_keys(entity) for entity in await graph.get_entities(ids, tenant)}
        found: dict[ChunkId, list[EntityId]] = {}
        for mention in mentions:
            entity_id = None if mention.entity_id is None else canonical.get(mention.entity_id)
            title = titles.get(mention.chunk_id)
            if entity_id is None or not title or title not in names.get(entity_id, ()):
                continue
            listed = found.setdefault(mention.chunk_id, [])
            if entity_id not in listed:
                listed.append(entity_id)
        return found

    async def _graph_passages(
        self,
        graph: GraphReader,
        walked: Walk,
        tenant: TenantId,
        chunks: dict[ChunkId, Chunk],
    ) -> dict[ChunkId, float]:
        """The passages mentioning the walk's best entities, scored by them; fills `chunks`."""
        if self._mentions is None or not walked.scores:
            return {}
        scores = walked.scores
        reached = sorted(scores, key=lambda key: (-scores[key], key.int))[: self._settings.reach]
        said_as = await self._said_as(reached, tenant)
        mentions = await self._mentions.mentions_of(tenant, entity_ids=list(said_as))
        wanted = list(dict.fromkeys(m.chunk_id for m in mentions))
        missing = [chunk_id for chunk_id in wanted if chunk_id not in chunks]
        if missing:
            for chunk in await self._chunks.get_chunks(missing, tenant):
                chunks[chunk.id] = chunk
        names = {e.id: _name_keys(e) for e in await graph.get_entities(reached, tenant)}
        pairs = []
        for mention in mentions:
            held = chunks.get(mention.chunk_id)
            entity_id = None if mention.entity_id is None else said_as.get(mention.entity_id)
            if entity_id is None or held is None:
                continue
            title = _title_key(held)
            about = bool(title) and title in names.get(entity_id, ())
            pairs.append(PassageMention(mention.chunk_id, entity_id, about))
        return score_passages(
            scores, pairs, about=self._settings.about, best_only=self._settings.best_entity
        )

    async def _said_as(
        self, entity_ids: list[EntityId], tenant: TenantId
    ) -> dict[EntityId, EntityId]:
        """Each id a mention of the entities may carry, to its entity: theirs and those merged in.

        Mentions keep the id they were recorded with (ADR 0074); a graph
        that lists merged ids (`MergedIdReader`, ADR 0085) lets the walk's
        canonical entities read the mentions of the ids merged into them.
        """
        found = {entity_id: entity_id for entity_id in entity_ids}
        if self._merges is not None and entity_ids:
            merged_into = await read_merged_ids(self._merges, entity_ids, tenant)
            for entity_id in entity_ids:
                for merged in merged_into[entity_id]:
                    found.setdefault(merged, entity_id)
        return found

    async def _entities(
        self,
        graph: GraphReader,
        walked: Walk,
        tenant: TenantId,
        k: int,
        passages: list[ScoredPassage],
    ) -> tuple[list[ScoredEntity], list[Relationship]]:
        """The best `k` entities the graph holds, and the relationships the walk read among them.

        An entity scores its walk score over the walk's best, plus
        `subject_weight` times the fused score (over the best) of the best
        passage about it among `passages`.
        """
        walk_best = max(walked.scores.values(), default=0.0)
        scores = {key: value / walk_best for key, value in walked.scores.items() if walk_best > 0}
        weight = self._settings.subject_weight
        if weight > 0 and passages:
            fused_best = passages[0].score
            subjects = await self._subjects(graph, [p.chunk for p in passages], tenant)
            gained: dict[EntityId, float] = {}
            for passage in passages:
                share = weight * passage.score / fused_best if fused_best > 0 else 0.0
                for entity_id in subjects.get(passage.chunk.id, ()):
                    gained[entity_id] = max(gained.get(entity_id, 0.0), share)
            for entity_id, share in gained.items():
                scores[entity_id] = scores.get(entity_id, 0.0) + share
        order = sorted(scores, key=lambda key: (-scores[key], key.int))
        held = {e.id: e for e in await graph.get_entities(order[: 2 * k], tenant)}
        kept = [entity_id for entity_id in order[: 2 * k] if entity_id in held][:k]
        entities = [ScoredEntity(entity=held[key], score=scores[key]) for key in kept]
        wanted = set(kept)
        relationships = [
            edge
            for edge in walked.relationships.values()
            if edge.source_entity_id in wanted and edge.target_entity_id in wanted
        ]
        relationships.sort(key=lambda edge: edge.id.int)
        return entities, relationships


async def _paths(
    graph: GraphReader,
    trails: Mapping[EntityId, ChainPath],
    entities: list[ScoredEntity],
    tenant: TenantId,
) -> list[RelationPath]:
    """The chain's path to each of `entities` it answers with, in their order.

    The entities a path crosses that the context does not hold are read in
    one batch; a path through an entity the graph no longer holds is left
    out.
    """
    answered = [scored.entity.id for scored in entities if scored.entity.id in trails]
    if not answered:
        return []
    held = {scored.entity.id: scored.entity for scored in entities}
    missing = [
        entity_id for key in answered for entity_id in trails[key].entities if entity_id not in held
    ]
    if missing:
        found = await graph.get_entities(list(dict.fromkeys(missing)), tenant)
        held.update((entity.id, entity) for entity in found)
    return [
        RelationPath(
            entities=[held[entity_id] for entity_id in trails[key].entities],
            relationships=list(trails[key].relationships),
        )
        for key in answered
        if all(entity_id in held for entity_id in trails[key].entities)
    ]


def _fitted(passages: list[ScoredPassage], budget_chars: int | None) -> list[ScoredPassage]:
    return passages if budget_chars is None else fit_to_budget(passages, budget_chars)


def _title_key(chunk: Chunk) -> str:
    title = chunk.metadata.get("title")
    return name_key(title) if isinstance(title, str) else ""


def _name_keys(entity: Entity) -> frozenset[str]:
    return frozenset(name_key(name) for name in entity_names(entity))
