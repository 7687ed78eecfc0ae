"""The ports: what redstring needs from the outside world, as Protocols.

Each store port is composed of narrower capability protocols (reader, writer,
purge) so that a caller can annotate only what it uses. Beside each store
port, a checked base (`GraphStoreBase`, `VectorStoreBase`, `EventLogBase`)
runs the port's argument checks once and leaves an adapter only its I/O.
"""

from redstring.ports.chunk_store import (
    ChunkPurge,
    ChunkReader,
    ChunkStore,
    ChunkStoreBase,
    ChunkWriter,
    MentionReader,
    MentionWriter,
)
from redstring.ports.embedding import EmbeddingProvider, PassageEmbedder
from redstring.ports.event_log import EntityEventReader, EventLog, EventLogBase, StoredEvent
from redstring.ports.graph_batches import (
    MergedIdBatchReader,
    NameCandidateBatchReader,
    RelationshipBatchReader,
    SharedNameCandidateBatchReader,
)
from redstring.ports.graph_store import (
    EntityReader,
    GraphMerge,
    GraphPurge,
    GraphReader,
    GraphStore,
    GraphStoreBase,
    GraphWriter,
    LendingGraphStoreBase,
    MergedIdReader,
    MergeResolver,
    NameCandidateReader,
    SharedNameCandidateReader,
)
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider
from redstring.ports.tenants import TenantCounter
from redstring.ports.vector_store import (
    VectorPurge,
    VectorReader,
    VectorSearch,
    VectorStore,
    VectorStoreBase,
    VectorWriter,
)

__all__ = [
    "AsyncClosable",
    "ChunkPurge",
    "ChunkReader",
    "ChunkStore",
    "ChunkStoreBase",
    "ChunkWriter",
    "EmbeddingProvider",
    "EntityEventReader",
    "EntityReader",
    "EventLog",
    "EventLogBase",
    "GraphMerge",
    "GraphPurge",
    "GraphReader",
    "GraphStore",
    "GraphStoreBase",
    "GraphWriter",
    "LendingGraphStoreBase",
    "LlmProvider",
    "MentionReader",
    "MentionWriter",
    "MergeResolver",
    "MergedIdBatchReader",
    "MergedIdReader",
    "NameCandidateBatchReader",
    "NameCandidateReader",
    "PassageEmbedder",
    "RelationshipBatchReader",
    "SharedNameCandidateBatchReader",
    "SharedNameCandidateReader",
    "StoredEvent",
    "TenantCounter",
    "VectorPurge",
    "VectorReader",
    "VectorSearch",
    "VectorStore",
    "VectorStoreBase",
    "VectorWriter",
]
