"""The Postgres vector store: vectors kept in pgvector columns, searched exactly or by HNSW.

Tables, in the adapter's schema (`redstring` unless told otherwise):

- `vector_records`: one row per `(tenant_id, entity_id)`, the vector as a
  pgvector `vector(dimension)`, the metadata as JSON text, its
  `entity_type` in a column of its own, and the `revision` that wrote it.
- `vector_tenants`: each tenant's `generation`, moved by every write to it
  (and its `reset`, the generation at which it was last purged);
  `vector_deletions`: the revision at which each deleted vector went.

Exact search (the default) ranks a tenant held in this process as one
float32 matrix, with `redstring.vector.exact`, so it returns what the
in-memory store would. Each search first reads the tenant's generation; if
another writer has moved it, only the rows and deletions of later revisions
are fetched. Writers of one tenant take turns on its `vector_tenants` row,
so revisions commit in order. With an `HnswIndex`, the search runs in the
server instead, on a pgvector HNSW index, and the candidates it returns are
rescored exactly here. Needs the `postgres` extra. Design: ADR 0032.
"""

from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

import numpy as np

from redstring.domain.exceptions import DimensionMismatchError, EmbeddingModelMismatchError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.validation import (
    check_optional_name,
)
from redstring.domain.vector import VectorMatch, VectorRecord
from redstring.ports._vector_input import check_dimension
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.vector_store import VectorSearch, VectorStoreBase
from redstring.storage.adapters._replica import ReplicaSql, TenantReplicas
from redstring.storage.adapters.postgres import (
    DEFAULT_POOL_SIZE,
    DEFAULT_SCHEMA,
    PostgresClient,
    asyncpg,
)
from redstring.vector.exact import RowSearch, entity_type_of
from redstring.vector.rows import TenantRows

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Collection, Iterator, Sequence

    from numpy.typing import NDArray


#: The layout this module reads and writes, recorded in the schema's `meta` table.
SCHEMA_VERSION: Final = 1
#: pgvector's limit on the dimension of an indexed `vector` column.
MAX_INDEXED_DIMENSION: Final = 2_000
_COMPONENT: Final = "vector"
#: float32's relative precision, from which the index's rounding margin is derived.
_FLOAT32_EPSILON: Final = float(np.finfo(np.float32).eps)
#: pgvector's ceiling on `hnsw.ef_search`; a larger `k` is reached by its iterative scan.
_MAX_EF_SEARCH: Final = 1_000
#: An index search reads its `k` nearest candidates and at least this many more
#: (`k` more when `k` is larger), before it reads all `ef_search` it visited.
_FIRST_EXTRA: Final = 32
#: Postgres's ceilings on `maintenance_work_mem` (in MB) and `max_parallel_maintenance_workers`.
_MAX_BUILD_MEMORY_MB: Final = 2_097_151
_MAX_BUILD_WORKERS: Final = 1_024
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_COPY_HEADER: Final = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_COPY_TRAILER: Final = struct.pack(">h", -1)
_NULL: Final = struct.pack(">i", -1)
_COPY_MESSAGE_BYTES: Final = 1 << 20
_STAGING_COLUMNS: Final = ("tenant_id", "entity_id", "entity_type", "metadata", "embedding")


