"""The SQLite chunk store: a persistent `ChunkStore` in one database file.

Uses only the standard library's `sqlite3`, through the shared
`SqliteWorker`. Every table is prefixed `chunks_`, so the graph and vector
stores and the event log may keep theirs in the same file:

- `chunks_meta`: the schema version, as the row `('schema_version', '1')`.
- `chunks_tenants`: per tenant, the BM25 statistics (chunk count, total
  length in terms), the next free slot and write number, and its list of
  posting segments (`redstring.chunks.postings.SEGMENT_LIST`).
- `chunks_chunks`: one row per `(tenant_id, chunk_id)`: its slot, source,
  ordinal, offsets, length in terms, text and metadata (JSON).
- `chunks_segments`: per `(tenant_id, segment, term)`, the change the
  segment makes to the term's document frequency and a blob of
  `redstring.chunks.postings` entries.
- `chunks_mentions`: one row per mention.

Every write is one transaction holding the write lock, statistics included,
so a write killed midway leaves nothing of itself. A search reads its terms'
statistics and postings in one snapshot and scores them with the code the
in-memory store uses. See ADRs 0062 and 0096.
"""

from __future__ import annotations

import json
import os  # noqa: TC003 - the public surface test resolves the signature at runtime
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.chunks.postings import (
    ENTRY,
    PostingCache,
    PostingChanges,
    SegmentRow,
    WritePlan,
    cancelled,
    check_mentions_held,
    chunk_columns,
    held_terms,
    mention_target,
    one_segment,
    only_slots,
    ranked_rows,
    segment_ids,
    slot_scores,
    stored_chunk,
    stored_mention,
)
from redstring.chunks.scoring import best_slots
from redstring.domain.chunk import (
    Chunk,
    Mention,
    ScoredChunk,
    scored_chunk,
)
from redstring.domain.exceptions import StoreError
from redstring.domain.ids import ChunkId, SourceId, TenantId
from redstring.domain.validation import check_path
from redstring.ports.chunk_store import ChunkSearch, ChunkStoreBase, MentionTargets
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.sqlite import (
    SqliteWorker,
    check_schema_to_read,
    ensure_schema,
    read_transaction,
    schema_version,
    write_transaction,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Sequence

#: The schema this module reads and writes, recorded in `chunks_meta`.
SCHEMA_VERSION: Final = 3
#: How many values one `IN (...)` list binds at most.
_BATCH: Final = 900

_SEGMENTS: Final = (
    "CREATE TABLE IF NOT EXISTS chunks_segments (tenant_id TEXT NOT NULL, "
    "segment INTEGER NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, entries BLOB NOT NULL, "
    "PRIMARY KEY (tenant_id, segment, term)) WITHOUT ROWID"
)
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS chunks_tenants (tenant_id TEXT PRIMARY KEY, "
    "chunk_count INTEGER NOT NULL, total_length INTEGER NOT NULL, "
    "next_slot INTEGER NOT NULL, next_write INTEGER NOT NULL, segments BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS chunks_chunks (tenant_id TEXT NOT NULL, chunk_id TEXT NOT NULL, "
    "slot INTEGER NOT NULL, source_id TEXT NOT NULL, ordinal INTEGER NOT NULL, "
    'start INTEGER NOT NULL, "end" INTEGER NOT NULL, length INTEGER NOT NULL, '
    "text TEXT NOT NULL, metadata TEXT NOT NULL, "
    "PRIMARY KEY (tenant_id, chunk_id)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS chunks_by_slot ON chunks_chunks (tenant_id, slot)",
    "CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks_chunks (tenant_id, source_id)",
    _SEGMENTS,
    "CREATE TABLE IF NOT EXISTS chunks_mentions (tenant_id TEXT NOT NULL, "
    "chunk_id TEXT NOT NULL, kind INTEGER NOT NULL, target_id TEXT NOT NULL, "
    'start INTEGER NOT NULL, "end" INTEGER NOT NULL, '
    'PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end")) WITHOUT ROWID',
    "CREATE INDEX IF NOT EXISTS chunks_mentions_by_target "
    "ON chunks_mentions (tenant_id, kind, target_id)",
)
_COLUMNS: Final = 'chunk_id, source_id, ordinal, start, "end", text, metadata'


#: How `ensure_schema` creates and checks the chunk tables.
_SCHEMA_RULE: Final[dict[str, Any]] = {
    "meta_schema": "CREATE TABLE IF NOT EXISTS chunks_meta (name TEXT PRIMARY KEY, value TEXT)",
    "meta_table": "chunks_meta",
    "version": SCHEMA_VERSION,
    "statements": _SCHEMA,
    "what": "chunk store",
    "migrations": {2: lambda connection: _migrate_from_2(connection)},
}


def _migrate_from_2(connection: sqlite3.Connection) -> None:
    """Rewrite a version 2 file's postings (segments per term) as one segment per tenant.

    Each tenant's segment takes its next write number as its id and holds
    every term's live entries, with the term's document frequency as its
    change; the statistics and chunks are kept as they are.
    """
    connection.execute("ALTER TABLE chunks_tenants ADD COLUMN segments BLOB NOT NULL DEFAULT x''")
    connection.execute(_SEGMENTS)
    tenants = connection.execute("SELECT tenant_id, next_write FROM chunks_tenants").fetchall()
    for tenant, number in tenants:
        frequency = dict(
            connection.execute("SELECT term, df FROM chunks_terms WHERE tenant_id = ?", (tenant,))
        )
        blobs: dict[str, list[bytes]] = {}
        for term, blob in connection.execute(
            "SELECT term, entries FROM chunks_postings WHERE tenant_id = ? ORDER BY term, position",
            (tenant,),
        ):
            blobs.setdefault(term, []).append(blob)
        rows, listed = one_segment(number, frequency, blobs)
        connection.executemany(
            "INSERT INTO chunks_segments (tenant_id, segment, term, df, entries) "
            f"VALUES ('{UUID(tenant)}', {int(number)}, ?, ?, ?)",
            rows,
        )
        connection.execute(
            "UPDATE chunks_tenants SET segments = ?, next_write = ? WHERE tenant_id = ?",
            (listed, number + 1, tenant),
        )
    connection.execute("DROP TABLE chunks_terms")
    connection.execute("DROP TABLE chunks_postings")
    connection.execute(
        "UPDATE chunks_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),)
    )


def _ensure_schema(connection: sqlite3.Connection, store: str) -> None:
    """Create the tables on first use; refuse a schema version this code does not know."""
    ensure_schema(connection, store=store, **_SCHEMA_RULE)


def _check_schema(connection: sqlite3.Connection, store: str) -> None:
    """For a read-only store: refuse a file without chunk tables, or of another version."""
    if schema_version(connection, "chunks_meta") is None:
        raise StoreError(store=store, reason="the file holds no chunk store")
    check_schema_to_read(
        connection,
        meta_table="chunks_meta",
        version=SCHEMA_VERSION,
        store=store,
        what="chunk store",
        held="chunk store",
    )


def _batches[T](items: Iterable[T]) -> Iterable[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, _BATCH)):
        yield batch


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _select_in(
    connection: sqlite3.Connection, sql: str, head: Sequence[object], values: Iterable[object]
) -> list[Any]:
    """`sql` (with one `{}` for an `IN` list) run over `values` in batches, rows together."""
    rows: list[Any] = []
    for batch in _batches(values):
        rows += connection.execute(sql.format(_marks(len(batch))), [*head, *batch]).fetchall()
    return rows


