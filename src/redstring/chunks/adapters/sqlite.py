"""The SQLite chunk store: a persistent `ChunkStore` in one database file.

Uses only the standard library's `sqlite3`, through the shared
`SqliteWorker`. Every table is prefixed `chunks_`, so the graph and vector
stores and the event log may keep theirs in the same file:

- `chunks_meta`: the schema version, as the row `('schema_version', '1')`.
- `chunks_tenants`: per tenant, the BM25 statistics (chunk count, total
  length in terms) and the next free slot and write number.
- `chunks_chunks`: one row per `(tenant_id, chunk_id)`: its slot, source,
  ordinal, offsets, length in terms, text and metadata (JSON).
- `chunks_terms`: per `(tenant_id, term)`, its document frequency, the
  sizes of its posting segments and the number of the write that last
  changed it.
- `chunks_postings`: per `(tenant_id, term, position)`, a blob of
  `redstring.chunks.postings` entries; positions count from the oldest.
- `chunks_mentions`: one row per mention.

Every write is one transaction holding the write lock, statistics included,
so a write killed midway leaves nothing of itself. A search reads its terms'
statistics and postings in one snapshot and scores them with the code the
in-memory store uses. See ADR 0062.
"""

from __future__ import annotations

import json
import os  # noqa: TC003 - the public surface test resolves the signature at runtime
from itertools import chain, islice
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
from redstring.domain.exceptions import MissingChunkError, StoreError
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.validation import check_path
from redstring.ports.chunk_store import ChunkStoreBase
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.sqlite import SqliteWorker, read_transaction, write_transaction

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Sequence

#: The schema this module reads and writes, recorded in `chunks_meta`.
SCHEMA_VERSION: Final = 2
#: How many values one `IN (...)` list binds at most.
_BATCH: Final = 900
#: How many `SELECT`s one compound statement joins at most (SQLite's limit is 500).
_COMPOUND: Final = 300

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS chunks_tenants (
        tenant_id TEXT PRIMARY KEY,
        chunk_count INTEGER NOT NULL,
        total_length INTEGER NOT NULL,
        next_slot INTEGER NOT NULL,
        next_write INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS chunks_chunks (
        tenant_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        slot INTEGER NOT NULL,
        source_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        length INTEGER NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id)
    ) WITHOUT ROWID""",
    "CREATE UNIQUE INDEX IF NOT EXISTS chunks_by_slot ON chunks_chunks (tenant_id, slot)",
    "CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks_chunks (tenant_id, source_id)",
    """CREATE TABLE IF NOT EXISTS chunks_terms (
        tenant_id TEXT NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL,
        sizes BLOB NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, term)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS chunks_postings (
        tenant_id TEXT NOT NULL,
        term TEXT NOT NULL,
        position INTEGER NOT NULL,
        entries BLOB NOT NULL,
        PRIMARY KEY (tenant_id, term, position)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS chunks_mentions (
        tenant_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        kind INTEGER NOT NULL,
        target_id TEXT NOT NULL,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id, kind, target_id, start, "end")
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS chunks_mentions_by_target "
    "ON chunks_mentions (tenant_id, kind, target_id)",
)
_COLUMNS: Final = 'chunk_id, source_id, ordinal, start, "end", text, metadata'