@dataclass(frozen=True, slots=True)
class HnswIndex:
    """Ask a `PostgresVectorStore` to search by pgvector's HNSW index rather than exactly.

    `m` and `ef_construction` shape the index when the store creates it (an
    existing index is kept as it is); `ef_search` is how many candidates each
    search follows: higher finds more of the true nearest neighbours, slower.
    The defaults gave recall@10 of .993 against exact search on 59,800 real
    e5 name vectors, where pgvector's own (16, 64, 40) gave .63
    (`bench/postgres.py`).
    Tenant and type filters use pgvector's iterative scan (`relaxed_order`),
    so a filtered search still returns `k` matches when the tenant holds them.

    `build_memory_mb` and `build_workers` apply only to the transaction in
    which the store creates the index (`maintenance_work_mem` and
    `max_parallel_maintenance_workers`); `None` keeps the server's setting.
    Creating the index over rows already stored is fast only when its graph
    fits in that memory, about 2.2 KB per 384-dimensional vector at `m` 16
    (so 2,200 MB for a million): past it pgvector goes on building, many
    times slower. The server must be able to give the build that much.

    Raises:
        ValueError: a parameter is outside pgvector's range.
    """

    m: int = 16
    ef_construction: int = 200
    ef_search: int = 200
    build_memory_mb: int | None = None
    build_workers: int | None = None

    def __post_init__(self) -> None:
        for name, value, low, high in (
            ("m", self.m, 2, 100),
            ("ef_construction", self.ef_construction, 4, 1000),
            ("ef_search", self.ef_search, 1, 1000),
            ("build_memory_mb", self.build_memory_mb, 1, _MAX_BUILD_MEMORY_MB),
            ("build_workers", self.build_workers, 0, _MAX_BUILD_WORKERS),
        ):
            if value is None and name.startswith("build_"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer within {low}..{high}, got {value!r}")
        if self.ef_construction < 2 * self.m:
            raise ValueError(
                f"ef_construction must be at least 2 * m ({2 * self.m}), got {self.ef_construction}"
            )


#: A tenant's rows as held here, tagged with the generation they reflect.


def _dumps(metadata: dict[str, Any], index: int) -> str:
    try:
        return _ENCODER.encode(metadata)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"records[{index}].metadata is not plain JSON: {exc}") from exc


def _text_field(value: str | None) -> bytes:
    if value is None:
        return _NULL
    data = value.encode()
    return struct.pack(">i", len(data)) + data


def _copy_rows(
    records: Sequence[VectorRecord], matrix: NDArray[np.float32], metadata: Sequence[str]
) -> Iterator[bytes]:
    """The records as Postgres's binary COPY format, in the staging table's column order."""
    dimension = matrix.shape[1]
    prefix = struct.pack(">hi", len(_STAGING_COLUMNS), 16)
    uuid_length = struct.pack(">i", 16)
    vector_head = struct.pack(">iHH", 4 + 4 * dimension, dimension, 0)
    big_endian = matrix.astype(">f4")
    yield _COPY_HEADER
    for index, record in enumerate(records):
        yield b"".join(
            (
                prefix,
                record.tenant_id.bytes,
                uuid_length,
                record.entity_id.bytes,
                _text_field(entity_type_of(record.metadata)),
                _text_field(metadata[index]),
                vector_head,
                big_endian[index].tobytes(),
            )
        )
    yield _COPY_TRAILER


def _index_settings(ef_search: int) -> dict[str, str]:
    """The server settings an index search runs with."""
    return {"hnsw.ef_search": str(ef_search), "hnsw.iterative_scan": "relaxed_order"}


def _build_settings(index: HnswIndex) -> dict[str, str]:
    """The server settings the index is created with, beyond the server's own."""
    settings: dict[str, str] = {}
    if index.build_memory_mb is not None:
        settings["maintenance_work_mem"] = f"{index.build_memory_mb}MB"
    if index.build_workers is not None:
        settings["max_parallel_maintenance_workers"] = str(index.build_workers)
    return settings


