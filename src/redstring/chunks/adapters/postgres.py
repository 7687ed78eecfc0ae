"""The Postgres chunk store: a `ChunkStore` that several processes can share.

Tables, in the adapter's schema (`redstring` unless told otherwise), laid
out as the SQLite store's (ADR 0062):

- `chunk_tenants`: per tenant, its BM25 statistics and its next slot and
  write number. A write locks its tenants' rows, so writes to one tenant
  take turns.
- `chunk_chunks`: one row per `(tenant_id, chunk_id)`, with its slot.
- `chunk_terms` and `chunk_postings`: per term, its document frequency and
  its segments of `redstring.chunks.postings` entries.
- `chunk_mentions`: one row per mention.

Every write is one transaction; a search reads in one repeatable-read
transaction and scores with the code the in-memory store uses, so every
store returns the same floats. Needs the `postgres` extra.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

import numpy as np

from redstring.chunks.postings import (
    PostingCache,
    PostingChanges,
    SegmentPlan,
    live_entries,
)
from redstring.chunks.scoring import best_slots, rank_slots, term_weights
from redstring.domain.bm25 import idf
from redstring.domain.chunk import (
    Chunk,
    Mention,
    ScoredChunk,
    check_mention_span,
    scored_chunk,
    trusted_chunk,
)
from redstring.domain.exceptions import MissingChunkError
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.ports.chunk_store import ChunkStoreBase
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.postgres import (
    DEFAULT_POOL_SIZE,
    DEFAULT_SCHEMA,
    Connection,
    PostgresClient,
    asyncpg,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The layout this module reads and writes, recorded in the schema's `meta` table.
SCHEMA_VERSION: Final = 2
_COMPONENT: Final = "chunk_store"

_TABLES: Final = (
    """CREATE TABLE {schema}.chunk_tenants (
        tenant_id uuid PRIMARY KEY,
        chunk_count bigint NOT NULL,
        total_length bigint NOT NULL,
        next_slot bigint NOT NULL,
        next_write bigint NOT NULL
    )""",
    """CREATE TABLE {schema}.chunk_chunks (
        tenant_id uuid NOT NULL,
        chunk_id uuid NOT NULL,
        slot integer NOT NULL,
        source_id text NOT NULL,
        ordinal integer NOT NULL,
        start integer NOT NULL,
        "end" integer NOT NULL,
        length integer NOT NULL,
        text text NOT NULL,
        metadata text NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id),
        UNIQUE (tenant_id, slot)
    )""",
    "CREATE INDEX chunk_chunks_by_source ON {schema}.chunk_chunks (tenant_id, source_id)",
    """CREATE TABLE {schema}.chunk_terms (
        tenant_id uuid NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        sizes bytea NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (tenant_id, term)
    )""",
    """CREATE TABLE {schema}.chunk_postings (
        tenant_id uuid NOT NULL,
        term text NOT NULL,
        position integer NOT NULL,
        entries bytea NOT NULL,
        PRIMARY KEY (tenant_id, term, position)
    )""",
    """CREATE TABLE {schema}.chunk_mentions (
        tenant_id uuid NOT NULL,
        chunk_id uuid NOT NULL,
        kind smallint NOT NULL,
        target_id uuid NOT NULL,
        start integer NOT NULL,
        "end" integer NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end")
    )""",
    "CREATE INDEX chunk_mentions_by_target ON {schema}.chunk_mentions (tenant_id, kind, target_id)",
)
_COLUMNS: Final = 'chunk_id, source_id, ordinal, start, "end", text, metadata'


def _chunk(tenant_id: TenantId, row: Sequence[Any] | asyncpg.Record) -> Chunk:
    chunk_id, source_id, ordinal, start, end, text, metadata = row
    return trusted_chunk(
        ChunkId(UUID(bytes=chunk_id.bytes)),
        tenant_id,
        SourceId(source_id),
        ordinal,
        text,
        start,
        end,
        json.loads(metadata),
    )


def _mention(tenant_id: TenantId, row: asyncpg.Record) -> Mention:
    chunk_id, kind, stored, start, end = row
    target = UUID(bytes=stored.bytes)
    return Mention.model_construct(
        tenant_id=tenant_id,
        chunk_id=ChunkId(UUID(bytes=chunk_id.bytes)),
        entity_id=EntityId(target) if kind == 0 else None,
        relationship_id=RelationshipId(target) if kind == 1 else None,
        start=None if start < 0 else start,
        end=None if end < 0 else end,
    )


class PostgresChunkStore(AsyncClosable, ChunkStoreBase):
    """A `ChunkStore` kept in Postgres: durable, shared, one transaction per write.

    Give a `dsn` and the store opens a pool of up to `pool_size` connections
    on first use; or give a `pool` you own (an `asyncpg.Pool`), which it
    uses and never closes. Nothing is held between calls, so every process
    sharing the schema reads every committed write.

    Raises (from any method):
        ValueError: from the constructor, not exactly one of `dsn` and
            `pool`, or a bad `schema`.
        StoreError: the database failed (the driver's error is the
            `__cause__`), or the schema holds a chunk store layout version
            this code does not read.
        ClosedError: the store has been closed.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: asyncpg.Pool | None = None,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self._client = PostgresClient(
            dsn=dsn,
            pool=pool,
            schema=schema,
            pool_size=pool_size,
            store="postgres chunk store",
            resource=f"{type(self).__name__}(schema={schema!r})",
        )
        self._s = f'"{self._client.schema}"'
        self._cache = PostingCache()
        self._ready = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"{type(self).__name__}(schema={self._client.schema!r}, {state})"

    def _resource_name(self) -> str:
        return f"{type(self).__name__}(schema={self._client.schema!r})"

    async def _release(self) -> None:
        self._cache.clear()
        await self._client.close()

    async def _prepare(self) -> PostgresClient:
        if not self._ready:
            await self._client.ensure_tables(_COMPONENT, SCHEMA_VERSION, _TABLES)
            self._ready = True
        return self._client

    # -- chunks ------------------------------------------------------------------

    async def _put_chunks(self, chunks: Sequence[Chunk]) -> None:
        by_tenant: dict[UUID, list[Chunk]] = {}
        for chunk in chunks:
            by_tenant.setdefault(chunk.tenant_id, []).append(chunk)
        client = await self._prepare()
        async with client.transaction() as connection:
            for tenant in sorted(by_tenant):  # one lock order, so two writers cannot deadlock
                await self._write_tenant(connection, tenant, by_tenant[tenant])

    async def _lock_tenant(self, connection: Connection, tenant: UUID) -> tuple[int, int]:
        """Lock the tenant's row, creating it; its next slot and next write number."""
        s = self._s
        await connection.execute(
            f"INSERT INTO {s}.chunk_tenants VALUES ($1, 0, 0, 0, 0) ON CONFLICT DO NOTHING",
            tenant,
        )
        row = await connection.fetchrow(
            f"SELECT next_slot, next_write FROM {s}.chunk_tenants WHERE tenant_id = $1 FOR UPDATE",
            tenant,
        )
        assert row is not None
        return int(row[0]), int(row[1])

    async def _write_tenant(self, connection: Connection, tenant: UUID, batch: list[Chunk]) -> None:
        s = self._s
        first, version = await self._lock_tenant(connection, tenant)
        replaced = await connection.fetch(
            f"SELECT chunk_id, slot, text FROM {s}.chunk_chunks WHERE tenant_id = $1 "
            "AND (source_id = ANY($2::text[]) OR chunk_id = ANY($3::uuid[]))",
            tenant,
            sorted({chunk.source_id for chunk in batch}),
            [chunk.id for chunk in batch],
        )
        changes = PostingChanges()
        await self._remove_chunks(connection, tenant, replaced, changes)
        lengths = changes.add_batch(first, [chunk.text for chunk in batch])
        await connection.copy_records_to_table(
            "chunk_chunks",
            schema_name=self._client.schema,
            columns=[
                "tenant_id",
                "chunk_id",
                "slot",
                "source_id",
                "ordinal",
                "start",
                "end",
                "length",
                "text",
                "metadata",
            ],
            records=[
                (
                    tenant,
                    chunk.id,
                    slot,
                    chunk.source_id,
                    chunk.ordinal,
                    chunk.start,
                    chunk.end,
                    length,
                    chunk.text,
                    json.dumps(chunk.metadata),
                )
                for slot, chunk, length in zip(
                    range(first, first + len(batch)), batch, lengths, strict=True
                )
            ],
        )
        await connection.execute(
            f"UPDATE {s}.chunk_tenants SET next_slot = $2 WHERE tenant_id = $1",
            tenant,
            first + len(batch),
        )
        await self._apply(connection, tenant, changes, version)

    async def _remove_chunks(
        self,
        connection: Connection,
        tenant: UUID,
        rows: Sequence[Any],
        changes: PostingChanges,
    ) -> None:
        if not rows:
            return
        for _, slot, text in rows:
            changes.remove(slot, text)
        ids = [row[0] for row in rows]
        for table in ("chunk_chunks", "chunk_mentions"):
            await connection.execute(
                f"DELETE FROM {self._s}.{table} "
                "WHERE tenant_id = $1 AND chunk_id = ANY($2::uuid[])",
                tenant,
                ids,
            )

    async def _apply(
        self, connection: Connection, tenant: UUID, changes: PostingChanges, version: int
    ) -> None:
        """Write the statistics and postings `changes` make, in the open transaction."""
        s = self._s
        await connection.execute(
            f"UPDATE {s}.chunk_tenants SET chunk_count = chunk_count + $2, "
            "total_length = total_length + $3, next_write = $4 WHERE tenant_id = $1",
            tenant,
            changes.count,
            changes.length,
            version + 1,
        )
        rows = await connection.fetch(
            f"SELECT term, df, sizes FROM {s}.chunk_terms "
            "WHERE tenant_id = $1 AND term = ANY($2::text[])",
            tenant,
            changes.terms(),
        )
        plan = SegmentPlan(changes, {row[0]: (row[1], row[2]) for row in rows})
        if plan.gone:
            for table in ("chunk_terms", "chunk_postings"):
                await connection.execute(
                    f"DELETE FROM {s}.{table} WHERE tenant_id = $1 AND term = ANY($2::text[])",
                    tenant,
                    plan.gone,
                )
        stored: dict[str, list[bytes]] = {}
        if plan.merges:
            for term, blob in await self._taken(connection, tenant, plan):
                stored.setdefault(term, []).append(blob)
        terms, segments = plan.finish(stored)
        if terms:
            await connection.execute(
                f"INSERT INTO {s}.chunk_terms (tenant_id, term, df, sizes, version) "
                "SELECT $1, *, $5 FROM unnest($2::text[], $3::integer[], $4::bytea[]) "
                "ON CONFLICT (tenant_id, term) DO UPDATE "
                "SET df = excluded.df, sizes = excluded.sizes, version = excluded.version",
                tenant,
                [row[0] for row in terms],
                [row[1] for row in terms],
                [row[2] for row in terms],
                version,
            )
        if segments:
            await connection.copy_records_to_table(
                "chunk_postings",
                schema_name=self._client.schema,
                columns=["tenant_id", "term", "position", "entries"],
                records=[(tenant, *segment) for segment in segments],
            )

    async def _taken(
        self, connection: Connection, tenant: UUID, plan: SegmentPlan
    ) -> list[tuple[str, bytes]]:
        """Remove the segments `plan` merges; return them, in position order per term."""
        rows = await connection.fetch(
            f"WITH merging AS (SELECT * FROM unnest($2::text[], $3::integer[]) AS m(term, first)), "
            f"taken AS (DELETE FROM {self._s}.chunk_postings p USING merging m "
            "WHERE p.tenant_id = $1 AND p.term = m.term AND p.position >= m.first "
            "RETURNING p.term, p.position, p.entries) "
            "SELECT term, entries FROM taken ORDER BY term, position",
            tenant,
            [term for term, _, _ in plan.merges],
            [first for _, first, _ in plan.merges],
        )
        return [(row[0], row[1]) for row in rows]

    async def _get_chunks(self, chunk_ids: list[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(
                f"SELECT {_COLUMNS} FROM {self._s}.chunk_chunks "
                "WHERE tenant_id = $1 AND chunk_id = ANY($2::uuid[])",
                tenant_id,
                chunk_ids,
            )
        return [_chunk(tenant_id, row) for row in rows]

    async def _get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(
                f"SELECT {_COLUMNS} FROM {self._s}.chunk_chunks "
                "WHERE tenant_id = $1 AND source_id = $2",
                tenant_id,
                source_id,
            )
        return [_chunk(tenant_id, row) for row in rows]

    async def _count_chunks(self, tenant_id: TenantId) -> int:
        client = await self._prepare()
        async with client.connection() as connection:
            count = await connection.fetchval(
                f"SELECT chunk_count FROM {self._s}.chunk_tenants WHERE tenant_id = $1", tenant_id
            )
        return 0 if count is None else int(count)

    async def _delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        client = await self._prepare()
        async with client.transaction() as connection:
            _, version = await self._lock_tenant(connection, tenant_id)
            rows = await connection.fetch(
                f"SELECT chunk_id, slot, text FROM {self._s}.chunk_chunks "
                "WHERE tenant_id = $1 AND source_id = $2",
                tenant_id,
                source_id,
            )
            if rows:
                changes = PostingChanges()
                await self._remove_chunks(connection, tenant_id, rows, changes)
                await self._apply(connection, tenant_id, changes, version)
        return len(rows)

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        client = await self._prepare()
        async with client.transaction() as connection:
            # The tenant's row stays, so its slot and write numbers are never reused.
            count = await connection.fetchval(
                f"SELECT chunk_count FROM {self._s}.chunk_tenants WHERE tenant_id = $1 FOR UPDATE",
                tenant_id,
            )
            await connection.execute(
                f"UPDATE {self._s}.chunk_tenants SET chunk_count = 0, total_length = 0 "
                "WHERE tenant_id = $1",
                tenant_id,
            )
            for table in ("chunks", "terms", "postings", "mentions"):
                await connection.execute(
                    f"DELETE FROM {self._s}.chunk_{table} WHERE tenant_id = $1", tenant_id
                )
        return 0 if count is None else int(count)

    # -- search ------------------------------------------------------------------

    async def _search(
        self,
        terms: list[str],
        tenant_id: TenantId,
        k: int,
        source_ids: frozenset[SourceId] | None,
    ) -> list[ScoredChunk]:
        s = self._s
        client = await self._prepare()
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            tenant = await connection.fetchrow(
                f"SELECT chunk_count, total_length, next_slot FROM {s}.chunk_tenants "
                "WHERE tenant_id = $1",
                tenant_id,
            )
            if tenant is None or not tenant[0]:
                return []
            count, total, size = (int(value) for value in tenant)
            held = {
                row[0]: (row[1], row[2])
                for row in await connection.fetch(
                    f"SELECT term, df, version FROM {s}.chunk_terms "
                    "WHERE tenant_id = $1 AND term = ANY($2::text[])",
                    tenant_id,
                    terms,
                )
            }
            postings = {term: self._cache.get(tenant_id, term, held[term][1]) for term in held}
            missing = [term for term, entries in postings.items() if entries is None]
            if missing:
                segments: dict[str, list[bytes]] = {}
                for term, blob in await connection.fetch(
                    f"SELECT term, entries FROM {s}.chunk_postings "
                    "WHERE tenant_id = $1 AND term = ANY($2::text[]) ORDER BY term, position",
                    tenant_id,
                    missing,
                ):
                    segments.setdefault(term, []).append(blob)
                for term in missing:
                    postings[term] = entries = live_entries(segments[term])
                    self._cache.put(tenant_id, term, held[term][1], entries)
            mean_length = total / count
            scores = np.zeros(size, dtype=np.float64)
            for term in terms:
                if term not in held:
                    continue
                cached = postings[term]
                assert cached is not None
                scores[cached["slot"]] += term_weights(
                    idf(held[term][0], count), cached["tf"], cached["length"], mean_length
                )
            if source_ids is not None:
                allowed = np.asarray(
                    [
                        row[0]
                        for row in await connection.fetch(
                            f"SELECT slot FROM {s}.chunk_chunks "
                            "WHERE tenant_id = $1 AND source_id = ANY($2::text[])",
                            tenant_id,
                            sorted(source_ids),
                        )
                    ],
                    dtype=np.intp,
                )
                kept = np.zeros_like(scores)
                kept[allowed] = scores[allowed]
                scores = kept
            found = best_slots(scores, k)
            if not len(found):
                return []
            hits = await connection.fetch(
                f"SELECT slot, {_COLUMNS} FROM {s}.chunk_chunks "
                "WHERE tenant_id = $1 AND slot = ANY($2::integer[]) ORDER BY slot",
                tenant_id,
                found.tolist(),
            )
        slots = np.asarray([row[0] for row in hits], dtype=np.intp)
        ints = [row[1].int for row in hits]
        high = np.asarray([value >> 64 for value in ints], dtype=np.uint64)
        low = np.asarray([value & 0xFFFF_FFFF_FFFF_FFFF for value in ints], dtype=np.uint64)
        order = rank_slots(scores[slots], high, low, k)
        return [
            scored_chunk(_chunk(tenant_id, list(hits[index])[1:]), float(scores[slots[index]]))
            for index in order.tolist()
        ]

    # -- mentions ----------------------------------------------------------------

    async def _put_mentions(self, mentions: list[Mention]) -> None:
        client = await self._prepare()
        async with client.transaction() as connection:
            held: dict[tuple[UUID, UUID], Chunk] = {}
            for tenant in {mention.tenant_id for mention in mentions}:
                rows = await connection.fetch(
                    f"SELECT {_COLUMNS} FROM {self._s}.chunk_chunks "
                    "WHERE tenant_id = $1 AND chunk_id = ANY($2::uuid[])",
                    tenant,
                    list({m.chunk_id for m in mentions if m.tenant_id == tenant}),
                )
                held.update(
                    ((tenant, chunk.id), chunk) for chunk in (_chunk(tenant, row) for row in rows)
                )
            for index, mention in enumerate(mentions):
                chunk = held.get((mention.tenant_id, mention.chunk_id))
                if chunk is None:
                    raise MissingChunkError(chunk_id=mention.chunk_id, tenant_id=mention.tenant_id)
                check_mention_span(mention, chunk, argument=f"mentions[{index}]")
            columns = list(zip(*(_mention_row(mention) for mention in mentions), strict=True))
            await connection.execute(
                f"INSERT INTO {self._s}.chunk_mentions "
                "SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::smallint[], $4::uuid[], "
                "$5::integer[], $6::integer[]) ON CONFLICT DO NOTHING",
                *columns,
            )

    async def _mentions_of(
        self,
        tenant_id: TenantId,
        entity_ids: frozenset[UUID],
        relationship_ids: frozenset[UUID],
    ) -> list[Mention]:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(
                f'SELECT chunk_id, kind, target_id, start, "end" FROM {self._s}.chunk_mentions '
                "WHERE tenant_id = $1 AND ((kind = 0 AND target_id = ANY($2::uuid[])) "
                "OR (kind = 1 AND target_id = ANY($3::uuid[])))",
                tenant_id,
                list(entity_ids),
                list(relationship_ids),
            )
        return [_mention(tenant_id, row) for row in rows]

    async def _mentions_in(self, chunk_ids: frozenset[UUID], tenant_id: TenantId) -> list[Mention]:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(
                f'SELECT chunk_id, kind, target_id, start, "end" FROM {self._s}.chunk_mentions '
                "WHERE tenant_id = $1 AND chunk_id = ANY($2::uuid[])",
                tenant_id,
                list(chunk_ids),
            )
        return [_mention(tenant_id, row) for row in rows]

    async def _delete_mentions_of(
        self,
        tenant_id: TenantId,
        entity_ids: frozenset[UUID],
        relationship_ids: frozenset[UUID],
    ) -> int:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(
                f"DELETE FROM {self._s}.chunk_mentions WHERE tenant_id = $1 AND "
                "((kind = 0 AND target_id = ANY($2::uuid[])) "
                "OR (kind = 1 AND target_id = ANY($3::uuid[]))) RETURNING 1",
                tenant_id,
                list(entity_ids),
                list(relationship_ids),
            )
        return len(rows)


def _mention_row(mention: Mention) -> tuple[UUID, UUID, int, UUID, int, int]:
    kind, target = (
        (0, mention.entity_id) if mention.entity_id is not None else (1, mention.relationship_id)
    )
    assert target is not None
    return (
        mention.tenant_id,
        mention.chunk_id,
        kind,
        target,
        -1 if mention.start is None else mention.start,
        -1 if mention.end is None else mention.end,
    )
