"""The SQLite vector store: vectors kept in one file, searched exactly in memory.

A record is a row of `vector_records`, keyed `(tenant_id, entity_id)` as
text, holding the vector as a float32 blob, the metadata as JSON and the
metadata's `entity_type` in a column of its own. `vector_meta` records the
schema version, the dimension and, when a store names one, the embedding
model; other tables in the same file are left
alone, so a graph store may share it.

A search loads the tenant into one float32 matrix and ranks it with
`redstring.vector.exact`, so it returns what the in-memory store would. The
matrix stays cached (`redstring.vector.cache`: at most `cached_tenants`
tenants, least recently used dropped first). Every write bumps the tenant's
generation in `vector_tenants` in the same transaction, and the store applies
its own writes to the cached matrix rather than reloading it, unless the
generation it found in that transaction shows another connection wrote the
tenant first. Before using a cached tenant the store asks `PRAGMA
data_version` whether another connection has committed since, and if one
has, drops each cached tenant whose generation moved. A write to another table
of a shared file drops nothing.

A tenant searched through an approximate index (past `ann_threshold`) keeps
that index next to the file, in the directory `<path>-ann`, as the files
`redstring.vector.adapters.hnsw.save_index` writes, tagged with the file's
id (`vector_meta`'s `file_id`), the tenant and its generation. Loading the
tenant adopts the saved index when the tag, the tenant's keys and a sample
of its vectors all match, and builds a new one otherwise; a new index is
saved once built, and an index this store's writes have changed is saved
again on close (ADR 0039).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sqlite3
import urllib.parse
import uuid
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

import numpy as np

from redstring.domain.exceptions import (
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StoreError,
)
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.validation import (
    check_optional_name,
    check_path,
)
from redstring.domain.vector import VectorMatch, VectorRecord
from redstring.ports._vector_input import check_dimension
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorSearch, VectorStoreBase
from redstring.storage.adapters.sqlite import (
    BUSY_TIMEOUT_SECONDS,
    SqliteWorker,
    check_schema_to_read,
    ensure_schema,
    held_tenants,
    read_transaction,
    tenant_rows,
    uuid_texts,
    write_transaction,
)
from redstring.vector.adapters._sqlite_rows import (
    BUMP,
    UPSERT,
    BatchMetadata,
    blobs,
    dumps_checked,
    entity_id_of,
)
from redstring.vector.cache import DEFAULT_CACHED_TENANTS, CachedTenant, TenantCache
from redstring.vector.exact import RowSearch, entity_type_of
from redstring.vector.rows import (
    DEFAULT_ANN_THRESHOLD,
    LazyMap,
    TenantRows,
    check_ann_threshold,
    latest_by_key,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from contextlib import AbstractContextManager

    from numpy.typing import NDArray

#: The layout this module reads and writes; a file recording another is refused.
SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE vector_records (
        tenant_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        entity_type TEXT,
        vector BLOB NOT NULL,
        metadata TEXT NOT NULL,
        PRIMARY KEY (tenant_id, entity_id)
    )""",
    "CREATE INDEX vector_records_by_tenant ON vector_records (tenant_id)",
    "CREATE TABLE vector_tenants (tenant_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)",
)

#: Visits a tenant's rows in rowid order, which reads the table far faster
#: than the primary key's (tenant_id, entity_id) order does.
_BY_INDEX = "INDEXED BY vector_records_by_tenant"
_BY_TENANT = f"{_BY_INDEX} WHERE tenant_id = ?"


type _Row = tuple[str, str, str | None, bytes, str]


type _Rows = TenantRows[str, str]
"""A cached tenant: rows keyed by entity id text, metadata kept as its JSON text."""

#: What a write does to a cached tenant once it has committed.
type _Apply = Callable[[_Rows], None]


def _transaction(
    connection: sqlite3.Connection, mode: Literal["DEFERRED", "IMMEDIATE"]
) -> AbstractContextManager[None]:
    """A write transaction (`IMMEDIATE`) or one read snapshot (`DEFERRED`)."""
    return write_transaction(connection) if mode == "IMMEDIATE" else read_transaction(connection)


