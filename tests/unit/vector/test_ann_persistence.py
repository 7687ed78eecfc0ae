"""The SQLite vector store keeps a large tenant's approximate index next to its file.

Reopening a file whose tenant has not changed adopts the saved index instead
of building one; builds are counted by wrapping `HnswGraph.build`, never
timed. A saved index is used only for the file, tenant and generation it was
saved for, and only when it is sound: anything else is rebuilt, and every
answer stays the exact search's (a few hundred rows, search breadth 200).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from typing import TYPE_CHECKING
from uuid import UUID

import numpy as np
import pytest

from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import OTHER_TENANT, TENANT
from redstring.vector.adapters.memory import InMemoryVectorStore
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import NDArray

    from redstring.domain.ids import TenantId
    from redstring.ports.vector_store import VectorStore

hnsw = pytest.importorskip("redstring.vector.adapters.hnsw")

DIMENSION = 16
SIZE = 240
THRESHOLD = 200


def entity_id(n: int) -> EntityId:
    return EntityId(UUID(int=n + 1))


def clustered(seed: int, count: int = SIZE) -> NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, DIMENSION))
    picks = rng.integers(0, 12, count)
    return (centres[picks] + 0.1 * rng.standard_normal((count, DIMENSION))).astype(np.float32)


def records(matrix: NDArray[np.float32], tenant: TenantId = TENANT) -> list[VectorRecord]:
    return [
        VectorRecord(
            entity_id=entity_id(n),
            tenant_id=tenant,
            vector=row,
            metadata={"entity_type": "ab"[n % 2]},
        )
        for n, row in enumerate(matrix)
    ]


class Builds:
    """Counts `HnswGraph.build` calls while still building."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        build = hnsw.HnswGraph.build.__func__

        def counted(cls: type, /, matrix: NDArray[np.float32], **options: int) -> object:
            self.count += 1
            return build(cls, matrix, **options)

        monkeypatch.setattr(hnsw.HnswGraph, "build", classmethod(counted))


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Builds:
    return Builds(monkeypatch)


def store(path: Path, **options: object) -> SqliteVectorStore:
    options.setdefault("ann_threshold", THRESHOLD)
    return SqliteVectorStore(path, dimension=DIMENSION, **options)  # type: ignore[arg-type]


async def exact_of(*tenants: tuple[TenantId, NDArray[np.float32]]) -> InMemoryVectorStore:
    exact = InMemoryVectorStore(dimension=DIMENSION, ann_threshold=None)
    for tenant, matrix in tenants:
        await exact.upsert_many(records(matrix, tenant))
    return exact


async def assert_answers_as(
    found: VectorStore, exact: VectorStore, queries: NDArray[np.float32], tenant: TenantId = TENANT
) -> None:
    for query in queries:
        for types in (None, ["a"]):
            expected = await exact.search(query, tenant, k=10, entity_types=types)
            assert await found.search(query, tenant, k=10, entity_types=types) == expected


def side_files(path: Path, tenant: TenantId = TENANT) -> tuple[Path, Path]:
    directory = path.parent / (path.name + "-ann")
    return directory / f"{tenant}.hnsw", directory / f"{tenant}.json"


async def saved_file(path: Path, matrix: NDArray[np.float32]) -> None:
    """A file whose tenant's index has been built once and saved."""
    first = store(path)
    await first.upsert_many(records(matrix))
    await first.search(matrix[0], TENANT, k=10)
    await first.close()


