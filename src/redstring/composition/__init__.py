"""The top layer: modules that hold collaborators no lower layer may hold together.

`.importlinter` states that a module wanting in here has to say what it
composes. There are three:

- `build_graph` composes `LlmProvider` + `GraphStore` (+ optionally
  `EmbeddingProvider` + `VectorStore`). `extraction` may not import
  `projections`, so nothing below can hold both halves.
- `retrieval` composes `EmbeddingProvider` + `VectorStore` + `GraphStore`.
  `vector` and `graph` are siblings that may not import each other and
  neither may import `llm`, so no sibling can hold all three.
- `consolidation` composes `GraphStore` + `EventLog` (+ optionally
  `VectorStore`, `EmbeddingProvider` and a `MergeAdjudicator`): the
  `consolidation` package decides merges but may not reach a store, the
  log or the projections' siblings.

- `entities` composes `GraphStore` + `EmbeddingProvider` + `VectorStore`
  to import one's own entities (it reads the graph to decide what to
  embed), and `GraphWriter` + `VectorWriter` to delete one from both.
- `context` composes `ChunkReader` + `MentionReader` + a `GraphReader` (+
  optionally `EmbeddingProvider` + a passages' `VectorReader`) to answer a
  query with passages, the entities they mention or the graph reaches, and
  the relationships among them: the chunk store, the graph and the vector
  store are siblings, so only here can the three be joined.
- `documents` composes `ChunkStore` + a graph's name index (+ optionally
  `EmbeddingProvider` + a passages' `VectorStore`): the chunk store and the
  graph are siblings, so only here can a passage be linked to the entities
  it names.

See the ADR amending 0007.
"""

from __future__ import annotations

from redstring.composition.build_graph import (
    AUTO,
    AutoDomain,
    GraphBuildReport,
    build_graph,
    build_graphs,
    embed_entity_names,
    record_and_project,
)
from redstring.composition.consolidation import (
    ConsolidationMerge,
    ConsolidationReport,
    Consolidator,
)
from redstring.composition.context import ContextRetriever
from redstring.composition.documents import (
    DocumentImportReport,
    chunk_id_for,
    delete_document,
    entity_mentions,
    import_documents,
    mentioned_entities,
)
from redstring.composition.entities import (
    ImportReport,
    TenantDeletion,
    delete_entity,
    delete_tenant,
    import_entities,
)
from redstring.composition.retrieval import Retriever

__all__ = [
    "AUTO",
    "AutoDomain",
    "ConsolidationMerge",
    "ConsolidationReport",
    "Consolidator",
    "ContextRetriever",
    "DocumentImportReport",
    "GraphBuildReport",
    "ImportReport",
    "Retriever",
    "TenantDeletion",
    "build_graph",
    "build_graphs",
    "chunk_id_for",
    "delete_document",
    "delete_entity",
    "delete_tenant",
    "embed_entity_names",
    "entity_mentions",
    "import_documents",
    "import_entities",
    "mentioned_entities",
    "record_and_project",
]
