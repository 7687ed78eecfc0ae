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
at import time. The Postgres adapters are loaded on first access, so that
`import redstring` never imports their driver (the `postgres` extra).
"""

import importlib
from typing import TYPE_CHECKING

from redstring.composition import (
    AUTO,
    AutoDomain,
    ConsolidationMerge,
    ConsolidationReport,
    Consolidator,
    GraphBuildReport,
    ImportReport,
    Retriever,
    build_graph,
    build_graphs,
    delete_entity,
    import_entities,
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
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    EntitiesMerged,
    EntityDeleted,
    Event,
    MergeUndone,
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
    MissingEntityError,
    PartialExtractionError,
    RedstringError,
    RefusedCompletionError,
    StoreError,
    UnknownDomainError,
)
from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId
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
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.fake import EMPTY, EmptyAnswer, FakeLlmProvider
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.ports import (
    AsyncClosable,
    EmbeddingProvider,
    EventLog,
    GraphMerge,
    GraphPurge,
    GraphReader,
    GraphStore,
    GraphWriter,
    LlmProvider,
    NameCandidateReader,
    SharedNameCandidateReader,
    StoredEvent,
    VectorPurge,
    VectorReader,
    VectorStore,
    VectorWriter,
)
from redstring.projections import GraphProjection, Projection, VectorProjection, replay
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from redstring.events.adapters.postgres import PostgresEventLog
    from redstring.graph.adapters.postgres import PostgresGraphStore
    from redstring.vector.adapters.postgres import HnswIndex, PostgresVectorStore

__version__ = "0.3.0"

#: Names loaded on first access, by the module that defines them.
_LAZY = {
    "HnswIndex": "redstring.vector.adapters.postgres",
    "PostgresEventLog": "redstring.events.adapters.postgres",
    "PostgresGraphStore": "redstring.graph.adapters.postgres",
    "PostgresVectorStore": "redstring.vector.adapters.postgres",
}


def __getattr__(name: str) -> object:
    """Load a Postgres adapter on first access; `ImportError` names the extra it needs."""
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
    "Chunk",
    "ChunkFailure",
    "Chunker",
    "ClosedError",
    "ConsolidationMerge",
    "ConsolidationReport",
    "Consolidator",
    "DimensionMismatchError",
    "DocumentExtracted",
    "DomainPrompt",
    "EmbeddingModelMismatchError",
    "EmbeddingProvider",
    "EmbeddingProviderError",
    "EmptyAnswer",
    "EmptyCompletionError",
    "EntitiesEmbedded",
    "EntitiesMerged",
    "Entity",
    "EntityDeleted",
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
    "GraphMerge",
    "GraphProjection",
    "GraphPurge",
    "GraphReader",
    "GraphStore",
    "GraphWriter",
    "HnswIndex",
    "ImportReport",
    "InMemoryEventLog",
    "InMemoryGraphStore",
    "InMemoryVectorStore",
    "LlmMergeAdjudicator",
    "LlmProvider",
    "LlmProviderError",
    "MalformedCompletionError",
    "MergeAdjudicator",
    "MergeBand",
    "MergePolicy",
    "MergeQuestion",
    "MergeUndoError",
    "MergeUndone",
    "MergeVerdict",
    "MissingEntityError",
    "NameCandidateReader",
    "PartialExtractionError",
    "PostgresEventLog",
    "PostgresGraphStore",
    "PostgresVectorStore",
    "Projection",
    "PropertyKind",
    "RedstringError",
    "RefusedCompletionError",
    "Relationship",
    "RelationshipId",
    "RetrievalMode",
    "RetrievalResult",
    "Retriever",
    "ScoredEntity",
    "SharedNameCandidateReader",
    "SlidingWindowChunker",
    "SourceDocument",
    "SourceId",
    "SqliteEventLog",
    "SqliteGraphStore",
    "SqliteVectorStore",
    "StoreError",
    "StoredEvent",
    "TenantId",
    "UnknownDomainError",
    "Vector",
    "VectorLike",
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
    "build_graphs",
    "cosine_similarity",
    "delete_entity",
    "entity_type_key",
    "event_from_json",
    "event_to_json",
    "fold_name",
    "get_domain",
    "import_entities",
    "normalize_name",
    "prefix_key",
    "replay",
    "soundex_key",
    "string_similarity",
]
