"""The top layer: `build_graph`, the one place a document's collaborators meet.

`extraction` may not import `projections`, and the store packages may not
import each other or `llm`, so nothing below can hold a model, a graph store
and a vector store together. See ADR 0007.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Final
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field

from redstring.composition.documents import (
    _document_chunks,
    _entity_mentions,
    _relationship_mention,
    _vectors_embedded,
)
from redstring.domain.events import DocumentChunked, DocumentExtracted, EntitiesEmbedded
from redstring.domain.exceptions import (
    DimensionMismatchError,
    PartialExtractionError,
)
from redstring.domain.json_safety import shown
from redstring.domain.limits import MAX_CONCURRENCY
from redstring.domain.source import SourceDocument
from redstring.domain.validation import (
    check_collaborator,
    check_integer,
    check_optional_collaborators,
    check_sequence,
    check_tenant_id,
    check_vector_count,
)
from redstring.domain.vector import VectorRecord
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.extraction.domains import DEFAULT_DOMAIN, classify_domain, get_domain
from redstring.extraction.pipeline import ExtractionPipeline
from redstring.ports.chunk_store import ChunkStore
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.event_log import EventLog
from redstring.ports.graph_store import GraphStore
from redstring.ports.llm import LlmProvider
from redstring.ports.vector_store import VectorStore
from redstring.projections.chunks import ChunkProjection
from redstring.projections.graph import GraphProjection
from redstring.projections.vector import VectorProjection

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.domain.chunk import Mention
    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId
    from redstring.extraction.chunking import Chunker
    from redstring.extraction.pipeline import ExtractionResult


class AutoDomain(Enum):
    """The type of `AUTO`: let the model choose the domain."""

    AUTO = "auto"

    def __repr__(self) -> str:
        return "AUTO"


#: Pass as `domain=` to classify the document with one model call first.
AUTO: Final = AutoDomain.AUTO


class GraphBuildReport(BaseModel):
    """What one `build_graph` call did.

    `entities` and `relationships` count what was written; `chunks` counts
    every chunk and `failed_chunks` those the model failed on (written only
    when the caller allowed it). `dropped_rows` counts model rows that failed
    validation; `unresolved_relationships` those whose ends named no
    extracted entity. `embedded` counts vectors written (0 without an
    embedding provider). `domain` is the domain id used, and
    `domain_confidence` the classifier's confidence (1.0 when chosen by the
    caller, 0.0 when `AUTO` fell back to the default).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: int
    relationships: int
    chunks: int
    failed_chunks: int
    dropped_rows: int
    unresolved_relationships: int
    embedded: int
    domain: str
    domain_confidence: float = Field(ge=0.0, le=1.0)


def _check_build_arguments(
    *,
    provider: LlmProvider,
    store: GraphStore,
    tenant_id: TenantId,
    domain: str | AutoDomain | None,
    embedding_provider: EmbeddingProvider | None,
    vector_store: VectorStore | None,
    event_log: EventLog | None,
    chunks: ChunkStore | None = None,
) -> None:
    """What `build_graph` and `build_graphs` check before the first model call."""
    check_collaborator(provider, LlmProvider, argument="provider")
    check_collaborator(store, GraphStore, argument="store")
    check_tenant_id(tenant_id)
    check_optional_collaborators(
        ("embedding_provider", embedding_provider, EmbeddingProvider),
        ("vector_store", vector_store, VectorStore),
        ("event_log", event_log, EventLog),
        ("chunks", chunks, ChunkStore),
    )
    if not (domain is None or domain is AUTO or isinstance(domain, str)):
        raise ValueError(f"domain must be a domain id, AUTO or None, got {shown(domain)}")
    if (embedding_provider is None) != (vector_store is None):
        raise ValueError("embedding_provider and vector_store go together: pass both or neither")
    if (
        embedding_provider is not None
        and vector_store is not None
        and embedding_provider.dimension != vector_store.dimension
    ):
        raise DimensionMismatchError(
            expected=vector_store.dimension, actual=embedding_provider.dimension
        )


