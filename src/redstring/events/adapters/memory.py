"""The in-memory event log: the reference implementation of `EventLog`.

Each event is stored as its JSON text and parsed again on every read. That is
the copy on write and on read the adapters owe their callers, and it is
cheaper than deep-copying the models both ways (serializing runs in pydantic's
core); it also proves on every append that the event survives its stored
format, as a durable log would need it to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID  # noqa: TC003 - the public surface test resolves signatures

from redstring.domain.events import event_from_json, event_to_json
from redstring.domain.limits import MAX_JSON_INT
from redstring.domain.validation import check_entity_ids, check_integer, check_tenant_id
from redstring.ports.event_log import EntityEventReader, EventLogBase, StoredEvent, entities_named
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId


class InMemoryEventLog(AsyncClosable, EventLogBase, EntityEventReader):
    """An `EventLog` held in process memory, for tests and short jobs.

    It lasts as long as the process, so it suits nothing that must survive a
    restart. A batch is checked whole before any of it is recorded. Not
    thread-safe: use it from one event loop.
    """

    def __init__(self) -> None:
        self._entries: list[tuple[TenantId, str]] = []
        self._event_ids: set[UUID] = set()
        # The index `EntityEventReader` reads: 0-based positions in `_entries`.
        self._by_event: dict[UUID, int] = {}
        self._by_entity: dict[tuple[TenantId, int], list[int]] = {}

    async def _release(self) -> None:
        self._entries.clear()
        self._event_ids.clear()
        self._by_event.clear()
        self._by_entity.clear()

    async def _append_many(self, events: Sequence[Event]) -> list[int]:
        batch_ids: set[UUID] = set()
        for event in events:
            if event.event_id in self._event_ids:
                raise ValueError(f"the log already holds event {event.event_id}")
            batch_ids.add(event.event_id)
        entries = [(event.tenant_id, event_to_json(event)) for event in events]
        first = len(self._entries) + 1
        self._entries.extend(entries)
        self._event_ids |= batch_ids
        for position, event in enumerate(events, start=first - 1):
            self._by_event[event.event_id] = position
            for entity_id in dict.fromkeys(entities_named(event)):
                self._by_entity.setdefault((event.tenant_id, entity_id.int), []).append(position)
        return list(range(first, first + len(entries)))

    async def _read(self, after: int, tenant_id: TenantId | None) -> list[StoredEvent]:
        return [
            StoredEvent(sequence=sequence, event=event_from_json(text))
            for sequence, (owner, text) in enumerate(self._entries[after:], start=after + 1)
            if tenant_id is None or owner == tenant_id
        ]

    async def read_events(
        self, event_ids: Sequence[UUID], *, tenant_id: TenantId
    ) -> list[StoredEvent]:
        """Copies of the tenant's events among `event_ids`, in order; see `EntityEventReader`."""
        check_entity_ids(event_ids, argument="event_ids"), check_tenant_id(tenant_id)
        positions = {self._by_event.get(event_id) for event_id in event_ids}
        return self._stored_at(
            p for p in positions if p is not None and self._entries[p][0] == tenant_id
        )

    async def read_naming(
        self, entity_ids: Sequence[EntityId], *, tenant_id: TenantId, after: int = 0
    ) -> list[StoredEvent]:
        """Copies of the tenant's events above `after` naming one of `entity_ids`, in order."""
        check_entity_ids(entity_ids), check_tenant_id(tenant_id)
        check_integer(after, argument="after", minimum=0, maximum=MAX_JSON_INT)
        positions: set[int] = set()
        for entity_id in entity_ids:
            positions.update(self._by_entity.get((tenant_id, entity_id.int), ()))
        return self._stored_at(p for p in positions if p >= after)

    def _stored_at(self, positions: Iterable[int]) -> list[StoredEvent]:
        return [
            StoredEvent(sequence=p + 1, event=event_from_json(self._entries[p][1]))
            for p in sorted(positions)
        ]

    async def last_sequence(self) -> int:
        """The number of the last event recorded; 0 when the log is empty."""
        return len(self._entries)