def _chunk(tenant_id: TenantId, row: Sequence[Any]) -> Chunk:
    return stored_chunk(tenant_id, UUID(row[0]), row[1:])


def _mention(tenant_id: TenantId, row: Sequence[Any]) -> Mention:
    chunk_id, kind, target, start, end = row
    return stored_mention(tenant_id, UUID(chunk_id), kind, UUID(target), start, end)


def _mention_row(mention: Mention) -> tuple[str, str, int, str, int, int]:
    kind, target = mention_target(mention)
    start = -1 if mention.start is None else mention.start
    end = -1 if mention.end is None else mention.end
    return (str(mention.tenant_id), str(mention.chunk_id), kind, str(target), start, end)


def _remove_chunks(
    connection: sqlite3.Connection,
    tenant: str,
    rows: Sequence[tuple[str, int, str]],
    changes: PostingChanges,
) -> None:
    """Delete the chunks `(chunk_id, slot, text)` and their mentions, noting their postings."""
    for _, slot, text in rows:
        changes.remove(slot, text)
    ids = [(tenant, row[0]) for row in rows]
    connection.executemany("DELETE FROM chunks_chunks WHERE tenant_id = ? AND chunk_id = ?", ids)
    connection.executemany("DELETE FROM chunks_mentions WHERE tenant_id = ? AND chunk_id = ?", ids)


