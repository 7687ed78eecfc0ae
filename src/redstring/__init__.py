"""redstring: documents in, a multi-tenant entity graph out, entities back by query.

`build_graph` has a language model extract entities and relationships from a
document into a graph kept per tenant, and embeds entity names into a vector
store; both stores are projections of an append-only event log, so `replay`
rebuilds either. Blocking keys and Jaro-Winkler similarity find candidate
duplicates. `Retriever` answers a free-text query with ranked entities,
fusing a semantic channel (the query's embedding searched in the vector
store) and a lexical channel (name and alias candidates from a trigram
index, scored by string similarity) by reciprocal rank. The stores and models are ports, with
in-memory adapters for tests and small jobs and fakes that stand in for the
models.

Everything public is importable from here; nothing is opened, read or loaded
at import time. The Postgres adapters and the model providers (OpenAI-compatible
HTTP, the local E5 model) are loaded on first access, so that `import
redstring` never imports their drivers (the `postgres`, `http` and `local`
extras).
"""

import importlib
from typing import TYPE_CHECKING

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.composition import (
    AUTO,
    AutoDomain,
    ConsolidationMerge,
    ConsolidationReport,
    Consolidator,
    ContextRetriever,
    DocumentImportReport,
    GraphBuildReport,
    ImportReport,
    Retriever,
    TenantDeletion,
    build_graph,
    build_graphs,
    chunk_id_for,
    delete_document,
    delete_entity,
    delete_tenant,
    entity_mentions,
    import_documents,
    import_entities,
    mentioned_entities,
)
from redstring.consolidation import (
    LlmMergeAdjudicator,
    MergeAdjudicator,
    MergeBand,
    MergePolicy,
    MergeQuestion,
    MergeVerdict,
    PropertyKind,
)
from redstring.domain.blocking import (
    DEFAULT_STRATEGIES,
    PREFIX_LENGTH,
    BlockingKeyStrategy,
    blocking_keys_for,
    entity_type_key,
    prefix_key,
    soundex_key,
)
from redstring.domain.chunk import Chunk, Mention, ScoredChunk
from redstring.domain.context import Context, ContextSettings, RelationPath, ScoredPassage
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.events import (
    DocumentChunked,
    DocumentDeleted,
    DocumentExtracted,
    EntitiesEmbedded,
    EntitiesMerged,
    EntityDeleted,
    Event,
    MergeUndone,
    PassagesEmbedded,
    TenantDeleted,
    event_from_json,
    event_to_json,
)
from redstring.domain.exceptions import (
    ClosedError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    EmbeddingProviderError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
    MergeUndoError,
    MissingChunkError,
    MissingEntityError,
    PartialExtractionError,
    RedstringError,
    RefusedCompletionError,
    StoreError,
    UnknownDomainError,
)
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.names import NAME_CANDIDATE_LIMIT
from redstring.domain.normalization import fold_name, normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.similarity import string_similarity
from redstring.domain.source import SourceDocument
from redstring.domain.vector import (
    Vector,
    VectorLike,
    VectorMatch,
    VectorRecord,
    cosine_similarity,
)
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.events.adapters.sqlite import SqliteEventLog
from redstring.extraction import (
    DEFAULT_DOMAIN,
    Chunker,
    ChunkFailure,
    DomainPrompt,
    ExtractedEntity,
    ExtractedRelationship,
    Extraction,
    ExtractionPipeline,
    ExtractionResult,
    SlidingWindowChunker,
    available_domains,
    get_domain,
)
from redstring.extraction import Chunk as TextChunk
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.caching import CachingEmbeddingProvider
from redstring.llm.adapters.fake import EMPTY, EmptyAnswer, FakeLlmProvider
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.ports import (
    AsyncClosable,
    ChunkPurge,
    ChunkReader,
    ChunkStore,
    ChunkWriter,
    EmbeddingProvider,
    EntityEventReader,
    EntityReader,
    EventLog,
    EventLogBase,
    GraphMerge,
    GraphPurge,
    GraphReader,
    GraphStore,
    GraphStoreBase,
    GraphWriter,
    LendingGraphStoreBase,
    LlmProvider,
    MentionReader,
    MentionWriter,
    MergedIdBatchReader,
    MergedIdReader,
    MergeResolver,
    NameCandidateBatchReader,
    NameCandidateReader,
    PassageEmbedder,
    RelationshipBatchReader,
    SharedNameCandidateBatchReader,
    SharedNameCandidateReader,
    StoredEvent,
    TenantCounter,
    VectorPurge,
    VectorReader,
    VectorSearch,
    VectorStore,
    VectorStoreBase,
    VectorWriter,
)
from redstring.projections import (
    ChunkProjection,
    GraphProjection,
    PassageVectorProjection,
    Projection,
    VectorProjection,
    replay,
)
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from redstring.chunks.adapters.postgres import PostgresChunkStore
    from redstring.events.adapters.postgres import PostgresEventLog
    from redstring.graph.adapters.postgres import PostgresGraphStore
    from redstring.llm.adapters.e5 import E5EmbeddingProvider
    from redstring.llm.adapters.openai import (
        OpenAiCompatibleEmbeddingProvider,
        OpenAiCompatibleLlmProvider,
    )
    from redstring.vector.adapters.postgres import HnswIndex, PostgresVectorStore

__version__ = "0.3.0"

