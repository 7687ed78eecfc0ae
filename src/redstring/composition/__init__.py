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

This was one module until retrieval arrived; see the ADR amending 0007.
"""

from __future__ import annotations

from redstring.composition.build_graph import (
    AUTO,
    AutoDomain,
    GraphBuildReport,
    build_graph,
    embed_entity_names,
)
from redstring.composition.consolidation import (
    ConsolidationMerge,
    ConsolidationReport,
    Consolidator,
)
from redstring.composition.retrieval import Retriever

__all__ = [
    "AUTO",
    "AutoDomain",
    "ConsolidationMerge",
    "ConsolidationReport",
    "Consolidator",
    "GraphBuildReport",
    "Retriever",
    "build_graph",
    "embed_entity_names",
]