def _insert_segment(
    connection: sqlite3.Connection, tenant: str, segment: int, rows: Iterable[SegmentRow]
) -> None:
    # The tenant (a UUID's text) and the segment are the same in every row, and
    # written into the statement, so the rows bind as they are.
    connection.executemany(
        "INSERT INTO chunks_segments (tenant_id, segment, term, df, entries) "
        f"VALUES ('{UUID(tenant)}', {int(segment)}, ?, ?, ?)",
        rows,
    )


def _merge(connection: sqlite3.Connection, tenant: str, plan: WritePlan) -> int:
    """Merge the write's rows and the segments `plan` names into one, in SQL; its entry count.

    As the Postgres store does: the write's rows go in under its number
    negated, each term's rows are concatenated by `group_concat` (a blob
    read as text and back is its bytes in a UTF-8 file, the only encoding
    this store merges this way), and only the merged rows holding removals
    are read back and cancelled.
    """
    _insert_segment(connection, tenant, -plan.number, plan.rows)
    merging = [*plan.merging, -plan.number]
    within = f"tenant_id = ? AND segment IN ({_marks(len(merging))})"
    connection.execute(
        "INSERT INTO chunks_segments (tenant_id, segment, term, df, entries) "
        "SELECT tenant_id, ?, term, sum(df), CAST(group_concat(entries, x'') AS BLOB) "
        f"FROM chunks_segments WHERE {within} GROUP BY term",
        [plan.number, tenant, *merging],
    )
    connection.execute(f"DELETE FROM chunks_segments WHERE {within}", [tenant, *merging])
    mine = (tenant, plan.number)
    removals = connection.execute(
        "SELECT term, entries FROM chunks_segments WHERE tenant_id = ? AND segment = ? "
        f"AND length(entries) != df * {ENTRY.itemsize}",
        mine,
    ).fetchall()
    if removals:
        connection.executemany(
            "UPDATE chunks_segments SET entries = ? WHERE tenant_id = ? AND segment = ? "
            "AND term = ?",
            [(cancelled(blob, oldest=plan.oldest), *mine, term) for term, blob in removals],
        )
        connection.execute(
            "DELETE FROM chunks_segments WHERE tenant_id = ? AND segment = ? AND entries = x''",
            mine,
        )
    (size,) = connection.execute(
        "SELECT coalesce(sum(length(entries)), 0) FROM chunks_segments "
        "WHERE tenant_id = ? AND segment = ?",
        mine,
    ).fetchone()
    return int(size) // ENTRY.itemsize


def _apply(connection: sqlite3.Connection, tenant: str, changes: PostingChanges) -> None:
    """Write the statistics and the posting segment `changes` make, in the open transaction."""
    count, length, number, listed = connection.execute(
        "SELECT chunk_count, total_length, next_write, segments FROM chunks_tenants "
        "WHERE tenant_id = ?",
        (tenant,),
    ).fetchone()
    plan = WritePlan(changes, listed, number)
    if not plan.merging:
        _insert_segment(connection, tenant, number, plan.finish(()))
    elif connection.execute("PRAGMA encoding").fetchone()[0] == "UTF-8":
        plan.segments = plan.listing(_merge(connection, tenant, plan))
    else:
        stored: list[SegmentRow] = []
        for segment in plan.merging:
            stored += connection.execute(
                "SELECT term, df, entries FROM chunks_segments WHERE tenant_id = ? AND segment = ?",
                (tenant, segment),
            ).fetchall()
        connection.execute(
            "DELETE FROM chunks_segments WHERE tenant_id = ? "
            f"AND segment IN ({_marks(len(plan.merging))})",
            [tenant, *plan.merging],
        )
        _insert_segment(connection, tenant, number, plan.finish(stored))
    connection.execute(
        "UPDATE chunks_tenants SET chunk_count = ?, total_length = ?, next_write = ?, "
        "segments = ? WHERE tenant_id = ?",
        (count + changes.count, length + changes.length, number + 1, plan.segments, tenant),
    )