async def _chunked(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    """`pieces` joined into messages of about `_COPY_MESSAGE_BYTES` each."""
    buffer: list[bytes] = []
    size = 0
    for piece in pieces:
        buffer.append(piece)
        size += len(piece)
        if size >= _COPY_MESSAGE_BYTES:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


class _Sql:
    """Every statement the store runs, with its schema and the vector type filled in."""

    def __init__(self, schema: str, extension: str, dimension: int) -> None:
        s, x = f'"{schema}"', f'"{extension}"'
        self.tables = (
            f"""CREATE TABLE {s}.vector_records (
                tenant_id uuid NOT NULL,
                entity_id uuid NOT NULL,
                entity_type text,
                metadata text NOT NULL,
                embedding {x}.vector({dimension}) NOT NULL,
                revision bigint NOT NULL,
                PRIMARY KEY (tenant_id, entity_id)
            )""",
            f"CREATE INDEX vector_records_by_revision ON {s}.vector_records (tenant_id, revision)",
            f"""CREATE TABLE {s}.vector_tenants (
                tenant_id uuid PRIMARY KEY,
                generation bigint NOT NULL,
                reset bigint NOT NULL DEFAULT 0
            )""",
            f"""CREATE TABLE {s}.vector_deletions (
                tenant_id uuid NOT NULL,
                entity_id uuid NOT NULL,
                revision bigint NOT NULL,
                PRIMARY KEY (tenant_id, entity_id)
            )""",
        )
        self.staging = f"""
            CREATE TEMPORARY TABLE redstring_vector_staging (
                tenant_id uuid NOT NULL,
                entity_id uuid NOT NULL,
                entity_type text,
                metadata text NOT NULL,
                embedding {x}.vector({dimension}) NOT NULL
            ) ON COMMIT DROP"""
        self.bump_staged = f"""
            INSERT INTO {s}.vector_tenants AS t (tenant_id, generation)
            SELECT DISTINCT tenant_id, 1 FROM redstring_vector_staging ORDER BY tenant_id
            ON CONFLICT (tenant_id) DO UPDATE SET generation = t.generation + 1"""
        self.upsert_staged = f"""
            INSERT INTO {s}.vector_records
                (tenant_id, entity_id, entity_type, metadata, embedding, revision)
            SELECT r.tenant_id, r.entity_id, r.entity_type, r.metadata, r.embedding, t.generation
            FROM redstring_vector_staging AS r
            JOIN {s}.vector_tenants AS t ON t.tenant_id = r.tenant_id
            ON CONFLICT (tenant_id, entity_id) DO UPDATE SET
                entity_type = excluded.entity_type,
                metadata = excluded.metadata,
                embedding = excluded.embedding,
                revision = excluded.revision"""
        self.forget_staged_deletions = f"""
            DELETE FROM {s}.vector_deletions AS d USING redstring_vector_staging AS r
            WHERE d.tenant_id = r.tenant_id AND d.entity_id = r.entity_id"""
        self.bump = f"""
            INSERT INTO {s}.vector_tenants AS t (tenant_id, generation) VALUES ($1, 1)
            ON CONFLICT (tenant_id) DO UPDATE SET generation = t.generation + 1
            RETURNING generation"""
        self.delete = (
            f"DELETE FROM {s}.vector_records WHERE tenant_id = $1 AND entity_id = $2 RETURNING 1"
        )
        self.record_deletion = f"""
            INSERT INTO {s}.vector_deletions (tenant_id, entity_id, revision) VALUES ($1, $2, $3)
            ON CONFLICT (tenant_id, entity_id) DO UPDATE SET revision = excluded.revision"""
        self.purge = (
            f"DELETE FROM {s}.vector_records WHERE tenant_id = $1",
            f"DELETE FROM {s}.vector_deletions WHERE tenant_id = $1",
            f"UPDATE {s}.vector_tenants SET reset = generation WHERE tenant_id = $1",
        )
        self.get = f"""
            SELECT {x}.vector_send(embedding), metadata FROM {s}.vector_records
            WHERE tenant_id = $1 AND entity_id = $2"""
        self.generation = f"SELECT generation, reset FROM {s}.vector_tenants WHERE tenant_id = $1"
        self.held_tenants = f"SELECT DISTINCT tenant_id FROM {s}.vector_records ORDER BY 1"
        self.count_tenant = f"SELECT count(*) FROM {s}.vector_records WHERE tenant_id = $1"
        self.count_by_tenant = (
            f"SELECT tenant_id, count(*) FROM {s}.vector_records GROUP BY tenant_id"
        )
        self.rows_since = f"""
            SELECT entity_id, entity_type, metadata, {x}.vector_send(embedding)
            FROM {s}.vector_records WHERE tenant_id = $1 AND revision > $2"""
        self.deletions_since = f"""
            SELECT entity_id FROM {s}.vector_deletions WHERE tenant_id = $1 AND revision > $2"""
        self.replica = ReplicaSql(self.generation, self.rows_since, self.deletions_since)
        # The index's `$3` nearest, of which only those within `$5` of the
        # `$4`-th nearest distance travel back: the rest cannot make the cut.
        nearest = f"""
            WITH candidates AS MATERIALIZED (
                SELECT entity_id, entity_type, metadata, embedding,
                       embedding OPERATOR({x}.<=>) $2::real[]::{x}.vector AS distance
                FROM {s}.vector_records WHERE tenant_id = $1{{types}}
                ORDER BY distance LIMIT $3
            )
            SELECT entity_id, entity_type, metadata, {x}.vector_send(embedding)
            FROM candidates
            WHERE distance <= coalesce(
                (SELECT distance FROM candidates ORDER BY distance OFFSET $4 - 1 LIMIT 1),
                'Infinity'
            ) + $5"""
        self.nearest = nearest.format(types="")
        self.nearest_of_types = nearest.format(types=" AND entity_type = ANY($6::text[])")
        self.index = (
            f"CREATE INDEX IF NOT EXISTS vector_records_hnsw ON {s}.vector_records "
            f"USING hnsw (embedding {x}.vector_cosine_ops) "
            "WITH (m = {m}, ef_construction = {ef_construction})"
        )


def _search_rows(
    rows: TenantRows[EntityId, str],
    query: NDArray[np.float64],
    k: int,
    allowed_types: Collection[int] | None,
    min_score: float | None,
) -> list[VectorMatch]:
    """`rows.search` over rows that hold each record's metadata as JSON text."""
    metadata = rows.metadata
    return rows.search(
        RowSearch(
            rows.keys, lambda row: json.loads(metadata[row]), query, k, allowed_types, min_score
        )
    )


class PostgresVectorStore(AsyncClosable, VectorStoreBase):
    """A `VectorStore` kept in Postgres with pgvector, shared by every process that opens it.

    Give a `dsn` and the store opens a pool of up to `pool_size` connections
    on first use; or give a `pool` you own (an `asyncpg.Pool`), which it uses
    and never closes. On first use it creates the `vector` extension if the
    database lacks it (which needs the right to), then its tables in
    `schema`, recording the dimension and, when given, the embedding `model`.

    By default search is exact and equals `InMemoryVectorStore`'s: this
    process holds each searched tenant as a float32 matrix (4 bytes per
    dimension per vector) and brings it up to date before every search.
    Pass `index=HnswIndex()` to search in the server by an HNSW index
    instead, for tenants too large to hold or scan (see `HnswIndex`); the
    store creates the index on first use. Each write is one transaction, so
    a batch is stored whole or not at all, even if the writer is killed.
    With `read_only=True` (and a `dsn`) nothing is created, recorded or
    written: a schema that holds no redstring vectors is refused on first
    use with `StoreError`, and so is every write. `stored_settings` reads
    what a schema records before a store is opened.

    Raises:
        ValueError: `dimension` is not a positive integer, `model` is blank,
            or not exactly one of `dsn` and `pool` is given.
        DimensionMismatchError: on first use, the schema holds vectors of
            another dimension (`expected` is the schema's).
        EmbeddingModelMismatchError: on first use, `model` was given and the
            schema records vectors of another model.
        StoreError: the store is closed, the database failed (the driver's
            error is the `__cause__`), or the schema holds a vector layout
            version this code does not read.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        dimension: int,
        pool: asyncpg.Pool | None = None,
        model: str | None = None,
        index: HnswIndex | None = None,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = DEFAULT_POOL_SIZE,
        read_only: bool = False,
    ) -> None:
        self._dimension = check_dimension(dimension)
        model = check_optional_name(model, argument="model")
        if model is not None and not model.strip():
            raise ValueError(f"model must not be blank, got {model!r}")
        if index is not None and not isinstance(index, HnswIndex):
            raise ValueError(f"index must be an HnswIndex or None, got {index!r}")
        if index is not None and dimension > MAX_INDEXED_DIMENSION:
            raise ValueError(
                f"an HNSW index holds at most {MAX_INDEXED_DIMENSION} dimensions, "
                f"got dimension {dimension}"
            )
        self._model = model
        self._index = index
        self._client = PostgresClient(
            dsn=dsn,
            pool=pool,
            schema=schema,
            pool_size=pool_size,
            store="postgres vector store",
            resource=f"{type(self).__name__}(schema={schema!r})",
            settings=None if index is None else _index_settings(index.ef_search),
            read_only=read_only,
        )
        self._sql: _Sql | None = None
        self._ready = asyncio.Lock()
        self._tenants: TenantReplicas[TenantRows[EntityId, str]] = TenantReplicas(
            empty=lambda: TenantRows(self._dimension), apply=self._apply
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        mode = "exact" if self._index is None else repr(self._index)
        return f"{type(self).__name__}(dimension={self._dimension}, {mode}, {state})"

    def _describe(self) -> str:
        return f"schema={self._client.schema!r}"

    @staticmethod
    async def stored_settings(
        dsn: str, *, schema: str = DEFAULT_SCHEMA
    ) -> tuple[int, str | None] | None:
        """The `(dimension, model)` a schema's vectors were stored with, read-only.

        `None` when the schema holds no vector store; the model is `None`
        when no store that wrote it named one. Lets a caller choose the
        embedding model before opening the store.

        Raises:
            ValueError: `dsn` is blank or `schema` is not a lower-case SQL identifier.
            StoreError: the server cannot be reached or read.
        """
        client = PostgresClient(
            dsn=dsn,
            pool=None,
            schema=schema,
            pool_size=1,
            store="postgres vector store",
            resource="PostgresVectorStore.stored_settings",
            read_only=True,
        )
        try:
            settings = await client.recorded_settings(_COMPONENT)
        finally:
            await client.close()
        dimension = settings.get("dimension")
        return None if dimension is None else (int(dimension), settings.get("model"))

    async def _release(self) -> None:
        """Close the pool if the store opened it, and drop held tenants."""
        self._tenants.clear()
        await self._client.close()

    # -- schema ---------------------------------------------------------------

    async def _prepare(self) -> tuple[PostgresClient, _Sql]:
        if self._sql is not None and not self._client.closed:
            return self._client, self._sql
        async with self._ready:
            if self._sql is None:
                self._sql = await self._create()
        return self._client, self._sql

    async def _create(self) -> _Sql:
        client = self._client
        if client.read_only:
            return await self._check_read_only()
        async with client.transaction() as connection:
            extension = await connection.fetchval(
                "SELECT n.nspname FROM pg_extension AS e "
                "JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            )
        if extension is None:
            await client.create_vector_extension()
            async with client.connection() as connection:
                extension = await connection.fetchval(
                    "SELECT n.nspname FROM pg_extension AS e "
                    "JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
                )
        sql = _Sql(client.schema, str(extension), self._dimension)
        settings = await client.ensure_tables(_COMPONENT, SCHEMA_VERSION, sql.tables)
        async with client.transaction() as connection:
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", client.schema)
            settings = {**settings, **await client.read_settings(connection, _COMPONENT)}
            recorded = settings.get("dimension")
            if recorded is None:
                await client.record_setting(
                    connection, _COMPONENT, "dimension", str(self._dimension)
                )
            elif int(recorded) != self._dimension:
                raise DimensionMismatchError(expected=int(recorded), actual=self._dimension)
            if self._model is not None:
                held = settings.get("model")
                if held is None:
                    await client.record_setting(connection, _COMPONENT, "model", self._model)
                elif held != self._model:
                    raise EmbeddingModelMismatchError(
                        store=client.store, expected=held, actual=self._model
                    )
            if self._index is not None:
                for name, value in _build_settings(self._index).items():
                    await connection.execute("SELECT set_config($1, $2, true)", name, value)
                await connection.execute(
                    sql.index.format(m=self._index.m, ef_construction=self._index.ef_construction)
                )
        return sql

    async def _check_read_only(self) -> _Sql:
        """What `_create` checks, creating and recording nothing."""
        client = self._client
        settings = await client.ensure_tables(_COMPONENT, SCHEMA_VERSION, ())
        async with client.connection() as connection:
            extension = await connection.fetchval(
                "SELECT n.nspname FROM pg_extension AS e "
                "JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            )
        if extension is None:
            raise client.error("the database lacks the vector extension")
        recorded = settings.get("dimension")
        if recorded is not None and int(recorded) != self._dimension:
            raise DimensionMismatchError(expected=int(recorded), actual=self._dimension)
        held = settings.get("model")
        if self._model is not None and held is not None and held != self._model:
            raise EmbeddingModelMismatchError(store=client.store, expected=held, actual=self._model)
        return _Sql(client.schema, str(extension), self._dimension)

    async def count_by_tenant(self) -> dict[TenantId, int]:
        """How many vectors each tenant holds, for every tenant that holds any."""
        client, sql = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(sql.count_by_tenant)
        return {TenantId(UUID(bytes=tenant.bytes)): count for tenant, count in rows}

    async def _held_tenants(self) -> list[TenantId]:
        client, sql = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(sql.held_tenants)
        return [TenantId(UUID(bytes=row[0].bytes)) for row in rows]

    async def _count(self, tenant_id: TenantId) -> int:
        client, sql = await self._prepare()
        async with client.connection() as connection:
            return int(await connection.fetchval(sql.count_tenant, tenant_id))

    # -- writes ---------------------------------------------------------------

    async def _upsert(self, record: VectorRecord, rows: NDArray[np.float32]) -> None:
        await self._copy_in([record], rows)

    async def _upsert_many(
        self, batch: Sequence[VectorRecord], rows: NDArray[np.float32], norms: NDArray[np.float32]
    ) -> None:
        await self._copy_in(batch, rows)

    async def _copy_in(self, records: Sequence[VectorRecord], matrix: NDArray[np.float32]) -> None:
        """Write the batch in one transaction: binary `COPY` into a staging table, one upsert."""
        metadata = [_dumps(record.metadata, index) for index, record in enumerate(records)]
        latest = {(record.tenant_id, record.entity_id): n for n, record in enumerate(records)}
        keep = sorted(latest.values())
        kept_records = [records[index] for index in keep]
        kept_metadata = [metadata[index] for index in keep]
        client, sql = await self._prepare()
        async with client.transaction() as connection:
            await connection.execute(sql.staging)
            await connection.copy_to_table(
                "redstring_vector_staging",
                source=_chunked(_copy_rows(kept_records, matrix[keep], kept_metadata)),
                columns=_STAGING_COLUMNS,
                format="binary",
            )
            await connection.execute(sql.bump_staged)
            await connection.execute(sql.upsert_staged)
            await connection.execute(sql.forget_staged_deletions)

    async def _delete(self, entity_id: EntityId, tenant_id: TenantId) -> bool:
        client, sql = await self._prepare()
        async with client.transaction() as connection:
            if await connection.fetchval(sql.delete, tenant_id, entity_id) is None:
                return False
            revision = await connection.fetchval(sql.bump, tenant_id)
            await connection.execute(sql.record_deletion, tenant_id, entity_id, revision)
        return True

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        client, sql = await self._prepare()
        async with client.transaction() as connection:
            await connection.fetchval(sql.bump, tenant_id)
            status = await connection.execute(sql.purge[0], tenant_id)
            for statement in sql.purge[1:]:
                await connection.execute(statement, tenant_id)
        return int(status.rsplit(" ", 1)[-1])

    # -- reads ----------------------------------------------------------------

    async def _get(self, entity_id: EntityId, tenant_id: TenantId) -> VectorRecord | None:
        client, sql = await self._prepare()
        async with client.connection() as connection:
            row = await connection.fetchrow(sql.get, tenant_id, entity_id)
        if row is None:
            return None
        return VectorRecord(
            entity_id=entity_id,
            tenant_id=tenant_id,
            vector=self._vectors([row[0]])[0],
            metadata=json.loads(row[1]),
        )

    async def _search(self, search: VectorSearch, tenant_id: TenantId) -> list[VectorMatch]:
        """Exact unless the store was given an `HnswIndex`."""
        if self._index is not None:
            return await self._search_index(search, tenant_id)
        query, k, entity_types, min_score = search
        tenant = await self._current(tenant_id)
        return _search_rows(tenant, query, k, tenant.allowed_types(entity_types), min_score)

    async def _search_index(self, search: VectorSearch, tenant_id: TenantId) -> list[VectorMatch]:
        assert self._index is not None
        k = search.k
        # The index hands out its candidates nearest first. Those within
        # float32 rounding of the k-th travel back, so that the exact
        # rescoring below decides ties and near-ties at the cut as the exact
        # search decides them. Each candidate read costs a table row, so
        # only the first few are read; when every one of them is within the
        # margin, the margin may reach further, and the search is asked
        # again for all it visits.
        candidates = max(self._index.ef_search, k)
        first = min(candidates, k + max(k, _FIRST_EXTRA))
        rows = await self._nearest(search, tenant_id, first, candidates)
        if len(rows) == first < candidates:
            rows = await self._nearest(search, tenant_id, candidates, candidates)
        # The index's distances are float32 and, scanned iteratively, only
        # roughly ordered: rescore the candidates exactly.
        found: TenantRows[EntityId, str] = TenantRows(self._dimension)
        found.put_many(
            [EntityId(UUID(bytes=row[0].bytes)) for row in rows],
            self._vectors([row[3] for row in rows]),
            [row[1] for row in rows],
            [row[2] for row in rows],
        )
        return _search_rows(found, search.query, k, None, search.min_score)

    async def _nearest(
        self, search: VectorSearch, tenant_id: TenantId, limit: int, candidates: int
    ) -> list[Any]:
        """The index's first `limit` candidates that are within the margin of their k-th."""
        assert self._index is not None
        query, k, entity_types, _ = search
        client, sql = await self._prepare()
        margin = 4 * self._dimension * _FLOAT32_EPSILON
        # As `real[]`, which the driver sends in binary: the query is float32 already.
        arguments: list[Any] = [tenant_id, query.tolist(), limit, k, margin]
        if entity_types is not None:
            arguments.append(list(entity_types))
        statement = sql.nearest if entity_types is None else sql.nearest_of_types
        if client.owns_pool and candidates == self._index.ef_search:
            # The pool's connections start with the index settings: one round trip.
            async with client.connection() as connection:
                return list(await connection.fetch(statement, *arguments))
        async with client.transaction(readonly=True) as connection:
            for name, value in _index_settings(min(candidates, _MAX_EF_SEARCH)).items():
                await connection.execute("SELECT set_config($1, $2, true)", name, value)
            return list(await connection.fetch(statement, *arguments))

    def _vectors(self, blobs: Sequence[bytes]) -> NDArray[np.float32]:
        """Pgvector's binary form of each vector, as rows of one float32 matrix."""
        width = 4 + 4 * self._dimension
        if any(len(blob) != width for blob in blobs):
            raise self._client.error(
                f"a stored vector is not {self._dimension}-dimensional; the table is damaged"
            )
        joined = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
        return joined[:, 4:].copy().view(">f4").astype(np.float32)

    async def _current(self, tenant_id: TenantId) -> TenantRows[EntityId, str]:
        """The tenant as held here, brought up to what the database has committed."""
        client, sql = await self._prepare()
        return (await self._tenants.current(client, sql.replica, tenant_id)).value

    def _apply(
        self,
        tenant_id: TenantId,
        held: TenantRows[EntityId, str],
        rows: Sequence[Any],
        deleted: list[UUID],
    ) -> None:
        """Bring `held` up by the rows written and the ids deleted since it was current."""
        for entity_id in deleted:
            held.remove(EntityId(entity_id))
        if rows:
            held.put_many(
                [EntityId(UUID(bytes=row[0].bytes)) for row in rows],
                self._vectors([row[3] for row in rows]),
                [row[1] for row in rows],
                [row[2] for row in rows],
            )
