"""The ports: what redstring needs from the outside world, as Protocols.

Each store port is composed of narrower capability protocols (reader, writer,
purge) so that a caller can annotate only what it uses.
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
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.event_log import EventLog, StoredEvent
from redstring.ports.graph_store import (
    GraphMerge,
    GraphPurge,
    GraphReader,
    GraphStore,
    GraphWriter,
    NameCandidateReader,
    SharedNameCandidateReader,
)
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider
from redstring.ports.vector_store import VectorPurge, VectorReader, VectorStore, VectorWriter

__all__ = [
    "AsyncClosable",
    "ChunkPurge",
    "ChunkReader",
    "ChunkStore",
    "ChunkStoreBase",
    "ChunkWriter",
    "EmbeddingProvider",
    "EventLog",
    "GraphMerge",
    "GraphPurge",
    "GraphReader",
    "GraphStore",
    "GraphWriter",
    "LlmProvider",
    "MentionReader",
    "MentionWriter",
    "NameCandidateReader",
    "SharedNameCandidateReader",
    "StoredEvent",
    "VectorPurge",
    "VectorReader",
    "VectorStore",
    "VectorWriter",
]
