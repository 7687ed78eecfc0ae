"""An approximate nearest-neighbour index over one tenant's rows: HNSW, from hnswlib.

Needs the `ann` extra. The vector stores build one for a tenant that has
passed their `ann_threshold` (see `redstring.vector.rows`), and use it only
to pick candidate rows; every candidate is then rescored exactly, so scores,
filters and tie-breaks are the exact search's, and only which rows are
considered is approximate. Labels are the rows' positions in the tenant's
matrix. Why hnswlib, and these parameters: ADR 0026.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

try:
    import hnswlib
except ImportError as _import_error:  # pragma: no cover - exercised in a test via sys.modules
    raise ImportError(
        "redstring.vector.adapters.hnsw needs hnswlib: install redstring[ann] "
        "(pip install 'redstring[ann]')"
    ) from _import_error

if TYPE_CHECKING:
    from numpy.typing import NDArray

LINKS: Final = 32
"""Neighbours per node (HNSW's M): 16 reached only .95 recall@10 on e5 name vectors."""

BUILD_BREADTH: Final = 200
"""Candidates kept while inserting (ef_construction)."""

SEARCH_BREADTH: Final = 200
"""Candidates kept while searching (ef), at least: recall@10 .99 on e5 name vectors."""


class HnswIndex:
    """An HNSW graph over float32 rows, labelled by row position, cosine distance.

    Not thread-safe: the store serializes its writes and searches.
    """

    __slots__ = ("_index",)

    def __init__(self, dimension: int, capacity: int) -> None:
        self._index = hnswlib.Index(space="cosine", dim=dimension)
        self._index.init_index(
            max_elements=max(capacity, 1), M=LINKS, ef_construction=BUILD_BREADTH
        )
        self._index.set_num_threads(1)

    def put(self, rows: NDArray[np.intp], vectors: NDArray[np.float32]) -> None:
        """Insert or replace the vectors at these row labels."""
        needed = self._index.element_count + len(rows)
        if needed > self._index.get_max_elements():
            self._index.resize_index(max(needed, self._index.get_max_elements() * 3 // 2))
        self._index.add_items(vectors, rows, num_threads=1)

    def remove(self, row: int) -> None:
        """Stop returning the row label (until it is put again)."""
        self._index.mark_deleted(row)

    def nearest(self, query: NDArray[np.float32], count: int) -> NDArray[np.intp] | None:
        """About the `count` rows nearest `query`, or `None` if the graph cannot give that many.

        `count` must not exceed the rows the index holds that are not removed.
        """
        self._index.set_ef(max(SEARCH_BREADTH, count))
        try:
            labels, _ = self._index.knn_query(query, k=count, num_threads=1)
        except RuntimeError:  # too few reachable live rows; the caller searches exactly
            return None
        return np.asarray(labels[0], dtype=np.intp)