async def build_graph(
    document: SourceDocument,
    *,
    provider: LlmProvider,
    store: GraphStore,
    tenant_id: TenantId,
    domain: str | AutoDomain | None = None,
    chunker: Chunker | None = None,
    skip_failed_chunks: bool = False,
    allow_partial: bool = False,
    embedding_provider: EmbeddingProvider | None = None,
    vector_store: VectorStore | None = None,
    event_log: EventLog | None = None,
    concurrency: int = 1,
    chunks: ChunkStore | None = None,
) -> GraphBuildReport:
    """Extract `document` into `tenant_id`'s graph, and embed its entity names.

    Chunks the text, extracts each chunk through `provider` with the
    domain's prompt (`None` is the general domain, `AUTO` asks the model
    first), maps and merges the answers, then records a `DocumentExtracted`
    event and projects it into `store`. With `embedding_provider` and
    `vector_store`, entity names are embedded and an `EntitiesEmbedded`
    event is projected into `vector_store`, each vector carrying
    `metadata={"entity_type": ...}`. Given `chunks`, the document's chunks
    are kept there with each entity's and relationship's mentions (the chunk
    it was read from, and where its name occurs; ADR 0074), recorded as a
    `DocumentChunked` event. Events go to `event_log` when given, so that
    `replay` can rebuild every store.

    Everything that can fail runs before the first write: a failed chunk or
    embedding leaves both stores untouched. Ids are deterministic, so building
    the same document again leaves the stores as they were.

    Raises:
        ValueError: `document` is not a `SourceDocument`, a collaborator
            does not implement its port, `tenant_id` is not a `uuid.UUID`,
            only one of `embedding_provider` and `vector_store` is given,
            or `concurrency` is not an integer within `1..MAX_CONCURRENCY`.
        DimensionMismatchError: their dimensions differ.
        UnknownDomainError: `domain` names no bundled domain.
        PartialExtractionError: some chunks failed, and neither
            `skip_failed_chunks` nor `allow_partial` says to keep the rest.
        LlmProviderError: every chunk failed (the first chunk's error, such
            as `MalformedCompletionError` naming the model), unless
            `allow_partial`, which keeps whatever was extracted, even nothing.
        EmbeddingProviderError: the embedding model failed.
    """
    if not isinstance(document, SourceDocument):
        raise ValueError(
            f"document must be a SourceDocument, got {type(document).__name__}: {document!r:.80}"
        )
    _check_build_arguments(
        provider=provider,
        store=store,
        tenant_id=tenant_id,
        domain=domain,
        embedding_provider=embedding_provider,
        vector_store=vector_store,
        event_log=event_log,
        chunks=chunks,
    )
    pipeline = ExtractionPipeline(provider, chunker=chunker, concurrency=concurrency)

    if domain is AUTO:
        classification = await classify_domain(document.text, provider)
        domain_id, confidence = classification.domain_id, classification.confidence
    else:
        domain_id, confidence = domain or DEFAULT_DOMAIN, 1.0
    prompt = get_domain(domain_id)

    result = await pipeline.run(document, tenant_id=tenant_id, system_prompt=prompt.system_prompt)
    failed = len(result.failed_chunks)
    if failed and not allow_partial:
        first = result.failed_chunks[0].error
        if failed == result.chunks:
            raise first
        if not skip_failed_chunks:
            raise PartialExtractionError(
                source_id=document.id, failed_chunks=failed, total_chunks=result.chunks
            ) from first

    now = datetime.now(UTC)
    events: list[Event] = [
        DocumentExtracted(
            event_id=uuid4(),
            tenant_id=tenant_id,
            source_id=document.id,
            occurred_at=now,
            domain=prompt.id,
            model=provider.model,
            entities=result.entities,
            relationships=result.relationships,
        )
    ]
    records: tuple[VectorRecord, ...] = ()
    if embedding_provider is not None and vector_store is not None and result.entities:
        records = await embed_entity_names(result.entities, embedding_provider)
        events.append(
            _vectors_embedded(EntitiesEmbedded, embedding_provider, tenant_id, now, records)
        )

    provenance = _provenance(document, tenant_id, result, now) if chunks is not None else None
    if provenance is not None:
        events.append(provenance)

    await record_and_project(
        events, event_log=event_log, graph=store, vectors=vector_store, chunks=chunks
    )

    return GraphBuildReport(
        entities=len(result.entities),
        relationships=len(result.relationships),
        chunks=result.chunks,
        failed_chunks=failed,
        dropped_rows=result.dropped_rows,
        unresolved_relationships=result.unresolved_relationships,
        embedded=len(records),
        domain=prompt.id,
        domain_confidence=confidence,
    )


def _provenance(
    document: SourceDocument, tenant_id: TenantId, result: ExtractionResult, now: datetime
) -> DocumentChunked | None:
    """The document's chunks, and the mentions of what was extracted from each; `None` if none."""
    kept = _document_chunks(document, tenant_id, result.spans)
    if not kept:
        return None
    by_chunk: dict[int, list[Entity]] = {}
    for entity in result.entities:
        for index in result.entity_chunks.get(entity.id, ()):
            by_chunk.setdefault(index, []).append(entity)
    found: dict[tuple[int, EntityId], list[Mention]] = {}
    mentions: list[Mention] = []
    for index, entities in by_chunk.items():
        chunk = kept.get(index)
        if chunk is None:
            continue
        for mention in _entity_mentions(chunk, entities):
            found.setdefault((index, mention.entity_id), []).append(mention)  # type: ignore[arg-type]
            mentions.append(mention)
    for relationship in result.relationships:
        for index in result.relationship_chunks.get(relationship.id, ()):
            chunk = kept.get(index)
            if chunk is None:
                continue
            ends = [
                found.get((index, relationship.source_entity_id), []),
                found.get((index, relationship.target_entity_id), []),
            ]
            mentions.append(_relationship_mention(chunk, relationship.id, ends))
    return DocumentChunked(
        event_id=uuid4(),
        tenant_id=tenant_id,
        source_id=document.id,
        occurred_at=now,
        chunks=tuple(kept.values()),
        mentions=tuple(mentions),
    )