async def test_reopening_an_unchanged_file_adopts_the_saved_index(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(1)
    await saved_file(path, matrix)
    assert builds.count == 1
    assert all(file.exists() for file in side_files(path))
    again = store(path)
    await assert_answers_as(again, await exact_of((TENANT, matrix)), matrix[::40] + 0.01)
    assert builds.count == 1
    await again.close()
    third = store(path, read_only=True)
    await third.search(matrix[3], TENANT, k=5)
    await third.close()
    assert builds.count == 1


async def test_an_index_changed_by_the_stores_own_writes_is_saved_on_close(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(2)
    await saved_file(path, matrix)
    writer = store(path)
    await writer.search(matrix[0], TENANT, k=10)
    more = clustered(3, 30)
    extra = [
        VectorRecord(entity_id=entity_id(SIZE + n), tenant_id=TENANT, vector=row)
        for n, row in enumerate(more)
    ]
    await writer.upsert_many(extra)
    # Deletes move the last rows into the holes: the saved order is not the file's.
    for n in (0, 7, 100):
        assert await writer.delete(entity_id(n), TENANT)
    await writer.search(matrix[1], TENANT, k=10)
    await writer.close()
    assert builds.count == 1

    exact = await exact_of((TENANT, matrix))
    await exact.upsert_many(extra)
    for n in (0, 7, 100):
        await exact.delete(entity_id(n), TENANT)
    reopened = store(path)
    await assert_answers_as(reopened, exact, np.vstack([matrix[::40], more[::10]]))
    assert builds.count == 1
    await reopened.close()


async def test_a_write_by_another_connection_makes_the_saved_index_stale(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(4)
    await saved_file(path, matrix)
    reader, writer = store(path), store(path)
    await reader.search(matrix[0], TENANT, k=10)
    assert builds.count == 1
    moved = -matrix[5]
    await writer.upsert(entity_id(5), moved, TENANT, metadata={"entity_type": "b"})
    await writer.close()
    exact = await exact_of((TENANT, matrix))
    await exact.upsert(entity_id(5), moved, TENANT, metadata={"entity_type": "b"})
    # The reader's cached tenant is dropped; its reload rebuilds rather than trust the file.
    await assert_answers_as(reader, exact, np.vstack([moved, matrix[::60]]))
    assert builds.count == 2
    await reader.close()
    fresh = store(path)
    await assert_answers_as(fresh, exact, np.vstack([moved, matrix[::60]]))
    assert builds.count == 2  # the reader saved its rebuilt index
    await fresh.close()


async def test_a_file_written_without_saving_the_index_is_rebuilt_on_reopen(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(5)
    await saved_file(path, matrix)
    # No search after this write: nothing saves the index at the new generation.
    writer = store(path)
    await writer.upsert(entity_id(0), matrix[1], TENANT)
    await writer.close()
    exact = await exact_of((TENANT, matrix))
    await exact.upsert(entity_id(0), matrix[1], TENANT)
    reopened = store(path)
    await assert_answers_as(reopened, exact, matrix[:3])
    assert builds.count == 2
    await reopened.close()


async def test_tenants_never_use_each_others_index(tmp_path: Path, builds: Builds) -> None:
    path, mine, theirs = tmp_path / "v.db", clustered(6), clustered(7)
    first = store(path)
    # The same entity ids in both tenants, with other vectors.
    await first.upsert_many(records(mine) + records(theirs, OTHER_TENANT))
    await first.search(mine[0], TENANT, k=1)
    await first.search(theirs[0], OTHER_TENANT, k=1)
    await first.close()
    assert builds.count == 2
    # One tenant's files under the other's name are refused: their tag names the other.
    for source, target in zip(side_files(path), side_files(path, OTHER_TENANT), strict=True):
        shutil.copyfile(source, target)
    exact = await exact_of((TENANT, mine), (OTHER_TENANT, theirs))
    again = store(path)
    await assert_answers_as(again, exact, mine[::60])
    assert builds.count == 2
    await assert_answers_as(again, exact, theirs[::60], OTHER_TENANT)
    assert builds.count == 3
    await again.close()


def flip_a_byte(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))


def damage(kind: str, index: Path, manifest: Path) -> None:
    if kind == "truncated index":
        index.write_bytes(index.read_bytes()[:-100])
    elif kind == "flipped index byte":
        flip_a_byte(index)
    elif kind == "no index":
        index.unlink()
    elif kind == "garbage manifest":
        manifest.write_bytes(b"\xff\x00 not json")
    elif kind == "manifest not an object":
        manifest.write_text("[1, 2]")
    elif kind == "truncated manifest":
        manifest.write_text(manifest.read_text()[:-30])
    elif kind == "keys not text":
        text = manifest.read_text()
        manifest.write_text(text.replace('"keys":["', '"keys":[1,"', 1))
    elif kind == "a key renamed":
        text = manifest.read_text()
        manifest.write_text(text.replace(str(entity_id(3)), str(entity_id(999_999)), 1))
    elif kind == "a key twice":
        text = manifest.read_text()
        manifest.write_text(text.replace(str(entity_id(3)), str(entity_id(4)), 1))
    elif kind == "valid hnswlib file, other vectors":
        other = hnsw.HnswGraph(DIMENSION, SIZE)  # not counted as a build of the store's
        other.put(np.arange(SIZE, dtype=np.intp), clustered(99))
        os.replace(_saved_elsewhere(other, index.parent), index)
        _recrc(index, manifest)
    elif kind == "hnswlib refuses it":
        index.write_bytes(b"\x00" * 64)
        _recrc(index, manifest)
    else:  # pragma: no cover - a typo in the parameters below
        raise AssertionError(kind)


def _saved_elsewhere(index: object, directory: Path) -> Path:
    hnsw.save_index(index, str(directory), "other", tag={}, keys=[])
    (directory / "other.json").unlink()
    return directory / "other.hnsw"


def _recrc(index: Path, manifest: Path) -> None:
    """Make the manifest vouch for the index file as it now is."""
    import json
    import zlib

    content = json.loads(manifest.read_text())
    data = index.read_bytes()
    content["bytes"], content["crc32"] = len(data), zlib.crc32(data)
    manifest.write_text(json.dumps(content))


@pytest.mark.parametrize(
    "kind",
    [
        "truncated index",
        "flipped index byte",
        "no index",
        "garbage manifest",
        "manifest not an object",
        "truncated manifest",
        "keys not text",
        "a key renamed",
        "a key twice",
        "valid hnswlib file, other vectors",
        "hnswlib refuses it",
    ],
)
async def test_a_damaged_or_mismatched_saved_index_is_ignored_and_rebuilt(
    tmp_path: Path, builds: Builds, kind: str
) -> None:
    path, matrix = tmp_path / "v.db", clustered(8)
    await saved_file(path, matrix)
    damage(kind, *side_files(path))
    again = store(path)
    await assert_answers_as(again, await exact_of((TENANT, matrix)), matrix[::30] + 0.01)
    assert builds.count == 2
    await again.close()
    # The rebuilt index replaced the damaged files.
    last = store(path)
    await last.search(matrix[0], TENANT, k=1)
    assert builds.count == 2
    await last.close()


async def test_another_file_at_the_same_path_does_not_use_the_old_index(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(9)
    await saved_file(path, matrix)
    kept = tmp_path / "kept-ann"
    shutil.copytree(side_files(path)[0].parent, kept)
    path.unlink()
    # The same ids, generation and vectors but one, a row the spot check does not
    # sample: only the file id tells the old index from this file's.
    other = matrix.copy()
    other[5] = -matrix[5]
    await saved_file(path, other)
    shutil.rmtree(side_files(path)[0].parent)
    shutil.copytree(kept, side_files(path)[0].parent)
    again = store(path)
    await assert_answers_as(again, await exact_of((TENANT, other)), other[[5, 60, 120]])
    assert builds.count == 3
    await again.close()


async def test_a_tenant_below_the_threshold_saves_nothing(tmp_path: Path, builds: Builds) -> None:
    path, matrix = tmp_path / "v.db", clustered(11, THRESHOLD - 1)
    small = store(path)
    await small.upsert_many(records(matrix))
    await small.search(matrix[0], TENANT, k=10)
    await small.close()
    assert builds.count == 0
    assert not side_files(path)[0].parent.exists()


async def test_a_read_only_store_or_an_in_memory_database_writes_no_index(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(12)
    writer = store(path, ann_threshold=None)
    await writer.upsert_many(records(matrix))
    await writer.close()
    reader = store(path, read_only=True)
    await reader.search(matrix[0], TENANT, k=10)
    await reader.close()
    assert builds.count == 1
    assert not side_files(path)[0].parent.exists()
    in_memory = SqliteVectorStore(":memory:", dimension=DIMENSION, ann_threshold=THRESHOLD)
    await in_memory.upsert_many(records(matrix))
    await in_memory.search(matrix[0], TENANT, k=10)
    await in_memory.close()
    assert builds.count == 2
    assert not (tmp_path / ":memory:-ann").exists()


async def test_an_index_that_cannot_be_saved_costs_only_the_copy(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(13)
    side_files(path)[0].parent.write_text("a file where the directory would go")
    first = store(path)
    await first.upsert_many(records(matrix))
    await assert_answers_as(first, await exact_of((TENANT, matrix)), matrix[:2])
    await first.close()
    again = store(path)
    await again.search(matrix[0], TENANT, k=1)
    await again.close()
    assert builds.count == 2


async def test_a_file_from_before_saved_indexes_gets_an_id_and_then_saves(
    tmp_path: Path, builds: Builds
) -> None:
    path, matrix = tmp_path / "v.db", clustered(14)
    writer = store(path, ann_threshold=None)
    await writer.upsert_many(records(matrix))
    await writer.close()
    with sqlite3.connect(path) as connection:
        connection.execute("DELETE FROM vector_meta WHERE key = 'file_id'")
    connection.close()
    # Read-only, the old file has no id to tag an index with: built, not saved.
    reader = store(path, read_only=True)
    await reader.search(matrix[0], TENANT, k=1)
    await reader.close()
    assert not side_files(path)[0].parent.exists()
    await saved_file(path, matrix)
    assert builds.count == 2
    again = store(path)
    await again.search(matrix[0], TENANT, k=1)
    await again.close()
    assert builds.count == 2


async def test_without_the_ann_extra_a_saved_index_is_not_read(
    tmp_path: Path, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path, matrix = tmp_path / "v.db", clustered(15)
    await saved_file(path, matrix)
    monkeypatch.setitem(sys.modules, "redstring.vector.adapters.hnsw", None)
    exact_only = store(path)
    await assert_answers_as(exact_only, await exact_of((TENANT, matrix)), matrix[:2])
    await exact_only.close()
    assert builds.count == 1


def test_an_index_matches_only_rows_it_holds_live_in_their_directions() -> None:
    matrix = clustered(16, 40)
    index = hnsw.HnswGraph(DIMENSION, 40)
    index.put(np.arange(40, dtype=np.intp), matrix)
    assert index.matches(matrix)
    assert index.matches(matrix * 3)  # a direction, not a length
    assert index.matches(matrix[:30])  # labels past the rows are removed ones
    assert not index.matches(clustered(16, 41))
    assert not index.matches(np.ones((40, DIMENSION + 1), dtype=np.float32))
    assert not index.matches(matrix[::-1].copy())
    index.remove(0)
    assert not index.matches(matrix)
    assert hnsw.HnswGraph(DIMENSION, 1).matches(np.empty((0, DIMENSION), dtype=np.float32))


def test_a_manifest_naming_more_keys_than_the_index_holds_is_refused(tmp_path: Path) -> None:
    index = hnsw.HnswGraph(DIMENSION, 3)
    index.put(np.arange(3, dtype=np.intp), clustered(17, 3))
    hnsw.save_index(index, str(tmp_path), "t", tag={"n": 1}, keys=["a", "b", "c", "d"])
    assert hnsw.load_index(str(tmp_path), "t", tag={"n": 1}, dimension=DIMENSION) is None
    hnsw.save_index(index, str(tmp_path), "t", tag={"n": 1}, keys=["a", "b", "c"])
    found = hnsw.load_index(str(tmp_path), "t", tag={"n": 1}, dimension=DIMENSION)
    assert found is not None
    assert found[1] == ["a", "b", "c"]
    assert hnsw.load_index(str(tmp_path), "t", tag={"n": 2}, dimension=DIMENSION) is None
    assert hnsw.load_index(str(tmp_path), "t", tag={"n": 1}, dimension=DIMENSION + 1) is None
