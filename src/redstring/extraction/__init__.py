"""Extraction: from a document's text to entities and relationships, through a model.

Chunk the text, ask the model to fill `Extraction` for each chunk with a
domain's system prompt, map the answers onto `Entity` and `Relationship`
with deterministic ids, and merge them across chunks. Nothing here touches a
store; `build_graph` does that.
"""

from redstring.extraction.chunking import Chunk, Chunker, SlidingWindowChunker
from redstring.extraction.domains import (
    CLASSIFICATION_SAMPLE_CHARS,
    DEFAULT_DOMAIN,
    DomainChoice,
    DomainClassification,
    DomainPrompt,
    available_domains,
    classify_domain,
    get_domain,
)
from redstring.extraction.mapping import (
    EXTRACTION_ID_NAMESPACE,
    MappedChunk,
    entity_id_for,
    map_extraction,
    relationship_id_for,
)
from redstring.extraction.pipeline import ChunkFailure, ExtractionPipeline, ExtractionResult
from redstring.extraction.schema import ExtractedEntity, ExtractedRelationship, Extraction

__all__ = [
    "CLASSIFICATION_SAMPLE_CHARS",
    "DEFAULT_DOMAIN",
    "EXTRACTION_ID_NAMESPACE",
    "Chunk",
    "ChunkFailure",
    "Chunker",
    "DomainChoice",
    "DomainClassification",
    "DomainPrompt",
    "ExtractedEntity",
    "ExtractedRelationship",
    "Extraction",
    "ExtractionPipeline",
    "ExtractionResult",
    "MappedChunk",
    "SlidingWindowChunker",
    "available_domains",
    "classify_domain",
    "entity_id_for",
    "get_domain",
    "map_extraction",
    "relationship_id_for",
]
