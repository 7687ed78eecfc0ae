"""The bounds every public entry point holds its arguments to.

Each bound exists so that one call does a bounded amount of work: without
them a ten-megabyte name stalls an import, a query as long as a book keeps
the event loop busy for minutes, and a property nested a few thousand deep
overflows the interpreter's stack. The numbers are generous for real data
(the longest entity name in the bundled sample is under 100 characters) and
small enough that the worst call they admit returns promptly.

A value past a bound is refused with a `ValueError` naming the argument, the
value (or its size) and the bound; nothing is written. The checks live in
`redstring.domain.validation`.
"""

from __future__ import annotations

from typing import Final

#: The longest entity name, entity type, relationship type or name filter, in
#: characters.
MAX_NAME_LENGTH: Final = 1_000
#: The longest free-text query `Retriever.retrieve` accepts, in characters.
MAX_QUERY_LENGTH: Final = 1_000
#: The largest `properties` or `metadata` payload: characters in its strings
#: (keys included) plus one per value, a lower bound on its JSON text.
MAX_JSON_SIZE: Final = 1_000_000
#: How deeply a `properties` or `metadata` payload may nest dicts and lists.
#: The top-level dict is depth 1.
MAX_JSON_DEPTH: Final = 64
#: The smallest and largest integer a payload may hold: the signed 64-bit
#: range, which every backend (SQLite, PostgreSQL `jsonb`) reads back exactly.
MIN_JSON_INT: Final = -(2**63)
MAX_JSON_INT: Final = 2**63 - 1
#: The largest `depth` of `GraphReader.neighbors`.
MAX_DEPTH: Final = 32
#: The largest `limit` of a store read and `k` of a search or retrieval.
MAX_LIMIT: Final = 100_000
#: The largest `budget_chars` of `ContextRetriever.retrieve_context`, in characters.
MAX_BUDGET_CHARS: Final = 1_000_000
#: The most model calls `build_graph` and `ExtractionPipeline` make at once.
MAX_CONCURRENCY: Final = 1_024
#: The longest vector a store or embedding provider is made for. The largest
#: common embedding models have 4,096 dimensions.
MAX_DIMENSION: Final = 65_536
#: The most connections a store's own Postgres pool may hold. The pool sets up
#: a slot per connection when it opens, so the bound keeps that allocation
#: small; a server's own `max_connections` is usually 100.
MAX_POOL_SIZE: Final = 1_000
#: The most parsed entities a Postgres graph store keeps in process.
MAX_CACHE_SIZE: Final = 10_000_000
