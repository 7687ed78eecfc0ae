"""The Postgres event log: a durable `EventLog` that several processes can append to.

Tables, in the adapter's schema (`redstring` unless told otherwise):

- `event_log`: one row per event, keyed by its `sequence`, with its
  `event_id` unique and its `tenant_id` indexed, and the event as the JSON
  `event_to_json` gives.
- `event_log_head`: one row holding the last sequence number. An append
  locks it, so appends take turns and numbers are handed out without gaps
  in commit order: a reader that has seen sequence `n` has seen every
  event up to `n`, and no later commit lands below it.
- `event_entities`: the index `EntityEventReader` reads, one row per
  `(tenant_id, entity_id, sequence)` for each entity a merge, an undoing or
  a delete names; a component of its own (`event_index`), so a schema
  written before it gains it, filled from the log (ADR 0058).

Needs the `postgres` extra. Design: ADR 0031.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from uuid import UUID  # noqa: TC003 - the public surface test resolves signatures

from redstring.domain.events import event_from_json, event_to_json
from redstring.domain.limits import MAX_JSON_INT
from redstring.domain.validation import check_entity_ids, check_integer, check_tenant_id
from redstring.ports.event_log import EntityEventReader, EventLogBase, StoredEvent, entities_named
from redstring.ports.lifetime import AsyncClosable
from redstring.storage.adapters.postgres import (
    DEFAULT_POOL_SIZE,
    DEFAULT_SCHEMA,
    PostgresClient,
    asyncpg,
    client_for,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId

#: The layout this module reads and writes, recorded in the schema's `meta` table.
SCHEMA_VERSION: Final = 1
_COMPONENT: Final = "event_log"

_TABLES: Final = (
    """CREATE TABLE {schema}.event_log (
        sequence bigint PRIMARY KEY,
        event_id uuid NOT NULL UNIQUE,
        tenant_id uuid NOT NULL,
        body text NOT NULL
    )""",
    "CREATE INDEX event_log_by_tenant ON {schema}.event_log (tenant_id, sequence)",
    """CREATE TABLE {schema}.event_log_head (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        last_sequence bigint NOT NULL
    )""",
    "INSERT INTO {schema}.event_log_head (last_sequence) VALUES (0)",
)


_INDEX_COMPONENT: Final = "event_index"
_INDEX_VERSION: Final = 1
_INDEX_TABLES: Final = (
    """CREATE TABLE {schema}.event_entities (
        tenant_id uuid NOT NULL,
        entity_id uuid NOT NULL,
        sequence bigint NOT NULL,
        PRIMARY KEY (tenant_id, entity_id, sequence)
    )""",
    """INSERT INTO {schema}.event_entities (tenant_id, entity_id, sequence)
    SELECT log.tenant_id, named.id::uuid, log.sequence
    FROM {schema}.event_log AS log
    CROSS JOIN LATERAL (SELECT log.body::jsonb AS doc) AS parsed
    CROSS JOIN LATERAL (
        SELECT parsed.doc -> 'canonical' ->> 'id' WHERE parsed.doc ->> 'kind' = 'entities_merged'
        UNION ALL SELECT parsed.doc ->> 'canonical_id' WHERE parsed.doc ->> 'kind' = 'merge_undone'
        UNION ALL SELECT jsonb_array_elements_text(parsed.doc -> 'merged_ids')
            WHERE parsed.doc ->> 'kind' IN ('entities_merged', 'merge_undone')
        UNION ALL SELECT parsed.doc ->> 'entity_id' WHERE parsed.doc ->> 'kind' = 'entity_deleted'
    ) AS named (id)
    ON CONFLICT DO NOTHING""",
)


class PostgresEventLog(AsyncClosable, EventLogBase, EntityEventReader):
    """An `EventLog` kept in Postgres: durable, shared, and append-only.

    Give a `dsn` and the log opens a pool of up to `pool_size` connections on
    first use; or give a `pool` you own (an `asyncpg.Pool`), which it uses
    and never closes. Each append is one transaction: a batch is recorded
    whole or not at all, even if the writer is killed. Reads parse the
    stored JSON, so a caller can never reach what the log holds.

    Raises (from any method):
        ValueError: an argument is out of range; from the constructor, not
            exactly one of `dsn` and `pool`, or a bad `schema`.
        StoreError: the log is closed, the database failed (the driver's
            error is the `__cause__`), or the schema holds an event-log
            layout version this code does not read.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        pool: asyncpg.Pool | None = None,
        schema: str = DEFAULT_SCHEMA,
    ) -> None:
        connect = (dsn, pool)
        self._client = client_for(self, "postgres event log", connect, schema, pool_size)
        s = f'"{self._client.schema}"'
        self._lock_head = f"SELECT last_sequence FROM {s}.event_log_head FOR UPDATE"
        self._held = f"SELECT event_id FROM {s}.event_log WHERE event_id = ANY($1::uuid[])"
        self._insert = f"""
            INSERT INTO {s}.event_log (sequence, event_id, tenant_id, body)
            SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::uuid[], $4::text[])"""
        self._move_head = f"UPDATE {s}.event_log_head SET last_sequence = $1"
        self._read_all = f"SELECT sequence, body FROM {s}.event_log WHERE sequence > $1 ORDER BY 1"
        self._read_tenant = (
            f"SELECT sequence, body FROM {s}.event_log "
            "WHERE tenant_id = $2 AND sequence > $1 ORDER BY 1"
        )
        self._last = f"SELECT last_sequence FROM {s}.event_log_head"
        self._insert_named = f"""
            INSERT INTO {s}.event_entities (tenant_id, entity_id, sequence)
            SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) ON CONFLICT DO NOTHING"""
        self._read_ids = (
            f"SELECT sequence, body FROM {s}.event_log "
            "WHERE tenant_id = $1 AND event_id = ANY($2::uuid[]) ORDER BY 1"
        )
        self._read_naming = (
            f"SELECT sequence, body FROM {s}.event_log WHERE sequence IN ("
            f"SELECT sequence FROM {s}.event_entities "
            "WHERE tenant_id = $1 AND entity_id = ANY($2::uuid[]) AND sequence > $3) ORDER BY 1"
        )
        self._ready = False

    def _describe(self) -> str:
        return f"schema={self._client.schema!r}"

    async def _release(self) -> None:
        """Close the pool if the log opened it."""
        await self._client.close()

    async def _prepare(self) -> PostgresClient:
        if not self._ready:
            await self._client.ensure_tables(_COMPONENT, SCHEMA_VERSION, _TABLES)
            await self._client.ensure_tables(_INDEX_COMPONENT, _INDEX_VERSION, _INDEX_TABLES)
            self._ready = True
        return self._client

    async def _append_many(self, events: Sequence[Event]) -> list[int]:
        batch = list(events)
        bodies = [event_to_json(event) for event in batch]
        client = await self._prepare()
        async with client.transaction() as connection:
            last = int(await connection.fetchval(self._lock_head))
            held = await connection.fetch(self._held, [event.event_id for event in batch])
            if held:
                raise ValueError(f"the log already holds event {held[0][0]}")
            sequences = list(range(last + 1, last + 1 + len(batch)))
            await connection.execute(
                self._insert,
                sequences,
                [event.event_id for event in batch],
                [event.tenant_id for event in batch],
                bodies,
            )
            named = [
                (event.tenant_id, entity_id, sequence)
                for event, sequence in zip(batch, sequences, strict=True)
                for entity_id in dict.fromkeys(entities_named(event))
            ]
            if named:
                await connection.execute(self._insert_named, *map(list, zip(*named, strict=True)))
            await connection.execute(self._move_head, sequences[-1])
        return sequences

    async def _read(self, after: int, tenant_id: TenantId | None) -> list[StoredEvent]:
        client = await self._prepare()
        async with client.connection() as connection:
            if tenant_id is None:
                rows = await connection.fetch(self._read_all, after)
            else:
                rows = await connection.fetch(self._read_tenant, after, tenant_id)
        return [StoredEvent(sequence=row[0], event=event_from_json(row[1])) for row in rows]

    async def read_events(
        self, event_ids: Sequence[UUID], *, tenant_id: TenantId
    ) -> list[StoredEvent]:
        """The tenant's events among `event_ids`, in order; see `EntityEventReader`."""
        ids = list(check_entity_ids(event_ids, argument="event_ids"))
        check_tenant_id(tenant_id)
        return await self._fetch(self._read_ids, tenant_id, ids)

    async def read_naming(
        self, entity_ids: Sequence[EntityId], *, tenant_id: TenantId, after: int = 0
    ) -> list[StoredEvent]:
        """The tenant's events above `after` naming one of `entity_ids`, in order."""
        ids = list(check_entity_ids(entity_ids))
        check_tenant_id(tenant_id)
        check_integer(after, argument="after", minimum=0, maximum=MAX_JSON_INT)
        return await self._fetch(self._read_naming, tenant_id, ids, after)

    async def _fetch(self, sql: str, *arguments: object) -> list[StoredEvent]:
        client = await self._prepare()
        async with client.connection() as connection:
            rows = await connection.fetch(sql, *arguments)
        return [StoredEvent(sequence=row[0], event=event_from_json(row[1])) for row in rows]

    async def last_sequence(self) -> int:
        """The number of the last event recorded; 0 when the log is empty."""
        client = await self._prepare()
        async with client.connection() as connection:
            return int(await connection.fetchval(self._last))