class SqliteChunkStore(AsyncClosable, ChunkStoreBase):
    """A `ChunkStore` persisted in one SQLite database file, which it may share.

    The constructor does no I/O; the file and the `chunks_` tables are
    created on first use. Each write is one transaction, so a batch is
    stored whole or not at all, even if the process is killed midway, and
    BM25 statistics never disagree with the chunks. All database work runs
    on the store's `SqliteWorker`, so no call blocks the event loop.

    Raises (from any method):
        StoreError: the database failed, or the file holds a chunk store
            schema version this code does not read; the message names the
            path. Read-only (`read_only=True`: the file is never created or
            changed, every write is refused), also a file without chunk
            tables ("the file holds no chunk store").
        ClosedError: the store has been closed.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        if not isinstance(read_only, bool):
            raise ValueError(f"read_only must be a bool, got {read_only!r}")
        self._path = check_path(path)
        self._cache = PostingCache()
        store = self._store = f"sqlite chunk store {self._path}"
        setup = partial(_check_schema if read_only else _ensure_schema, store=store)
        self._worker = SqliteWorker(
            self._path,
            store=store,
            resource=self._resource_name(),
            setup=setup,
            read_only=read_only,
        )

    def _describe(self) -> str:
        return repr(self._path)

    async def _release(self) -> None:
        self._cache.clear()
        await self._worker.close()

    async def _run[T](self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._worker.run(work)

    # -- chunks ------------------------------------------------------------------

    async def _put_chunks(self, chunks: Sequence[Chunk]) -> None:
        by_tenant: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_tenant.setdefault(str(chunk.tenant_id), []).append(chunk)
        metadata = {id(chunk): json.dumps(chunk.metadata) for chunk in chunks}

        def write(connection: sqlite3.Connection) -> None:
            with write_transaction(connection):
                for tenant, batch in by_tenant.items():
                    self._write_tenant(connection, tenant, batch, metadata)

        await self._run(write)

    @staticmethod
    def _write_tenant(
        connection: sqlite3.Connection,
        tenant: str,
        batch: list[Chunk],
        metadata: dict[int, str],
    ) -> None:
        connection.execute(
            "INSERT OR IGNORE INTO chunks_tenants "
            "(tenant_id, chunk_count, total_length, next_slot, next_write, segments) "
            "VALUES (?, 0, 0, 0, 0, x'')",
            (tenant,),
        )
        replaced = {
            row[0]: row
            for row in _select_in(
                connection,
                "SELECT chunk_id, slot, text FROM chunks_chunks "
                "WHERE tenant_id = ? AND source_id IN ({})",
                (tenant,),
                sorted({chunk.source_id for chunk in batch}),
            )
        }
        replaced.update(
            (row[0], row)
            for row in _select_in(
                connection,
                "SELECT chunk_id, slot, text FROM chunks_chunks "
                "WHERE tenant_id = ? AND chunk_id IN ({})",
                (tenant,),
                [str(chunk.id) for chunk in batch],
            )
        )
        changes = PostingChanges()
        _remove_chunks(connection, tenant, list(replaced.values()), changes)
        (first,) = connection.execute(
            "SELECT next_slot FROM chunks_tenants WHERE tenant_id = ?", (tenant,)
        ).fetchone()
        lengths = changes.add_batch(first, [chunk.text for chunk in batch])
        rows = [
            (tenant, str(chunk.id), *chunk_columns(chunk, slot, length), metadata[id(chunk)])
            for slot, chunk, length in zip(
                range(first, first + len(batch)), batch, lengths, strict=True
            )
        ]
        connection.executemany(
            "INSERT INTO chunks_chunks (tenant_id, chunk_id, slot, source_id, ordinal, start, "
            '"end", length, text, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            rows,
        )
        connection.execute(
            "UPDATE chunks_tenants SET next_slot = ? WHERE tenant_id = ?",
            (first + len(batch), tenant),
        )
        _apply(connection, tenant, changes)

    async def _get_chunks(self, chunk_ids: list[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        def read(connection: sqlite3.Connection) -> list[Chunk]:
            with read_transaction(connection):
                rows = _select_in(
                    connection,
                    f"SELECT {_COLUMNS} FROM chunks_chunks WHERE tenant_id = ? "
                    "AND chunk_id IN ({})",
                    (str(tenant_id),),
                    [str(chunk_id) for chunk_id in chunk_ids],
                )
            return [_chunk(tenant_id, row) for row in rows]

        return await self._run(read)

    async def _get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        def read(connection: sqlite3.Connection) -> list[Chunk]:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM chunks_chunks WHERE tenant_id = ? AND source_id = ?",
                (str(tenant_id), source_id),
            ).fetchall()
            return [_chunk(tenant_id, row) for row in rows]

        return await self._run(read)

    async def _count_chunks(self, tenant_id: TenantId) -> int:
        def read(connection: sqlite3.Connection) -> int:
            row = connection.execute(
                "SELECT chunk_count FROM chunks_tenants WHERE tenant_id = ?", (str(tenant_id),)
            ).fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(read)

    async def _delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        tenant = str(tenant_id)

        def write(connection: sqlite3.Connection) -> int:
            with write_transaction(connection):
                rows = connection.execute(
                    "SELECT chunk_id, slot, text FROM chunks_chunks "
                    "WHERE tenant_id = ? AND source_id = ?",
                    (tenant, source_id),
                ).fetchall()
                if rows:
                    changes = PostingChanges()
                    _remove_chunks(connection, tenant, rows, changes)
                    _apply(connection, tenant, changes)
            return len(rows)

        return await self._run(write)

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        tenant = str(tenant_id)

        def write(connection: sqlite3.Connection) -> int:
            with write_transaction(connection):
                row = connection.execute(
                    "SELECT chunk_count FROM chunks_tenants WHERE tenant_id = ?", (tenant,)
                ).fetchone()
                # The tenant's row stays, so its slot and write numbers are never reused.
                connection.execute(
                    "UPDATE chunks_tenants SET chunk_count = 0, total_length = 0, segments = x'' "
                    "WHERE tenant_id = ?",
                    (tenant,),
                )
                for table in ("chunks", "segments", "mentions"):
                    connection.execute(f"DELETE FROM chunks_{table} WHERE tenant_id = ?", (tenant,))
            return 0 if row is None else int(row[0])

        return await self._run(write)

    # -- search ------------------------------------------------------------------

    async def _search(self, search: ChunkSearch, tenant_id: TenantId) -> list[ScoredChunk]:
        def read(connection: sqlite3.Connection) -> list[ScoredChunk]:
            with read_transaction(connection):
                return self._ranked(connection, tenant_id, search, self._cache)

        return await self._run(read)

    @staticmethod
    def _ranked(
        connection: sqlite3.Connection,
        tenant_id: TenantId,
        search: ChunkSearch,
        cache: PostingCache,
    ) -> list[ScoredChunk]:
        terms, k, source_ids = search
        tenant = str(tenant_id)
        row = connection.execute(
            "SELECT chunk_count, total_length, next_slot, segments FROM chunks_tenants "
            "WHERE tenant_id = ?",
            (tenant,),
        ).fetchone()
        if row is None or not row[0]:
            return []
        statistics, ids = row[:3], segment_ids(row[3])
        within = f"tenant_id = ? AND segment IN ({_marks(len(ids))}) AND term IN "
        held = held_terms(
            connection.execute(
                f"SELECT term, segment, df FROM chunks_segments WHERE {within}"
                f"({_marks(len(terms))})",
                [tenant, *ids, *terms],
            )
        )
        if not held:
            return []
        found, missing = cache.split(tenant, held)
        segments: dict[str, list[bytes]] = {}
        for term, blob in connection.execute(
            f"SELECT term, entries FROM chunks_segments WHERE {within}"
            f"({_marks(len(missing))}) ORDER BY segment",
            [tenant, *ids, *missing],
        ):
            segments.setdefault(term, []).append(blob)
        postings = cache.fill(tenant, held, found, segments)
        scores = slot_scores(terms, held, postings, statistics)
        if source_ids is not None:
            allowed = _select_in(
                connection,
                "SELECT slot FROM chunks_chunks WHERE tenant_id = ? AND source_id IN ({})",
                (tenant,),
                sorted(source_ids),
            )
            scores = only_slots(scores, (slot for (slot,) in allowed))
        rows = _select_in(
            connection,
            f"SELECT slot, {_COLUMNS} FROM chunks_chunks INDEXED BY chunks_by_slot "
            f"WHERE tenant_id = ? AND slot IN ({{}})",
            (tenant,),
            best_slots(scores, k).tolist(),
        )
        rows.sort(key=lambda row: row[0])
        ranked = ranked_rows(scores, [row[0] for row in rows], [UUID(row[1]) for row in rows], k)
        return [scored_chunk(_chunk(tenant_id, rows[index][1:]), score) for index, score in ranked]

    # -- mentions ----------------------------------------------------------------

    async def _put_mentions(self, mentions: list[Mention]) -> None:
        def write(connection: sqlite3.Connection) -> None:
            with write_transaction(connection):
                held: dict[tuple[UUID, UUID], Chunk] = {}
                for tenant in {str(mention.tenant_id) for mention in mentions}:
                    wanted = {
                        str(mention.chunk_id)
                        for mention in mentions
                        if str(mention.tenant_id) == tenant
                    }
                    tenant_id = TenantId(UUID(tenant))
                    for row in _select_in(
                        connection,
                        f"SELECT {_COLUMNS} FROM chunks_chunks WHERE tenant_id = ? "
                        "AND chunk_id IN ({})",
                        (tenant,),
                        sorted(wanted),
                    ):
                        chunk = _chunk(tenant_id, row)
                        held[(tenant_id, chunk.id)] = chunk
                check_mentions_held(mentions, held)
                connection.executemany(
                    "INSERT OR IGNORE INTO chunks_mentions "
                    '(tenant_id, chunk_id, kind, target_id, start, "end") '
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [_mention_row(mention) for mention in mentions],
                )

        await self._run(write)

    @staticmethod
    def _keys(tenant_id: TenantId, targets: MentionTargets) -> list[tuple[str, int, str]]:
        """The `(tenant_id, kind, target_id)` keys of the targets' mention rows."""
        tenant, (entities, relationships) = str(tenant_id), targets
        return [(tenant, 0, str(each)) for each in entities] + [
            (tenant, 1, str(each)) for each in relationships
        ]

    async def _mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> list[Mention]:
        keys = self._keys(tenant_id, targets)
        sql = (
            'SELECT chunk_id, kind, target_id, start, "end" FROM chunks_mentions '
            "WHERE tenant_id = ? AND kind = ? AND target_id = ?"
        )

        def read(connection: sqlite3.Connection) -> list[Mention]:
            with read_transaction(connection):
                rows = [row for key in keys for row in connection.execute(sql, key).fetchall()]
            return [_mention(tenant_id, row) for row in rows]

        return await self._run(read)

    async def _mentions_in(self, chunk_ids: frozenset[UUID], tenant_id: TenantId) -> list[Mention]:
        def read(connection: sqlite3.Connection) -> list[Mention]:
            with read_transaction(connection):
                rows = _select_in(
                    connection,
                    'SELECT chunk_id, kind, target_id, start, "end" FROM chunks_mentions '
                    "WHERE tenant_id = ? AND chunk_id IN ({})",
                    (str(tenant_id),),
                    sorted(str(chunk_id) for chunk_id in chunk_ids),
                )
            return [_mention(tenant_id, row) for row in rows]

        return await self._run(read)

    async def _delete_mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> int:
        keys = self._keys(tenant_id, targets)
        sql = "DELETE FROM chunks_mentions WHERE tenant_id = ? AND kind = ? AND target_id = ?"

        def write(connection: sqlite3.Connection) -> int:
            with write_transaction(connection):
                return sum(connection.execute(sql, key).rowcount for key in keys)

        return await self._run(write)