async def embed_entity_names(
    entities: Sequence[Entity], provider: EmbeddingProvider
) -> tuple[VectorRecord, ...]:
    """One record per entity: its name's vector, in its own tenant, tagged with its type.

    `metadata={"entity_type": ...}` is what lets an `entity_types` filter
    work on the semantic channel exactly as on the lexical one.

    Raises:
        EmbeddingProviderError: the provider failed, or returned a vector
            count other than one per entity.
        DimensionMismatchError: a vector is not of the provider's dimension.
    """
    vectors = await provider.embed([entity.name for entity in entities])
    check_vector_count(vectors, len(entities), model=provider.model)
    for vector in vectors:
        if len(vector) != provider.dimension:
            raise DimensionMismatchError(expected=provider.dimension, actual=len(vector))
    return tuple(
        VectorRecord(
            entity_id=entity.id,
            tenant_id=entity.tenant_id,
            vector=vector,
            metadata={"entity_type": entity.entity_type},
        )
        for entity, vector in zip(entities, vectors, strict=True)
    )


async def build_graphs(
    documents: Sequence[SourceDocument],
    *,
    provider: LlmProvider,
    store: GraphStore,
    tenant_id: TenantId,
    concurrency: int = 4,
    on_progress: Callable[[int, int], None] | None = None,
    domain: str | AutoDomain | None = None,
    chunker: Chunker | None = None,
    skip_failed_chunks: bool = False,
    allow_partial: bool = False,
    embedding_provider: EmbeddingProvider | None = None,
    vector_store: VectorStore | None = None,
    event_log: EventLog | None = None,
    chunks: ChunkStore | None = None,
) -> list[GraphBuildReport]:
    """`build_graph` for each document, at most `concurrency` at a time.

    Returns one report per document, in the order given. After each
    document is written, `on_progress(done, total)` is called; if it
    raises, no further document is started and the error propagates. The other
    arguments mean what they mean for `build_graph`; every document is
    checked before the first model call.

    Each document is written whole or not at all. When one fails, no
    further document is started, those in flight finish, and its error is
    raised with a note naming the document; documents finished before stay
    written.

    Raises:
        ValueError: `documents` is not a sequence of `SourceDocument`, or
            `concurrency` is not a positive integer.
        Exception: whatever `build_graph` raises for the first failing document.
    """
    batch = check_sequence(documents, argument="documents")
    for index, document in enumerate(batch):
        if not isinstance(document, SourceDocument):
            raise ValueError(f"documents[{index}] is not a SourceDocument: {shown(document)}")
    _check_build_arguments(
        provider=provider,
        store=store,
        tenant_id=tenant_id,
        domain=domain,
        embedding_provider=embedding_provider,
        vector_store=vector_store,
        event_log=event_log,
        chunks=chunks,
    )
    check_integer(concurrency, argument="concurrency", minimum=1, maximum=MAX_CONCURRENCY)
    if on_progress is not None and not callable(on_progress):
        raise ValueError(f"on_progress must be callable or None, got {shown(on_progress)}")
    reports: list[GraphBuildReport | None] = [None] * len(batch)
    slots = asyncio.Semaphore(concurrency)
    failed = asyncio.Event()
    done = 0

    async def one(index: int, document: SourceDocument) -> None:
        nonlocal done
        async with slots:
            if failed.is_set():
                return
            try:
                reports[index] = await build_graph(
                    document,
                    provider=provider,
                    store=store,
                    tenant_id=tenant_id,
                    domain=domain,
                    chunker=chunker,
                    skip_failed_chunks=skip_failed_chunks,
                    allow_partial=allow_partial,
                    embedding_provider=embedding_provider,
                    vector_store=vector_store,
                    event_log=event_log,
                    chunks=chunks,
                )
            except Exception as exc:
                failed.set()
                exc.add_note(f"while building document {document.id!r}")
                raise
            done += 1
            if on_progress is not None:
                try:
                    on_progress(done, len(batch))
                except BaseException:
                    failed.set()
                    raise

    outcomes = await asyncio.gather(
        *(one(index, document) for index, document in enumerate(batch)), return_exceptions=True
    )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return [report for report in reports if report is not None]


async def record_and_project(
    events: Sequence[Event],
    *,
    event_log: EventLog | None,
    graph: GraphStore,
    vectors: VectorStore | None,
    chunks: ChunkStore | None = None,
) -> None:
    """Append `events` to the log (a throwaway one when `None`), then project each in order.

    The log comes first, so a store never holds what the log does not record.
    """
    log = event_log if event_log is not None else InMemoryEventLog()
    await log.append_many(events)
    graph_projection = GraphProjection(graph)
    vector_projection = VectorProjection(vectors) if vectors is not None else None
    chunk_projection = ChunkProjection(chunks) if chunks is not None else None
    for event in events:
        await graph_projection.apply(event)
        if vector_projection is not None:
            await vector_projection.apply(event)
        if chunk_projection is not None:
            await chunk_projection.apply(event)