def _ensure_schema(connection: sqlite3.Connection, store: str) -> None:
    """Create the tables on first use; refuse a schema version this code does not know.

    Checked under the write lock, so two processes opening a new file create
    the tables once.
    """
    with write_transaction(connection):
        connection.execute(
            "CREATE TABLE IF NOT EXISTS chunks_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        version = _schema_version(connection)
        if version is None:
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO chunks_meta (name, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif version != SCHEMA_VERSION:
            newer = " (written by a newer redstring)" if version > SCHEMA_VERSION else ""
            raise StoreError(
                store=store,
                reason=f"the file holds chunk store schema version {version}{newer}; "
                f"this redstring reads only version {SCHEMA_VERSION}",
            )


def _schema_version(connection: sqlite3.Connection) -> int | None:
    """The recorded version, or `None` when the chunk tables were never created."""
    row = connection.execute(
        "SELECT value FROM chunks_meta WHERE name = 'schema_version'"
    ).fetchone()
    return None if row is None else int(row[0])


def _batches[T](items: Iterable[T], size: int = _BATCH) -> Iterable[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
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
    chunk_id, source_id, ordinal, start, end, text, metadata = row
    return trusted_chunk(
        ChunkId(UUID(chunk_id)),
        tenant_id,
        SourceId(source_id),
        ordinal,
        text,
        start,
        end,
        json.loads(metadata),
    )


def _mention(tenant_id: TenantId, row: Sequence[Any]) -> Mention:
    chunk_id, kind, target_id, start, end = row
    target = UUID(target_id)
    return Mention.model_construct(
        tenant_id=tenant_id,
        chunk_id=ChunkId(UUID(chunk_id)),
        entity_id=EntityId(target) if kind == 0 else None,
        relationship_id=RelationshipId(target) if kind == 1 else None,
        start=None if start < 0 else start,
        end=None if end < 0 else end,
    )


def _mention_row(mention: Mention) -> tuple[str, str, int, str, int, int]:
    kind, target = (
        (0, mention.entity_id) if mention.entity_id is not None else (1, mention.relationship_id)
    )
    return (
        str(mention.tenant_id),
        str(mention.chunk_id),
        kind,
        str(target),
        -1 if mention.start is None else mention.start,
        -1 if mention.end is None else mention.end,
    )


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


def _apply(connection: sqlite3.Connection, tenant: str, changes: PostingChanges) -> None:
    """Write the statistics and postings `changes` make, in the open transaction."""
    row = connection.execute(
        "SELECT chunk_count, total_length, next_write FROM chunks_tenants WHERE tenant_id = ?",
        (tenant,),
    ).fetchone()
    count, length, version = row
    connection.execute(
        "UPDATE chunks_tenants SET chunk_count = ?, total_length = ?, next_write = ? "
        "WHERE tenant_id = ?",
        (count + changes.count, length + changes.length, version + 1, tenant),
    )
    held = {
        term: (df, sizes)
        for term, df, sizes in _select_in(
            connection,
            "SELECT term, df, sizes FROM chunks_terms WHERE tenant_id = ? AND term IN ({})",
            (tenant,),
            changes.terms(),
        )
    }
    plan = SegmentPlan(changes, held)
    gone = [(tenant, term) for term in plan.gone]
    connection.executemany("DELETE FROM chunks_terms WHERE tenant_id = ? AND term = ?", gone)
    connection.executemany("DELETE FROM chunks_postings WHERE tenant_id = ? AND term = ?", gone)
    stored: dict[str, list[bytes]] = {}
    for batch in _batches(plan.merges, _COMPOUND):
        # One indexed range read per term, a batch of them to a statement.
        one = "SELECT term, position, entries FROM chunks_postings WHERE tenant_id = ? "
        for term, _, blob in connection.execute(
            " UNION ALL ".join([one + "AND term = ? AND position >= ?"] * len(batch))
            + " ORDER BY 1, 2",
            [*chain.from_iterable((tenant, term, first) for term, first, _ in batch)],
        ):
            stored.setdefault(term, []).append(blob)
    connection.executemany(
        "DELETE FROM chunks_postings WHERE tenant_id = ? AND term = ? AND position >= ?",
        [(tenant, term, first) for term, first, _ in plan.merges],
    )
    rows, segments = plan.finish(stored)
    connection.executemany(
        "INSERT OR REPLACE INTO chunks_terms (tenant_id, term, df, sizes, version) "
        "VALUES (?, ?, ?, ?, ?)",
        [(tenant, term, df, sizes, version) for term, df, sizes in rows],
    )
    connection.executemany(
        "INSERT INTO chunks_postings (tenant_id, term, position, entries) VALUES (?, ?, ?, ?)",
        [(tenant, *segment) for segment in segments],
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
            path.
        ClosedError: the store has been closed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = check_path(path)
        self._store = f"sqlite chunk store {self._path}"
        self._worker = SqliteWorker(
            self._path,
            store=self._store,
            resource=self._resource_name(),
            setup=lambda connection: _ensure_schema(connection, self._store),
        )
        self._cache = PostingCache()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"{type(self).__name__}({self._path!r}, {state})"

    def _resource_name(self) -> str:
        return f"{type(self).__name__}({self._path!r})"

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
            "(tenant_id, chunk_count, total_length, next_slot, next_write) "
            "VALUES (?, 0, 0, 0, 0)",
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
            (
                tenant,
                str(chunk.id),
                slot,
                chunk.source_id,
                chunk.ordinal,
                chunk.start,
                chunk.end,
                length,
                chunk.text,
                metadata[id(chunk)],
            )
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
                    "UPDATE chunks_tenants SET chunk_count = 0, total_length = 0 "
                    "WHERE tenant_id = ?",
                    (tenant,),
                )
                for table in ("chunks", "terms", "postings", "mentions"):
                    connection.execute(f"DELETE FROM chunks_{table} WHERE tenant_id = ?", (tenant,))
            return 0 if row is None else int(row[0])

        return await self._run(write)

    # -- search ------------------------------------------------------------------

    async def _search(
        self,
        terms: list[str],
        tenant_id: TenantId,
        k: int,
        source_ids: frozenset[SourceId] | None,
    ) -> list[ScoredChunk]:
        tenant = str(tenant_id)

        def read(connection: sqlite3.Connection) -> list[ScoredChunk]:
            with read_transaction(connection):
                return self._ranked(
                    connection, tenant, tenant_id, terms, k, source_ids, self._cache
                )

        return await self._run(read)

    @staticmethod
    def _ranked(
        connection: sqlite3.Connection,
        tenant: str,
        tenant_id: TenantId,
        terms: list[str],
        k: int,
        source_ids: frozenset[SourceId] | None,
        cache: PostingCache,
    ) -> list[ScoredChunk]:
        row = connection.execute(
            "SELECT chunk_count, total_length, next_slot FROM chunks_tenants WHERE tenant_id = ?",
            (tenant,),
        ).fetchone()
        if row is None or not row[0]:
            return []
        count, total, size = row
        held = {
            term: (df, version)
            for term, df, version in connection.execute(
                f"SELECT term, df, version FROM chunks_terms WHERE tenant_id = ? AND term IN "
                f"({_marks(len(terms))})",
                [tenant, *terms],
            )
        }
        if not held:
            return []
        postings = {term: cache.get(tenant, term, held[term][1]) for term in held}
        missing = [term for term, entries in postings.items() if entries is None]
        if missing:
            segments: dict[str, list[bytes]] = {}
            for term, blob in connection.execute(
                f"SELECT term, entries FROM chunks_postings WHERE tenant_id = ? AND term IN "
                f"({_marks(len(missing))}) ORDER BY term, position",
                [tenant, *missing],
            ):
                segments.setdefault(term, []).append(blob)
            for term in missing:
                postings[term] = entries = live_entries(segments[term])
                cache.put(tenant, term, held[term][1], entries)
        mean_length = total / count
        scores = np.zeros(size, dtype=np.float64)
        for term in terms:
            if term not in held:
                continue
            frequency = held[term][0]
            cached = postings[term]
            assert cached is not None
            slots = cached["slot"]
            scores[slots] += term_weights(
                idf(frequency, count), cached["tf"], cached["length"], mean_length
            )
        if source_ids is not None:
            allowed = np.asarray(
                [
                    slot
                    for (slot,) in _select_in(
                        connection,
                        "SELECT slot FROM chunks_chunks WHERE tenant_id = ? AND source_id IN ({})",
                        (tenant,),
                        sorted(source_ids),
                    )
                ],
                dtype=np.intp,
            )
            kept = np.zeros_like(scores)
            kept[allowed] = scores[allowed]
            scores = kept
        found = best_slots(scores, k)
        rows = _select_in(
            connection,
            f"SELECT slot, {_COLUMNS} FROM chunks_chunks INDEXED BY chunks_by_slot "
            f"WHERE tenant_id = ? AND slot IN ({{}})",
            (tenant,),
            found.tolist(),
        )
        rows.sort(key=lambda row: row[0])
        slots = np.asarray([row[0] for row in rows], dtype=np.intp)
        ints = [UUID(row[1]).int for row in rows]
        high = np.asarray([value >> 64 for value in ints], dtype=np.uint64)
        low = np.asarray([value & 0xFFFF_FFFF_FFFF_FFFF for value in ints], dtype=np.uint64)
        order = rank_slots(scores[slots], high, low, k)
        return [
            scored_chunk(_chunk(tenant_id, rows[index][1:]), float(scores[slots[index]]))
            for index in order.tolist()
        ]

    # -- mentions ----------------------------------------------------------------

    async def _put_mentions(self, mentions: list[Mention]) -> None:
        def write(connection: sqlite3.Connection) -> None:
            with write_transaction(connection):
                lengths: dict[tuple[str, str], Chunk] = {}
                for tenant in {str(mention.tenant_id) for mention in mentions}:
                    wanted = {
                        str(mention.chunk_id)
                        for mention in mentions
                        if str(mention.tenant_id) == tenant
                    }
                    for row in _select_in(
                        connection,
                        f"SELECT {_COLUMNS} FROM chunks_chunks WHERE tenant_id = ? "
                        "AND chunk_id IN ({})",
                        (tenant,),
                        sorted(wanted),
                    ):
                        lengths[(tenant, row[0])] = _chunk(TenantId(UUID(tenant)), row)
                for index, mention in enumerate(mentions):
                    chunk = lengths.get((str(mention.tenant_id), str(mention.chunk_id)))
                    if chunk is None:
                        raise MissingChunkError(
                            chunk_id=mention.chunk_id, tenant_id=mention.tenant_id
                        )
                    check_mention_span(mention, chunk, argument=f"mentions[{index}]")
                connection.executemany(
                    "INSERT OR IGNORE INTO chunks_mentions "
                    '(tenant_id, chunk_id, kind, target_id, start, "end") '
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [_mention_row(mention) for mention in mentions],
                )

        await self._run(write)

    @staticmethod
    def _targets(
        entity_ids: frozenset[UUID], relationship_ids: frozenset[UUID]
    ) -> list[tuple[int, str]]:
        return [(0, str(each)) for each in entity_ids] + [
            (1, str(each)) for each in relationship_ids
        ]

    async def _mentions_of(
        self,
        tenant_id: TenantId,
        entity_ids: frozenset[UUID],
        relationship_ids: frozenset[UUID],
    ) -> list[Mention]:
        tenant = str(tenant_id)
        targets = self._targets(entity_ids, relationship_ids)

        def read(connection: sqlite3.Connection) -> list[Mention]:
            with read_transaction(connection):
                rows = []
                for kind, target in targets:
                    rows += connection.execute(
                        'SELECT chunk_id, kind, target_id, start, "end" FROM chunks_mentions '
                        "WHERE tenant_id = ? AND kind = ? AND target_id = ?",
                        (tenant, kind, target),
                    ).fetchall()
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

    async def _delete_mentions_of(
        self,
        tenant_id: TenantId,
        entity_ids: frozenset[UUID],
        relationship_ids: frozenset[UUID],
    ) -> int:
        tenant = str(tenant_id)
        targets = self._targets(entity_ids, relationship_ids)

        def write(connection: sqlite3.Connection) -> int:
            removed = 0
            with write_transaction(connection):
                for kind, target in targets:
                    removed += connection.execute(
                        "DELETE FROM chunks_mentions WHERE tenant_id = ? AND kind = ? "
                        "AND target_id = ?",
                        (tenant, kind, target),
                    ).rowcount
            return removed

        return await self._run(write)
