"""Contract suites and factories for testing a store adapter of your own.

Each port's contract is a base class: subclass `GraphStoreCompliance`,
`VectorStoreCompliance`, `ChunkStoreCompliance` or `EventLogCompliance` in a pytest `Test...` class,
implement its factory method, and every rule of the port runs against your
adapter. Each includes `LifetimeCompliance`, the rules every adapter's
lifetime follows; subclass it alone for a model adapter. A graph store that
also lends its name candidates (`SharedNameCandidateReader`) mixes
`SharedNameCandidateCompliance` into its graph suite. `make_entity`,
`make_relationship` and `make_chunk` build valid domain objects with any field overridable.

Needs pytest and hypothesis: install the `testing` extra
(`pip install 'redstring[testing]'`). `import redstring` never imports this
package.
"""

try:
    import hypothesis  # noqa: F401
    import pytest  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - the dev environment has both
    raise ImportError(
        f"redstring.testing needs the testing extra ({exc.name} is missing): "
        "pip install 'redstring[testing]'"
    ) from exc

from redstring.testing.chunk_store import ChunkStoreCompliance
from redstring.testing.event_log import EventLogCompliance
from redstring.testing.factories import (
    OTHER_TENANT,
    TENANT,
    make_chunk,
    make_entity,
    make_relationship,
)
from redstring.testing.graph_store import GraphStoreCompliance, SharedNameCandidateCompliance
from redstring.testing.lifetime import LifetimeCompliance
from redstring.testing.vector_store import VectorStoreCompliance

__all__ = [
    "OTHER_TENANT",
    "TENANT",
    "ChunkStoreCompliance",
    "EventLogCompliance",
    "GraphStoreCompliance",
    "LifetimeCompliance",
    "SharedNameCandidateCompliance",
    "VectorStoreCompliance",
    "make_chunk",
    "make_entity",
    "make_relationship",
]
