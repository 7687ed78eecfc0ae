"""An approximate nearest-neighbour index over one tenant's rows: HNSW, from hnswlib.

Needs the `ann` extra. The vector stores build one for a tenant that has
passed their `ann_threshold` (see `redstring.vector.rows`), and use it only
to pick candidate rows; every candidate is then rescored exactly, so scores,
filters and tie-breaks are the exact search's, and only which rows are
considered is approximate. Labels are the rows' positions in the tenant's
matrix. Why hnswlib, and these parameters: ADR 0026.

`save_index` and `load_index` keep an index in two files next to each other:
hnswlib's own (`<name>.hnsw`) and a manifest (`<name>.json`) holding the
caller's tag, the row keys in label order and a CRC-32 of the hnswlib file.
`load_index` returns `None`, never a partly trusted index, for anything that
does not match: a missing, truncated or damaged file, another tag, another
dimension. Why: ADR 0039.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
import zlib
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from redstring.domain.exceptions import missing_extra

try:
    import hnswlib
except ImportError as _import_error:  # pragma: no cover - exercised in a test via sys.modules
    raise missing_extra("redstring.vector.adapters.hnsw needs hnswlib", "ann") from _import_error

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import NDArray

LINKS: Final = 32
"""Neighbours per node (HNSW's M): 16 reached only .95 recall@10 on e5 name vectors."""

BUILD_BREADTH: Final = 200
"""Candidates kept while inserting (ef_construction)."""

SEARCH_BREADTH: Final = 200
"""Candidates kept while searching (ef), at least: recall@10 .99 on e5 name vectors."""

FORMAT: Final = 1
"""The manifest layout `save_index` writes and `load_index` reads."""

#: How many stored vectors `load_index` compares with the rows it is given.
_SPOT_CHECKS: Final = 32
_CHUNK: Final = 1 << 24


class HnswGraph:
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

    @classmethod
    def build(cls, matrix: NDArray[np.float32], *, threads: int = 1) -> HnswGraph:
        """An index over every row of `matrix`, labelled `0..len(matrix) - 1`.

        `threads` hnswlib threads insert the rows. With more than one the
        insertion order, and so the graph, varies a little from build to build.
        """
        size = len(matrix)
        index = cls(matrix.shape[1], capacity=size + size // 4)
        index._index.add_items(matrix, np.arange(size, dtype=np.intp), num_threads=threads)
        return index

    def __len__(self) -> int:
        """How many labels the index holds, removed ones included."""
        return int(self._index.element_count)

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

    def matches(self, matrix: NDArray[np.float32]) -> bool:
        """Whether the index holds exactly `matrix`'s rows, by label, checked on a sample.

        The index must hold at least a label per row (labels past the rows
        are ones removed), and the vectors at up to `_SPOT_CHECKS` evenly
        spread labels must be live and be the rows' directions.
        """
        size = len(matrix)
        if len(self) < size or self._index.dim != matrix.shape[1]:
            return False
        if size == 0:
            return True
        sample = np.unique(np.linspace(0, size - 1, min(size, _SPOT_CHECKS)).astype(np.intp))
        try:
            stored = np.asarray(self._index.get_items(sample), dtype=np.float32)
        except RuntimeError:  # a label missing or removed
            return False
        rows = matrix[sample].astype(np.float64)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return bool(np.allclose(stored, rows, atol=1e-5))


def _crc32(path: str) -> int:
    crc = 0
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def _fsync(path: str) -> None:
    with open(path, "rb") as file:
        os.fsync(file.fileno())


def save_index(
    index: HnswGraph, directory: str, name: str, *, tag: Mapping[str, Any], keys: Sequence[str]
) -> None:
    """Write `index` as `directory/name.hnsw` plus its manifest, replacing any old pair.

    `keys[label]` is the key of the row at each label; `tag` (JSON values)
    is what `load_index` must be given back to accept the files. Each file
    is written under a temporary name, flushed to disk and renamed over the
    old one, so a crash leaves the old pair, the new pair, or a new index
    file with the old manifest, which `load_index` refuses (its CRC does not
    match). Temporary files are removed on failure.

    Raises:
        OSError: the directory cannot be created or a file cannot be written.
    """
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, name)
    temporary = f"{target}.{uuid.uuid4().hex}.tmp"
    try:
        index._index.save_index(temporary)
        _fsync(temporary)
        manifest = {
            "format": FORMAT,
            "tag": dict(tag),
            "dimension": int(index._index.dim),
            "count": len(keys),
            "bytes": os.path.getsize(temporary),
            "crc32": _crc32(temporary),
            "keys": list(keys),
        }
        os.replace(temporary, target + ".hnsw")
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(manifest, file, ensure_ascii=False, separators=(",", ":"))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target + ".json")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
    with contextlib.suppress(OSError):  # not every platform can open a directory
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def load_index(
    directory: str, name: str, *, tag: Mapping[str, Any], dimension: int
) -> tuple[HnswGraph, list[str]] | None:
    """The index `save_index` wrote under `name`, and its keys by label; `None` if unusable.

    `None` when either file is missing or unreadable, the manifest is not
    this format, its tag is not `tag`, its dimension is not `dimension`,
    the index file's size or CRC-32 is not the one recorded, or hnswlib
    refuses the file. The caller still checks that the keys are its rows'
    and `HnswGraph.matches` before trusting the index.
    """
    target = os.path.join(directory, name)
    try:
        with open(target + ".json", encoding="utf-8") as file:
            manifest = json.load(file)
        if not (
            isinstance(manifest, dict)
            and manifest.get("format") == FORMAT
            and manifest.get("tag") == dict(tag)
            and manifest.get("dimension") == dimension
        ):
            return None
        keys, count = manifest.get("keys"), manifest.get("count")
        if not (
            isinstance(keys, list)
            and all(isinstance(key, str) for key in keys)
            and count == len(keys)
            and os.path.getsize(target + ".hnsw") == manifest.get("bytes")
            and _crc32(target + ".hnsw") == manifest.get("crc32")
        ):
            return None
        index = HnswGraph.__new__(HnswGraph)
        index._index = hnswlib.Index(space="cosine", dim=dimension)
        index._index.load_index(target + ".hnsw", max_elements=max(count + count // 4, 1))
        index._index.set_num_threads(1)
    except (OSError, ValueError, RuntimeError):  # ValueError covers bad JSON and text
        return None
    if len(index) < count:
        return None
    return index, keys
