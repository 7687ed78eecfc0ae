"""What a Postgres store holds in process: each tenant's replica, and entities by revision.

Both Postgres stores keep a tenant in process (the graph its name index,
the vector store its matrix) and bring it up to what the database has
committed before they read it (ADRs 0032 and 0037). The rule is the same
for each, so it is written once here:

- The store's tables give each tenant a `generation`, moved by every write
  to it, and a `reset`, moved by a purge; every row carries the `revision`
  that wrote it, and a deletions table the revision at which a row went.
- A replica is current for one generation. Bringing it up reads, from one
  repeatable-read snapshot, the generation, the rows of later revisions and
  the deletions of later revisions; a replica older than the tenant's
  `reset` is started again from nothing.
- One lock per tenant: two refreshes of one tenant never run together, and
  a caller that waited finds the replica another brought up.
- Nothing awaits between the fetch and the swap, so no reader ever sees a
  half-applied change.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

    from redstring.domain.ids import TenantId
    from redstring.storage.adapters.postgres import PostgresClient


@dataclass(frozen=True, slots=True)
class ReplicaSql:
    """The three statements a replica is refreshed with; `$1` is the tenant.

    `generation` selects `(generation, reset)`; `rows_since` the rows whose
    revision is above `$2`; `deletions_since` the ids (first column) deleted
    at a revision above `$2`.
    """

    generation: str
    rows_since: str
    deletions_since: str


@dataclass(slots=True)
class Held[T]:
    """A tenant's replica and the generation it is current for."""

    generation: int
    value: T


class TenantReplicas[T]:
    """Each tenant's replica of type `T`, brought up to what the database has committed.

    `empty()` makes a new replica; `apply(tenant_id, replica, rows,
    deleted)` changes one by the rows of later revisions and the ids deleted
    since (never awaiting).
    """

    __slots__ = ("_apply", "_empty", "_held", "_locks")

    def __init__(
        self,
        *,
        empty: Callable[[], T],
        apply: Callable[[TenantId, T, Sequence[Any], list[UUID]], None],
    ) -> None:
        self._empty = empty
        self._apply = apply
        self._held: dict[TenantId, Held[T]] = {}
        self._locks: dict[TenantId, asyncio.Lock] = {}

    def peek(self, tenant_id: TenantId) -> Held[T] | None:
        """The tenant's replica as held, however old; `None` when none is held."""
        return self._held.get(tenant_id)

    def clear(self) -> None:
        """Forget every replica."""
        self._held.clear()

    async def current(
        self,
        client: PostgresClient,
        sql: ReplicaSql,
        tenant_id: TenantId,
        generation: int | None = None,
    ) -> Held[T]:
        """The tenant's replica, current for `generation` or for what is committed now."""
        if generation is None:
            async with client.connection() as connection:
                row = await connection.fetchrow(sql.generation, tenant_id)
            generation = 0 if row is None else int(row[0])
        held = self._held.get(tenant_id)
        if held is not None and held.generation >= generation:
            return held
        async with self._locks.setdefault(tenant_id, asyncio.Lock()):
            held = self._held.get(tenant_id)
            if held is None or held.generation < generation:
                held = await self._refresh(client, sql, tenant_id, held)
        return held

    async def _refresh(
        self, client: PostgresClient, sql: ReplicaSql, tenant_id: TenantId, held: Held[T] | None
    ) -> Held[T]:
        """Fetch what changed since `held` (everything, if it is `None` or was purged)."""
        async with client.transaction(isolation="repeatable_read", readonly=True) as connection:
            row = await connection.fetchrow(sql.generation, tenant_id)
            generation, reset = (0, 0) if row is None else (int(row[0]), int(row[1]))
            if held is None or reset > held.generation:
                held = Held(0, self._empty())
            since = held.generation
            rows = await connection.fetch(sql.rows_since, tenant_id, since)
            deleted = await connection.fetch(sql.deletions_since, tenant_id, since) if since else []
        # Nothing awaits from here on, so no reader sees a half-applied change.
        self._apply(tenant_id, held.value, rows, [UUID(bytes=each[0].bytes) for each in deleted])
        held.generation = generation
        self._held[tenant_id] = held
        return held


class RevisionCache[K: Hashable, V]:
    """At most `size` values, each kept with the revision it was read at; oldest dropped first.

    A store parses a row's text once per revision: `get` answers only for
    the revision asked, so a row rewritten since is parsed again.
    """

    __slots__ = ("_held", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        # Oldest first; `popitem(last=False)` forgets one in constant time, where a
        # dict's first key is found by a scan past every slot emptied since it grew.
        self._held: OrderedDict[K, tuple[int, V]] = OrderedDict()

    def get(self, key: K, revision: int) -> V | None:
        """The value held for `key` at `revision`, or `None`."""
        held = self._held.get(key)
        return held[1] if held is not None and held[0] == revision else None

    def put(self, key: K, revision: int, value: V) -> None:
        """Keep `value` at `revision`, forgetting the oldest past the size."""
        held = self._held
        held[key] = (revision, value)
        held.move_to_end(key)
        while len(held) > self._size:
            held.popitem(last=False)

    def __len__(self) -> int:
        return len(self._held)

    def latest(self, key: K) -> V | None:
        """The value held for `key` at whatever revision, or `None`."""
        held = self._held.get(key)
        return None if held is None else held[1]

    def forget(self, key: K) -> None:
        """Drop what is held for `key`, if anything."""
        self._held.pop(key, None)

    def clear(self) -> None:
        """Forget every value."""
        self._held.clear()