#: Names loaded on first access, by the module that defines them.
_LAZY = {
    "E5EmbeddingProvider": "redstring.llm.adapters.e5",
    "HnswIndex": "redstring.vector.adapters.postgres",
    "OpenAiCompatibleEmbeddingProvider": "redstring.llm.adapters.openai",
    "OpenAiCompatibleLlmProvider": "redstring.llm.adapters.openai",
    "PostgresChunkStore": "redstring.chunks.adapters.postgres",
    "PostgresEventLog": "redstring.events.adapters.postgres",
    "PostgresGraphStore": "redstring.graph.adapters.postgres",
    "PostgresVectorStore": "redstring.vector.adapters.postgres",
}


def __getattr__(name: str) -> object:
    """Load a Postgres adapter or a model provider on first access.

    `ImportError` names the extra it needs.
    """
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'redstring' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AUTO",
    "DEFAULT_DOMAIN",
    "DEFAULT_STRATEGIES",
    "EMPTY",
    "NAME_CANDIDATE_LIMIT",
    "PREFIX_LENGTH",
    "AsyncClosable",
    "AutoDomain",
    "BlockingKeyStrategy",
    "CachingEmbeddingProvider",
    "Chunk",
    "ChunkFailure",
    "ChunkId",
    "ChunkProjection",
    "ChunkPurge",
    "ChunkReader",
    "ChunkStore",
    "ChunkWriter",
    "Chunker",
    "ClosedError",
    "ConsolidationMerge",
    "ConsolidationReport",
    "Consolidator",
    "Context",
    "ContextRetriever",
    "ContextSettings",
    "DimensionMismatchError",
    "DocumentChunked",
    "DocumentDeleted",
    "DocumentExtracted",
    "DocumentImportReport",
    "DomainPrompt",
    "E5EmbeddingProvider",
    "EmbeddingModelMismatchError",
    "EmbeddingProvider",
    "EmbeddingProviderError",
    "EmptyAnswer",
    "EmptyCompletionError",
    "EntitiesEmbedded",
    "EntitiesMerged",
    "Entity",
    "EntityDeleted",
    "EntityEventReader",
    "EntityId",
    "EntityReader",
    "Event",
    "EventLog",
    "EventLogBase",
    "ExtractedEntity",
    "ExtractedRelationship",
    "Extraction",
    "ExtractionMethod",
    "ExtractionPipeline",
    "ExtractionResult",
    "FakeEmbeddingProvider",
    "FakeLlmProvider",
    "GraphBuildReport",
    "GraphMerge",
    "GraphProjection",
    "GraphPurge",
    "GraphReader",
    "GraphStore",
    "GraphStoreBase",
    "GraphWriter",
    "HnswIndex",
    "ImportReport",
    "InMemoryChunkStore",
    "InMemoryEventLog",
    "InMemoryGraphStore",
    "InMemoryVectorStore",
    "LendingGraphStoreBase",
    "LlmMergeAdjudicator",
    "LlmProvider",
    "LlmProviderError",
    "MalformedCompletionError",
    "Mention",
    "MentionReader",
    "MentionWriter",
    "MergeAdjudicator",
    "MergeBand",
    "MergePolicy",
    "MergeQuestion",
    "MergeResolver",
    "MergeUndoError",
    "MergeUndone",
    "MergeVerdict",
    "MergedIdBatchReader",
    "MergedIdReader",
    "MissingChunkError",
    "MissingEntityError",
    "NameCandidateBatchReader",
    "NameCandidateReader",
    "OpenAiCompatibleEmbeddingProvider",
    "OpenAiCompatibleLlmProvider",
    "PartialExtractionError",
    "PassageEmbedder",
    "PassageVectorProjection",
    "PassagesEmbedded",
    "PostgresChunkStore",
    "PostgresEventLog",
    "PostgresGraphStore",
    "PostgresVectorStore",
    "Projection",
    "PropertyKind",
    "RedstringError",
    "RefusedCompletionError",
    "RelationPath",
    "Relationship",
    "RelationshipBatchReader",
    "RelationshipId",
    "RetrievalMode",
    "RetrievalResult",
    "Retriever",
    "ScoredChunk",
    "ScoredEntity",
    "ScoredPassage",
    "SharedNameCandidateBatchReader",
    "SharedNameCandidateReader",
    "SlidingWindowChunker",
    "SourceDocument",
    "SourceId",
    "SqliteChunkStore",
    "SqliteEventLog",
    "SqliteGraphStore",
    "SqliteVectorStore",
    "StoreError",
    "StoredEvent",
    "TenantCounter",
    "TenantDeleted",
    "TenantDeletion",
    "TenantId",
    "TextChunk",
    "UnknownDomainError",
    "Vector",
    "VectorLike",
    "VectorMatch",
    "VectorProjection",
    "VectorPurge",
    "VectorReader",
    "VectorRecord",
    "VectorSearch",
    "VectorStore",
    "VectorStoreBase",
    "VectorWriter",
    "__version__",
    "available_domains",
    "blocking_keys_for",
    "build_graph",
    "build_graphs",
    "chunk_id_for",
    "cosine_similarity",
    "delete_document",
    "delete_entity",
    "delete_tenant",
    "entity_mentions",
    "entity_type_key",
    "event_from_json",
    "event_to_json",
    "fold_name",
    "get_domain",
    "import_documents",
    "import_entities",
    "mentioned_entities",
    "normalize_name",
    "prefix_key",
    "replay",
    "soundex_key",
    "string_similarity",
]
