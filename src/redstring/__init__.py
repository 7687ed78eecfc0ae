"""redstring: documents in, a multi-tenant entity graph out, entities back by query.

An LLM extracts entities and relationships from documents into a graph kept
per tenant; blocking keys and Jaro-Winkler similarity find candidate
duplicates; an embedding model embeds entity names into a vector store. The
stores are ports with in-memory adapters for tests and small jobs, and fakes
stand in for the models.

Everything public is importable from here; nothing is opened, read or loaded
at import time.
"""

from redstring.composition import AUTO, AutoDomain, GraphBuildReport, build_graph
from redstring.domain.blocking import (
    DEFAULT_STRATEGIES,
    PREFIX_LENGTH,
    BlockingKeyStrategy,
    blocking_keys_for,
    entity_type_key,
    prefix_key,
    soundex_key,
)
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.exceptions import (
    DimensionMismatchError,
    EmbeddingProviderError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
    MissingEntityError,
    PartialExtractionError,
    RedstringError,
    RefusedCompletionError,
    UnknownDomainError,
)
from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.similarity import string_similarity
from redstring.domain.source import SourceDocument
from redstring.domain.vector import VectorMatch, VectorRecord, cosine_similarity
from redstring.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    Event,
    EventLog,
    StoredEvent,
    event_from_json,
    event_to_json,
)
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.extraction import (
    DEFAULT_DOMAIN,
    Chunk,
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
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.llm.adapters.fake import EMPTY, EmptyAnswer, FakeLlmProvider
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.ports import (
    AsyncClosable,
    EmbeddingProvider,
    GraphPurge,
    GraphReader,
    GraphStore,
    GraphWriter,
    LlmProvider,
    VectorPurge,
    VectorReader,
    VectorStore,
    VectorWriter,
)
from redstring.projections import GraphProjection, Projection, VectorProjection, replay
from redstring.vector.adapters.memory import InMemoryVectorStore

__version__ = "0.3.0"

__all__ = [
    "AUTO",
    "DEFAULT_DOMAIN",
    "DEFAULT_STRATEGIES",
    "EMPTY",
    "PREFIX_LENGTH",
    "AsyncClosable",
    "AutoDomain",
    "BlockingKeyStrategy",
    "Chunk",
    "ChunkFailure",
    "Chunker",
    "DimensionMismatchError",
    "DocumentExtracted",
    "DomainPrompt",
    "EmbeddingProvider",
    "EmbeddingProviderError",
    "EmptyAnswer",
    "EmptyCompletionError",
    "EntitiesEmbedded",
    "Entity",
    "EntityId",
    "Event",
    "EventLog",
    "ExtractedEntity",
    "ExtractedRelationship",
    "Extraction",
    "ExtractionMethod",
    "ExtractionPipeline",
    "ExtractionResult",
    "FakeEmbeddingProvider",
    "FakeLlmProvider",
    "GraphBuildReport",
    "GraphProjection",
    "GraphPurge",
    "GraphReader",
    "GraphStore",
    "GraphWriter",
    "InMemoryEventLog",
    "InMemoryGraphStore",
    "InMemoryVectorStore",
    "LlmProvider",
    "LlmProviderError",
    "MalformedCompletionError",
    "MissingEntityError",
    "PartialExtractionError",
    "Projection",
    "RedstringError",
    "RefusedCompletionError",
    "Relationship",
    "RelationshipId",
    "SlidingWindowChunker",
    "SourceDocument",
    "SourceId",
    "StoredEvent",
    "TenantId",
    "UnknownDomainError",
    "VectorMatch",
    "VectorProjection",
    "VectorPurge",
    "VectorReader",
    "VectorRecord",
    "VectorStore",
    "VectorWriter",
    "__version__",
    "available_domains",
    "blocking_keys_for",
    "build_graph",
    "cosine_similarity",
    "entity_type_key",
    "event_from_json",
    "event_to_json",
    "get_domain",
    "normalize_name",
    "prefix_key",
    "replay",
    "soundex_key",
    "string_similarity",
]
