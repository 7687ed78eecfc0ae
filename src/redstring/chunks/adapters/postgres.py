"""The Postgres chunk store: a `ChunkStore` that several processes can share.

Tables, in the adapter's schema (`redstring` unless told otherwise), laid
out as the SQLite store's (ADR 0062):

- `chunk_tenants`: per tenant, its BM25 statistics, its next slot and
  write number and its list of posting segments (their ids again as an
  array, which a query joins on). A write locks its tenants' rows, so
  writes to one tenant take turns, and changes the write number.
- `chunk_chunks`: one row per `(tenant_id, chunk_id)`, with its slot.
- `chunk_segments`: per `(tenant_id, segment, term)`, the change the
  segment makes to the term's document frequency and its
  `redstring.chunks.postings` entries (stored uncompressed).
- `chunk_mentions`: one row per mention.

Every write is one transaction. A search's statements each read the
tenant's write number, and it reads again in one repeatable-read
transaction if a write landed between them; it scores with the code the
in-memory store uses, so every store returns the same floats. Needs the
`postgres` extra.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.chunks import postings as shared
from redstring.chunks.postings import ENTRY, PostingChanges, SegmentRow, WritePlan
from redstring.chunks.scoring import best_slots
from redstring.domain.chunk import (
    Chunk,
    Mention,
    ScoredChunk,
    scored_chunk,
)
from redstring.ports.chunk_store import ChunkSearch, ChunkStoreBase, MentionTargets
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.postgres import (
    DEFAULT_POOL_SIZE,
    DEFAULT_SCHEMA,
    Connection,
    asyncpg,
    client_for,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import ChunkId, SourceId, TenantId
    from redstring.storage.adapters.postgres import PostgresClient

_COMPONENT: Final = "chunk_store"
#: The layout this module reads and writes, recorded in the schema's `meta` table.
SCHEMA_VERSION: Final = 3

#: The tables of layout version 3 that version 2 lacks (`{schema}` as in `_TABLES`).
_SEGMENTS: Final = (
    "CREATE TABLE {schema}.chunk_segments (tenant_id uuid NOT NULL, segment bigint NOT NULL, "
    "term text NOT NULL, df integer NOT NULL, entries bytea NOT NULL, "
    "PRIMARY KEY (tenant_id, segment, term))",
    # Entries are read whole and written once: compressing them costs more than it saves.
    "ALTER TABLE {schema}.chunk_segments ALTER COLUMN entries SET STORAGE EXTERNAL",
)
_TABLES: Final = (
    "CREATE TABLE {schema}.chunk_tenants (tenant_id uuid PRIMARY KEY, "
    "chunk_count bigint NOT NULL, total_length bigint NOT NULL, "
    "next_slot bigint NOT NULL, next_write bigint NOT NULL, segments bytea NOT NULL, "
    "segment_ids bigint[] NOT NULL)",
    "CREATE TABLE {schema}.chunk_chunks (tenant_id uuid NOT NULL, chunk_id uuid NOT NULL, "
    "slot integer NOT NULL, source_id text NOT NULL, ordinal integer NOT NULL, "
    'start integer NOT NULL, "end" integer NOT NULL, length integer NOT NULL, '
    "text text NOT NULL, metadata text NOT NULL, "
    "PRIMARY KEY (tenant_id, chunk_id), UNIQUE (tenant_id, slot))",
    "CREATE INDEX chunk_chunks_by_source ON {schema}.chunk_chunks (tenant_id, source_id)",
    *_SEGMENTS,
    "CREATE TABLE {schema}.chunk_mentions (tenant_id uuid NOT NULL, chunk_id uuid NOT NULL, "
    'kind smallint NOT NULL, target_id uuid NOT NULL, start integer NOT NULL, "end" integer '
    'NOT NULL, PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end"))',
    "CREATE INDEX chunk_mentions_by_target ON {schema}.chunk_mentions (tenant_id, kind, target_id)",
)
_COLUMNS: Final = 'chunk_id, source_id, ordinal, start, "end", text, metadata'
#: The mentions of a tenant (`$1`) naming an entity in `$2` or a relationship in `$3`.
_TARGETED: Final = (
    "tenant_id = $1 AND ((kind = 0 AND target_id = ANY($2::uuid[])) "
    "OR (kind = 1 AND target_id = ANY($3::uuid[])))"
)


def _chunk(tenant_id: TenantId, row: Sequence[Any] | asyncpg.Record) -> Chunk:
    return shared.stored_chunk(tenant_id, UUID(bytes=row[0].bytes), list(row)[1:])


def _mention(tenant_id: TenantId, row: asyncpg.Record) -> Mention:
    chunk_id, kind, target, start, end = row
    return shared.stored_mention(
        tenant_id, UUID(bytes=chunk_id.bytes), kind, UUID(bytes=target.bytes), start, end
    )


class PostgresChunkStore(AsyncClosable, ChunkStoreBase):
    """A `ChunkStore` kept in Postgres: durable, shared, one transaction per write.

    Give a `dsn` and the store opens a pool of up to `pool_size` connections
    on first use; or give a `pool` you own (an `asyncpg.Pool`), which it
    uses and never closes. Nothing is held between calls, so every process
    sharing the schema reads every committed write. With `read_only` (a
    `dsn` only) its connections refuse every write and nothing is created.

    Raises (from any method):
        ValueError: from the constructor, not exactly one of `dsn` and
            `pool`, a bad `schema`, or `read_only` with a `pool`.
        StoreError: the database failed (the driver's error is the
            `__cause__`), the schema holds a chunk store layout version
            this code does not read, or, read-only, no chunk store.
        ClosedError: the store has been closed.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = DEFAULT_POOL_SIZE,
        pool: asyncpg.Pool | None = None,
        read_only: bool = False,
    ) -> None:
        connect = (dsn, pool)
        self._client = client_for(
            self, "postgres chunk store", connect, schema, pool_size, read_only=read_only
        )
        self._s = f'"{self._client.schema}"'
        self._cache = shared.PostingCache()
        #: Per tenant, the segment ids its last search read (a guess for the next).
        self._listed: dict[UUID, list[int]] = {}
        self._ready = False

    def _describe(self) -> str:
        return f"schema={self._client.schema!r}"

    async def _release(self) -> None:
        self._cache.clear()
        await self._client.close()

    async def _prepare(self) -> PostgresClient:
        client = self._client
        if not self._ready:
            if not client.read_only:
                recorded = await client.recorded_settings(_COMPONENT)
                if recorded.get("schema_version") == "2":
                    await self._migrate_from_2(client)
            await client.ensure_tables(_COMPONENT, SCHEMA_VERSION, _TABLES)
            self._ready = True
        return client

    async def _migrate_from_2(self, client: PostgresClient) -> None:
        """Rewrite layout version 2's postings (segments per term) as one segment per tenant.

        As the SQLite store's migration does (`one_segment`), in one
        transaction that holds the version's row, so of two processes
        migrating at once the second finds version 3 and does nothing.
        """
        s = self._s
        async with client.transaction() as connection:
            version = await connection.fetchval(
                f"SELECT value FROM {s}.meta WHERE component = $1 AND key = 'schema_version' "
                "FOR UPDATE",
                _COMPONENT,
            )
            if version != "2":
                return
            await connection.execute(
                f"ALTER TABLE {s}.chunk_tenants ADD COLUMN segments bytea NOT NULL DEFAULT '', "
                "ADD COLUMN segment_ids bigint[] NOT NULL DEFAULT '{}'"
            )
            for statement in _SEGMENTS:
                await connection.execute(statement.format(schema=s))
            for tenant, number in await connection.fetch(
                f"SELECT tenant_id, next_write FROM {s}.chunk_tenants"
            ):
                terms = await connection.fetch(
                    f"SELECT term, df FROM {s}.chunk_terms WHERE tenant_id = $1", tenant
                )
                blobs: dict[str, list[bytes]] = {}
                for term, blob in await connection.fetch(
                    f"SELECT term, entries FROM {s}.chunk_postings WHERE tenant_id = $1 "
                    "ORDER BY term, position",
                    tenant,
                ):
                    blobs.setdefault(term, []).append(blob)
                frequency = {str(row[0]): int(row[1]) for row in terms}
                rows, listed = shared.one_segment(number, frequency, blobs)
                await connection.copy_records_to_table(
                    "chunk_segments",
                    schema_name=client.schema,
                    columns=["tenant_id", "segment", "term", "df", "entries"],
                    records=[(tenant, number, *row) for row in rows],
                )
                await connection.execute(
                    f"UPDATE {s}.chunk_tenants SET segments = $2, segment_ids = $3, "
                    "next_write = $4 WHERE tenant_id = $1",
                    tenant,
                    listed,
                    shared.segment_ids(listed),
                    number + 1,
                )
            await connection.execute(f"DROP TABLE {s}.chunk_terms, {s}.chunk_postings")
            await connection.execute(
                f"UPDATE {s}.meta SET value = $2 WHERE component = $1 AND key = 'schema_version'",
                _COMPONENT,
                str(SCHEMA_VERSION),
            )

    # -- chunks ------------------------------------------------------------------

    async def _put_chunks(self, chunks: Sequence[Chunk]) -> None:
        by_tenant: dict[UUID, list[Chunk]] = {}
        for chunk in chunks:
            by_tenant.setdefault(chunk.tenant_id, []).append(chunk)
        client = await self._prepare()
        async with client.transaction() as connection:
            for tenant in sorted(by_tenant):  # one lock order, so two writers cannot deadlock
                await self._write_tenant(connection, tenant, by_tenant[tenant])

    async def _lock_tenant(self, connection: Connection, tenant: UUID) -> tuple[int, int, bytes]:
        """Lock the tenant's row, creating it; its next slot and write number, its segments."""
        s = self._s
        await connection.execute(
            f"INSERT INTO {s}.chunk_tenants VALUES ($1, 0, 0, 0, 0, '', '{{}}') "
            "ON CONFLICT DO NOTHING",
            tenant,
        )
        row = await connection.fetchrow(
            f"SELECT next_slot, next_write, segments FROM {s}.chunk_tenants "
            "WHERE tenant_id = $1 FOR UPDATE",
            tenant,
        )
        assert row is not None
        return int(row[0]), int(row[1]), bytes(row[2])

    async def _write_tenant(self, connection: Connection, tenant: UUID, batch: list[Chunk]) -> None:
        s = self._s
        first, version, listed = await self._lock_tenant(connection, tenant)
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
                    *shared.chunk_columns(chunk, slot, length),
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
        await self._apply(connection, tenant, changes, WritePlan(changes, listed, version))

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
        self, connection: Connection, tenant: UUID, changes: PostingChanges, plan: WritePlan
    ) -> None:
        """Write the statistics and the posting segment `changes` make, in the open transaction."""
        s = self._s
        if plan.merging:
            await self._merge(connection, tenant, plan)
        else:
            await self._copy_segment(connection, tenant, plan.number, plan.finish(()))
        await connection.execute(
            f"UPDATE {s}.chunk_tenants SET chunk_count = chunk_count + $2, "
            "total_length = total_length + $3, next_write = $4, segments = $5, "
            "segment_ids = $6 WHERE tenant_id = $1",
            tenant,
            changes.count,
            changes.length,
            plan.number + 1,
            plan.segments,
            shared.segment_ids(plan.segments),
        )

    async def _copy_segment(
        self, connection: Connection, tenant: UUID, segment: int, rows: Sequence[SegmentRow]
    ) -> None:
        if rows:
            await connection.copy_records_to_table(
                "chunk_segments",
                schema_name=self._client.schema,
                columns=["tenant_id", "segment", "term", "df", "entries"],
                records=[(tenant, segment, *row) for row in rows],
            )

    async def _merge(self, connection: Connection, tenant: UUID, plan: WritePlan) -> None:
        """Merge the write's rows and the segments `plan` names into one, in the database.

        The write's rows go in as a segment of their own (its number,
        negated: no other segment has that id); each term's rows are then
        concatenated by `string_agg`, so no entry crosses the wire. Only a
        merged row holding removals (its length is not `df` entries) is
        read back and cancelled.
        """
        s = self._s
        await self._copy_segment(connection, tenant, -plan.number, plan.rows)
        merging = [*plan.merging, -plan.number]
        size = await connection.fetchval(
            f"WITH merged AS (INSERT INTO {s}.chunk_segments "
            "SELECT $1, $3, term, sum(df), string_agg(entries, ''::bytea) "
            f"FROM {s}.chunk_segments WHERE tenant_id = $1 AND segment = ANY($2::bigint[]) "
            "GROUP BY term RETURNING length(entries) AS bytes) "
            "SELECT coalesce(sum(bytes), 0) FROM merged",
            tenant,
            merging,
            plan.number,
        )
        await connection.execute(
            f"DELETE FROM {s}.chunk_segments WHERE tenant_id = $1 AND segment = ANY($2::bigint[])",
            tenant,
            merging,
        )
        removals = await connection.fetch(
            f"SELECT term, entries FROM {s}.chunk_segments "
            f"WHERE tenant_id = $1 AND segment = $2 AND length(entries) <> df * {ENTRY.itemsize}",
            tenant,
            plan.number,
        )
        if removals:
            terms = [row[0] for row in removals]
            kept = [shared.cancelled(row[1], oldest=plan.oldest) for row in removals]
            size -= sum(len(row[1]) for row in removals) - sum(map(len, kept))
            await connection.execute(
                f"UPDATE {s}.chunk_segments c SET entries = u.entries "
                "FROM unnest($3::text[], $4::bytea[]) AS u(term, entries) "
                "WHERE c.tenant_id = $1 AND c.segment = $2 AND c.term = u.term",
                tenant,
                plan.number,
                terms,
                kept,
            )
            await connection.execute(
                f"DELETE FROM {s}.chunk_segments "
                "WHERE tenant_id = $1 AND segment = $2 AND entries = ''",
                tenant,
                plan.number,
            )
        plan.segments = plan.listing(int(size) // ENTRY.itemsize)

    async def _chunks_where(
        self, condition: str, tenant_id: TenantId, value: object
    ) -> list[Chunk]:
        """The tenant's chunks meeting `condition` on `$2`, which `value` binds."""
        client = await self._prepare()
        sql = f"SELECT {_COLUMNS} FROM {self._s}.chunk_chunks WHERE tenant_id = $1 AND {condition}"
        async with client.connection() as connection:
            rows = await connection.fetch(sql, tenant_id, value)
        return [_chunk(tenant_id, row) for row in rows]

    async def _get_chunks(self, chunk_ids: list[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        return await self._chunks_where("chunk_id = ANY($2::uuid[])", tenant_id, chunk_ids)

    async def _get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        return await self._chunks_where("source_id = $2", tenant_id, source_id)

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
            _, version, listed = await self._lock_tenant(connection, tenant_id)
            rows = await connection.fetch(
                f"SELECT chunk_id, slot, text FROM {self._s}.chunk_chunks "
                "WHERE tenant_id = $1 AND source_id = $2",
                tenant_id,
                source_id,
            )
            if rows:
                changes = PostingChanges()
                await self._remove_chunks(connection, tenant_id, rows, changes)
                plan = WritePlan(changes, listed, version)
                await self._apply(connection, tenant_id, changes, plan)
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
                f"UPDATE {self._s}.chunk_tenants SET chunk_count = 0, total_length = 0, "
                "segments = '', segment_ids = '{}', next_write = next_write + 1 "
                "WHERE tenant_id = $1",
                tenant_id,
            )
            for table in ("chunks", "segments", "mentions"):
                await connection.execute(
                    f"DELETE FROM {self._s}.chunk_{table} WHERE tenant_id = $1", tenant_id
                )
        return 0 if count is None else int(count)

    # -- search ------------------------------------------------------------------

    async def _search(self, search: ChunkSearch, tenant_id: TenantId) -> list[ScoredChunk]:
        client = await self._prepare()
        if search[2] is None:
            async with client.connection() as connection:
                ranked = await self._ranked(connection, search, tenant_id)
            if ranked is not None:
                return ranked
        # Filtered by source, or a write landed between two statements: read one snapshot.
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            ranked = await self._ranked(connection, search, tenant_id)
        assert ranked is not None, "one snapshot holds one write number"
        return ranked

    async def _ranked(
        self, connection: Connection, search: ChunkSearch, tenant_id: TenantId
    ) -> list[ScoredChunk] | None:
        """The search's results; `None` when a write to the tenant committed between statements.

        Every statement reads the tenant's write number beside what it reads,
        and every write to a tenant's chunks or postings changes that number
        in its own transaction, so statements that read one number read one
        state of the tenant: a search needs no transaction of its own.
        """
        terms, k, source_ids = search
        s = self._s
        # The segments listed when this store last searched the tenant, bound as a
        # parameter so that each is one index probe per term on any Postgres; the
        # statement reads the list too, and is sent again if it changed.
        listed = self._listed.get(tenant_id, [])
        for _ in range(2):
            rows = await connection.fetch(
                "SELECT t.next_write, t.chunk_count, t.total_length, t.next_slot, "
                f"t.segment_ids, g.term, g.segment, g.df FROM {s}.chunk_tenants t "
                f"LEFT JOIN {s}.chunk_segments g ON g.tenant_id = t.tenant_id "
                "AND g.segment = ANY($3::bigint[]) AND g.term = ANY($2::text[]) "
                "WHERE t.tenant_id = $1",
                tenant_id,
                terms,
                listed,
            )
            if not rows or not rows[0][1]:
                return []
            if rows[0][4] == listed:
                break
            listed = self._listed[tenant_id] = list(rows[0][4])
        else:
            return None
        version = rows[0][0]
        held = shared.held_terms((row[5], row[6], row[7]) for row in rows if row[5] is not None)
        if not held:
            return []
        found, missing = self._cache.split(tenant_id, held)
        segments: dict[str, list[bytes]] = {}
        if missing:
            blobs = await connection.fetch(
                f"SELECT t.next_write, g.term, g.entries FROM {s}.chunk_tenants t "
                f"LEFT JOIN {s}.chunk_segments g ON g.tenant_id = t.tenant_id "
                "AND g.segment = ANY($3::bigint[]) AND g.term = ANY($2::text[]) "
                "WHERE t.tenant_id = $1 ORDER BY g.segment",
                tenant_id,
                missing,
                listed,
            )
            if blobs[0][0] != version:
                return None
            for _, term, blob in blobs:
                segments.setdefault(term, []).append(blob)
        entries = self._cache.fill(tenant_id, held, found, segments)
        statistics = (int(rows[0][1]), int(rows[0][2]), int(rows[0][3]))
        scores = shared.slot_scores(terms, held, entries, statistics)
        if source_ids is not None:
            allowed = await connection.fetch(
                f"SELECT slot FROM {s}.chunk_chunks "
                "WHERE tenant_id = $1 AND source_id = ANY($2::text[])",
                tenant_id,
                sorted(source_ids),
            )
            scores = shared.only_slots(scores, (row[0] for row in allowed))
        hits = await connection.fetch(
            f"SELECT t.next_write, slot, {_COLUMNS} FROM {s}.chunk_tenants t "
            f"LEFT JOIN {s}.chunk_chunks c ON c.tenant_id = t.tenant_id "
            "AND c.slot = ANY($2::integer[]) WHERE t.tenant_id = $1 ORDER BY slot",
            tenant_id,
            best_slots(scores, k).tolist(),
        )
        if hits[0][0] != version:
            return None
        hits = [row for row in hits if row[1] is not None]
        slots, ids = [row[1] for row in hits], [UUID(bytes=row[2].bytes) for row in hits]
        return [
            scored_chunk(_chunk(tenant_id, list(hits[index])[2:]), score)
            for index, score in shared.ranked_rows(scores, slots, ids, k)
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
            shared.check_mentions_held(mentions, held)
            columns = list(zip(*(_mention_row(mention) for mention in mentions), strict=True))
            await connection.execute(
                f"INSERT INTO {self._s}.chunk_mentions "
                "SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::smallint[], $4::uuid[], "
                "$5::integer[], $6::integer[]) ON CONFLICT DO NOTHING",
                *columns,
            )

    async def _mentions_fetch(
        self, statement: str, targets: MentionTargets, tenant_id: TenantId, *rest: object
    ) -> list[asyncpg.Record]:
        """`statement` (its `{}` the table, `$2` and `$3` the targets' ids) run once."""
        client = await self._prepare()
        sql = statement.format(f"{self._s}.chunk_mentions")
        async with client.connection() as connection:
            return await connection.fetch(sql, tenant_id, *rest)

    async def _mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> list[Mention]:
        entities, relationships = (list(ids) for ids in targets)
        rows = await self._mentions_fetch(
            f'SELECT chunk_id, kind, target_id, start, "end" FROM {{}} WHERE {_TARGETED}',
            targets,
            tenant_id,
            entities,
            relationships,
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

    async def _delete_mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> int:
        ids = [list(each) for each in targets]
        sql = f"DELETE FROM {{}} WHERE {_TARGETED} RETURNING 1"
        return len(await self._mentions_fetch(sql, targets, tenant_id, *ids))


def _mention_row(mention: Mention) -> tuple[UUID, UUID, int, UUID, int, int]:
    kind, target = shared.mention_target(mention)
    start = -1 if mention.start is None else mention.start
    end = -1 if mention.end is None else mention.end
    return (mention.tenant_id, mention.chunk_id, kind, target, start, end)