class SqliteVectorStore(AsyncClosable, VectorStoreBase):
    """A `VectorStore` kept in one SQLite file, searched exactly with numpy.

    Keyed `(tenant_id, entity_id)`; results equal `InMemoryVectorStore`'s for
    the same data. Each batch is validated whole, then written in one
    transaction. All SQLite work runs on one worker thread per store, whose
    connection is opened on first use, in WAL mode; the constructor does no
    I/O. Other stores and processes may read and write the same file: a
    search sees every write committed before it started.

    Raises:
        ValueError: `dimension` or `cached_tenants` is not a positive
            integer, or `ann_threshold` is neither `None` nor a positive
            integer.
        DimensionMismatchError: on first use, the file was made with another
            dimension (`expected` is the file's, `actual` this store's).
        EmbeddingModelMismatchError: on first use, `model` was given and the
            file records vectors of another model.
        StoreError: on first use, the file records another schema version;
            on any call, a `sqlite3` failure (wrapped, naming the path) or a
            damaged vector.
        ClosedError: the store has been closed.

    With `read_only=True` the file is opened read-only and never created or
    changed: one that holds no redstring vectors is refused on first use
    with `StoreError`, and so is every write.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dimension: int,
        model: str | None = None,
        cached_tenants: int = DEFAULT_CACHED_TENANTS,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        read_only: bool = False,
    ) -> None:
        self._dimension = check_dimension(dimension)
        model = check_optional_name(model, argument="model")
        self._cache: TenantCache[str, str] = TenantCache(cached_tenants)
        self._ann_threshold = check_ann_threshold(ann_threshold)
        self._read_only = read_only
        if model is not None and not model.strip():
            raise ValueError(f"model must not be blank, got {model!r}")
        self._model = model
        self._path = check_path(path)
        self._worker = SqliteWorker(
            self._path,
            store=f"sqlite vector store {self._path}",
            resource=self._resource_name(),
            setup=self._check_schema,
            read_only=read_only,
        )
        # Touched only on the worker thread.
        self._data_version: int | None = None
        self._file_id: str | None = None
        # The generation each tenant's index was last saved or adopted at.
        self._saved: dict[str, int] = {}

    @staticmethod
    async def stored_settings(path: str | os.PathLike[str]) -> tuple[int, str | None] | None:
        """The `(dimension, model)` a file's vectors were stored with, read-only.

        `None` when the file does not exist or holds no vector store; the
        model is `None` when no store that wrote the file named one. Lets a
        caller choose the embedding model before opening the store.

        Raises:
            StoreError: the file exists but cannot be read as SQLite.
        """
        location = check_path(path)

        def read() -> tuple[int, str | None] | None:
            if not os.path.isfile(location):
                return None
            uri = "file:" + urllib.parse.quote(os.path.abspath(location)) + "?mode=ro"
            connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS)
            try:
                exists = connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_meta'"
                ).fetchone()
                if exists is None:
                    return None
                meta = dict(connection.execute("SELECT key, value FROM vector_meta").fetchall())
            finally:
                connection.close()
            dimension, model = meta.get("dimension"), meta.get("model")
            if not isinstance(dimension, int):
                return None
            return dimension, model if isinstance(model, str) else None

        try:
            return await asyncio.to_thread(read)
        except sqlite3.Error as exc:
            raise StoreError(store=f"sqlite vector store {location}", reason=str(exc)) from exc

    def _describe(self) -> str:
        return repr(self._path)

    async def _release(self) -> None:
        """Save the indexes this store's writes changed, close the connection, stop the worker."""
        try:
            if self._saved:
                await self._run(self._save_changed)
        finally:
            await self._worker.close()
            self._cache.clear()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work` on the worker thread with the open connection."""
        return await self._worker.run(work)

    def _error(self, reason: str) -> StoreError:
        return self._worker.error(reason)

    # -- the worker thread --------------------------------------------------------

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        """Create the tables in a new file, or check the version and dimension of an old one."""
        store = f"sqlite vector store {self._path}"
        if self._read_only:
            check_schema_to_read(
                connection,
                meta_table="vector_meta",
                key_column="key",
                version=SCHEMA_VERSION,
                store=store,
                what="vector",
                held="vectors",
            )
        else:
            ensure_schema(
                connection,
                meta_schema=(
                    "CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value NOT NULL)"
                ),
                meta_table="vector_meta",
                key_column="key",
                version=SCHEMA_VERSION,
                statements=_SCHEMA,
                store=store,
                what="vector",
                on_create=self._record_settings,
            )
        self._check_meta(connection, dict(connection.execute("SELECT key, value FROM vector_meta")))

    def _record_settings(self, connection: sqlite3.Connection) -> None:
        """Record a new file's dimension, id and model, beside its schema version."""
        settings: list[tuple[str, object]] = [
            ("dimension", self._dimension),
            ("file_id", uuid.uuid4().hex),
        ]
        if self._model is not None:
            settings.append(("model", self._model))
        connection.executemany("INSERT INTO vector_meta (key, value) VALUES (?, ?)", settings)

    def _check_meta(self, connection: sqlite3.Connection, meta: dict[str, Any]) -> None:
        dimension = meta.get("dimension")
        if not isinstance(dimension, int):
            raise self._error(f"the file records no vector dimension, but {dimension!r}")
        if dimension != self._dimension:
            raise DimensionMismatchError(expected=dimension, actual=self._dimension)
        file_id = meta.get("file_id")
        if file_id is None and not self._read_only:
            # A file from before saved indexes: give it an id once.
            with _transaction(connection, "IMMEDIATE"):
                connection.execute(
                    "INSERT OR IGNORE INTO vector_meta (key, value) VALUES ('file_id', ?)",
                    (uuid.uuid4().hex,),
                )
                (file_id,) = connection.execute(
                    "SELECT value FROM vector_meta WHERE key = 'file_id'"
                ).fetchone()
        self._file_id = file_id if isinstance(file_id, str) else None
        if self._model is not None:
            recorded = meta.get("model")
            if recorded is None and not self._read_only:
                with _transaction(connection, "IMMEDIATE"):
                    connection.execute(
                        "INSERT OR IGNORE INTO vector_meta (key, value) VALUES ('model', ?)",
                        (self._model,),
                    )
            elif recorded is not None and recorded != self._model:
                raise EmbeddingModelMismatchError(
                    store=f"sqlite vector store {self._path}",
                    expected=str(recorded),
                    actual=self._model,
                )

    def _write(
        self,
        connection: sqlite3.Connection,
        changes: dict[str, _Apply],
        statements: Callable[[], int],
    ) -> int:
        """Run `statements` (returning the rows changed) in one transaction.

        The tenants' generations (`changes`' keys) move when a row changed,
        so other connections drop their cached copies. This store applies
        each tenant's change to its own cached rows after the commit, if the
        generation it found inside the transaction is the one its rows are
        current for; otherwise (another connection wrote the tenant since,
        or the write failed) it drops them.
        """
        found: dict[str, int] = {}
        try:
            with _transaction(connection, "IMMEDIATE"):
                for tenant in changes:
                    if tenant in self._cache:
                        found[tenant] = self._generation(connection, tenant)
                changed = statements()
                if changed:
                    connection.executemany(BUMP, [(tenant,) for tenant in changes])
        except BaseException:
            for tenant in changes:
                self._cache.drop(tenant)
            raise
        for tenant, apply in changes.items():
            entry = self._cache.peek(tenant)
            if entry is None:
                continue
            if found.get(tenant) != entry.generation:
                self._cache.drop(tenant)
                continue
            if changed:
                # Uncached while the change is applied, so a failure leaves nothing stale.
                self._cache.drop(tenant)
                apply(entry.rows)
                self._cache.put(tenant, entry.generation + 1, entry.rows)
        return changed

    def _rows(self, connection: sqlite3.Connection, tenant: str) -> CachedTenant[str, str]:
        """The tenant's cached rows, reloaded if another connection has changed them."""
        (version,) = connection.execute("PRAGMA data_version").fetchone()
        if version != self._data_version:
            self._data_version = version
            for other in self._cache.tenants():
                entry = self._cache.peek(other)
                if entry is not None and self._generation(connection, other) != entry.generation:
                    self._cache.drop(other)
        cached = self._cache.get(tenant)
        if cached is None:
            generation, rows = self._load(connection, tenant)
            self._adopt_saved(tenant, generation, rows)
            cached = self._cache.put(tenant, generation, rows)
        return cached

    @staticmethod
    def _generation(connection: sqlite3.Connection, tenant: str) -> int:
        row = connection.execute(
            "SELECT generation FROM vector_tenants WHERE tenant_id = ?", (tenant,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def _load(self, connection: sqlite3.Connection, tenant: str) -> tuple[int, _Rows]:
        """Read the whole tenant, and its generation, in one read transaction."""
        width = 4 * self._dimension
        texts: list[str] = []
        entity_types: list[str | None] = []
        metadata: list[str] = []
        with _transaction(connection, "DEFERRED"):
            generation = self._generation(connection, tenant)
            (count,) = connection.execute(
                f"SELECT count(*) FROM vector_records {_BY_TENANT}", (tenant,)
            ).fetchone()
            # Filled in place: a numpy allocation, unlike a bytes buffer, is
            # eligible for huge pages, which makes every search measurably faster.
            matrix = np.empty((count, self._dimension), dtype=np.float32)
            into = memoryview(matrix.reshape(-1).view(np.uint8))
            rows = connection.execute(
                f"SELECT entity_id, entity_type, metadata, vector FROM vector_records {_BY_TENANT}",
                (tenant,),
            )
            for row, (entity_id, entity_type, stored, blob) in enumerate(rows):
                self._check_blob(blob)
                into[row * width : (row + 1) * width] = blob
                texts.append(entity_id)
                entity_types.append(entity_type)
                metadata.append(stored)
        return generation, TenantRows.loaded(
            texts, matrix, entity_types, metadata, ann_threshold=self._ann_threshold
        )

    # -- the saved approximate index -----------------------------------------------

    def _ann_directory(self) -> str | None:
        """Where this file's indexes are saved; `None` for a database not in a file."""
        if self._path in ("", ":memory:") or self._file_id is None:
            return None
        return self._path + "-ann"

    def _tag(self, tenant: str, generation: int) -> dict[str, object]:
        return {"file_id": self._file_id, "tenant": tenant, "generation": generation}

    def _adopt_saved(self, tenant: str, generation: int, rows: _Rows) -> None:
        """Give `rows` the index saved for this generation of the tenant, if it is sound."""
        directory = self._ann_directory()
        threshold = rows.ann_threshold
        if directory is None or threshold is None or len(rows) < threshold:
            return
        try:
            from redstring.vector.adapters.hnsw import load_index
        except ImportError:
            return
        found = load_index(
            directory, tenant, tag=self._tag(tenant, generation), dimension=self._dimension
        )
        if found is None:
            return
        index, keys = found
        if keys != rows.keys:
            # Saved after this store's own deletes moved rows: the same keys, another order.
            position = {key: row for row, key in enumerate(rows.keys)}
            if len(keys) != len(rows) or len(set(keys)) != len(keys):
                return
            order = np.fromiter((position.get(key, -1) for key in keys), np.intp, len(keys))
            if (order < 0).any():
                return
            rows.reorder(order)
        if index.matches(rows.matrix[: len(rows)]):
            rows.adopt_ann(index)
            self._saved[tenant] = generation

    def _save(self, tenant: str, generation: int, rows: _Rows) -> None:
        """Save the tenant's index, tagged `generation`; a failure to write only loses the copy."""
        directory = self._ann_directory()
        if directory is None or self._read_only or rows.ann is None:
            return
        from redstring.vector.adapters.hnsw import save_index

        try:
            save_index(
                rows.ann, directory, tenant, tag=self._tag(tenant, generation), keys=rows.keys
            )
        except (OSError, RuntimeError):
            return
        self._saved[tenant] = generation

    def _save_changed(self, connection: sqlite3.Connection) -> None:
        """Save each cached index this store's writes moved past its saved generation."""
        for tenant in self._cache.tenants():
            entry = self._cache.peek(tenant)
            if (
                entry is not None
                and entry.rows.ann is not None
                and self._saved.get(tenant, entry.generation) != entry.generation
                and self._generation(connection, tenant) == entry.generation
            ):
                self._save(tenant, entry.generation, entry.rows)

    def _check_blob(self, blob: bytes) -> bytes:
        """`blob`, if it holds one vector of this store's dimension."""
        if len(blob) != 4 * self._dimension:
            raise self._error(
                f"a stored vector has {len(blob)} bytes, not {4 * self._dimension}; "
                "the file is damaged"
            )
        return blob

    # -- writes ---------------------------------------------------------------

    async def _upsert(self, record: VectorRecord, rows: NDArray[np.float32]) -> None:
        entity_id, tenant_id, metadata = record.entity_id, record.tenant_id, record.metadata
        text, entity_type = dumps_checked(metadata, "metadata"), entity_type_of(metadata)
        tenant, key = str(tenant_id), str(entity_id)
        row = (tenant, key, entity_type, rows[0].tobytes(), text)

        def apply(cached: _Rows) -> None:
            cached.put_many([key], rows, [entity_type], [text])

        def work(connection: sqlite3.Connection) -> None:
            self._write(
                connection, {tenant: apply}, lambda: connection.execute(UPSERT, row).rowcount
            )

        await self._run(work)

    async def _upsert_many(
        self, batch: Sequence[VectorRecord], rows: NDArray[np.float32], norms: NDArray[np.float32]
    ) -> None:
        records = batch

        def work(connection: sqlite3.Connection) -> None:
            written, changes = self._prepare(records, rows)
            self._write(
                connection, changes, lambda: connection.executemany(UPSERT, written).rowcount
            )

        await self._run(work)

    def _prepare(
        self, records: Sequence[VectorRecord], matrix: NDArray[np.float32]
    ) -> tuple[list[_Row], dict[str, _Apply]]:
        """The rows to write for `records` (checked vectors `matrix`), and each tenant's change."""
        shared = BatchMetadata()
        encoded = [
            shared.get(record.metadata, f"records[{index}].metadata")
            for index, record in enumerate(records)
        ]
        texts = [text for text, _ in encoded]
        types = [entity_type for _, entity_type in encoded]
        stored = blobs([record.vector for record in records], matrix)
        tenant_texts: dict[int, str] = {}
        tenants: list[str] = []
        for record in records:
            tenant = tenant_texts.get(record.tenant_id.int)
            if tenant is None:
                tenant = tenant_texts[record.tenant_id.int] = str(record.tenant_id)
            tenants.append(tenant)
        keys = uuid_texts([record.entity_id for record in records])
        latest = latest_by_key(list(zip(tenants, keys, strict=True)))
        rows: list[_Row] = (
            # Every key distinct: `latest` is every index, in order.
            list(zip(tenants, keys, types, stored, texts, strict=True))
            if len(latest) == len(records)
            else [(tenants[i], keys[i], types[i], stored[i], texts[i]) for i in latest]
        )
        by_tenant: dict[str, list[int]] = {}
        for index in latest:
            by_tenant.setdefault(tenants[index], []).append(index)

        def apply_to(indexes: list[int]) -> _Apply:
            def apply(cached: _Rows) -> None:
                cached.put_many(
                    [keys[i] for i in indexes],
                    matrix[indexes],
                    [types[i] for i in indexes],
                    [texts[i] for i in indexes],
                )

            return apply

        return rows, {tenant: apply_to(indexes) for tenant, indexes in by_tenant.items()}

    async def _delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        key = (str(tenant_id), str(entity_id))

        def apply(rows: _Rows) -> None:
            rows.remove(key[1])

        def work(connection: sqlite3.Connection) -> bool:
            statement = "DELETE FROM vector_records WHERE tenant_id = ? AND entity_id = ?"
            return bool(
                self._write(
                    connection, {key[0]: apply}, lambda: connection.execute(statement, key).rowcount
                )
            )

        return await self._run(work)

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        tenant = str(tenant_id)

        def apply(rows: _Rows) -> None:
            for key in list(rows.keys):
                rows.remove(key)

        def work(connection: sqlite3.Connection) -> int:
            statement = "DELETE FROM vector_records WHERE tenant_id = ?"
            return self._write(
                connection,
                {tenant: apply},
                lambda: connection.execute(statement, (tenant,)).rowcount,
            )

        return await self._run(work)

    # -- reads ----------------------------------------------------------------

    async def count_by_tenant(self) -> dict[TenantId, int]:
        """How many vectors each tenant holds, for every tenant that holds any."""

        def work(connection: sqlite3.Connection) -> dict[TenantId, int]:
            rows = connection.execute(
                "SELECT tenant_id, count(*) FROM vector_records GROUP BY tenant_id"
            ).fetchall()
            return {TenantId(UUID(tenant)): count for tenant, count in rows}

        return await self._run(work)

    async def _held_tenants(self) -> list[TenantId]:
        return await self._run(lambda connection: held_tenants(connection, "vector_records"))

    async def _count(self, tenant_id: TenantId) -> int:
        counted = functools.partial(
            tenant_rows, table="vector_records", tenant=str(tenant_id), via=_BY_INDEX
        )
        return await self._run(counted)

    async def _get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:

        def work(connection: sqlite3.Connection) -> VectorRecord | None:
            row = connection.execute(
                "SELECT vector, metadata FROM vector_records WHERE tenant_id = ? AND entity_id = ?",
                (str(tenant_id), str(entity_id)),
            ).fetchone()
            if row is None:
                return None
            return VectorRecord(
                entity_id=entity_id,
                tenant_id=tenant_id,
                vector=np.frombuffer(self._check_blob(row[0]), dtype=np.float32),
                metadata=json.loads(row[1]),
            )

        return await self._run(work)

    async def _search(self, search: VectorSearch, tenant_id: TenantId) -> list[VectorMatch]:
        query, k, entity_types, min_score = search
        tenant = str(tenant_id)

        # On the worker thread, like the writes that change the cached rows.
        def work(connection: sqlite3.Connection) -> list[VectorMatch]:
            entry = self._rows(connection, tenant)
            rows, index = entry.rows, entry.rows.ann
            found = rows.search(
                RowSearch(
                    LazyMap(rows.keys, entity_id_of),
                    lambda row: json.loads(rows.metadata[row]),
                    query,
                    k,
                    rows.allowed_types(entity_types),
                    min_score,
                )
            )
            if rows.ann is not None and rows.ann is not index:
                self._save(tenant, entry.generation, rows)
            return found

        return await self._run(work)
