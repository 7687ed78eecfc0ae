"""The in-memory event log: the reference implementation of `EventLog`.

Each event is stored as its JSON text and parsed again on every read. That is
the copy on write and on read the adapters owe their callers, and it is
cheaper than deep-copying the models both ways (serializing runs in pydantic's
core); it also proves on every append that the event survives its stored
format, as a durable log would need it to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.domain.events import (
    event_from_json,
    event_to_json,
)
from redstring.domain.limits import MAX_JSON_INT
from redstring.domain.validation import check_integer, check_sequence, check_tenant_id
from redstring.ports.event_log import EVENT_TYPES, EventLog, StoredEvent
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from uuid import UUID

    from redstring.domain.events import Event
    from redstring.domain.ids import TenantId


class InMemoryEventLog(AsyncClosable, EventLog):
    """An `EventLog` held in process memory, for tests and short jobs.

    It lasts as long as the process, so it suits nothing that must survive a
    restart. A batch is checked whole before any of it is recorded. Not
    thread-safe: use it from one event loop.
    """

    def __init__(self) -> None:
        self._entries: list[tuple[TenantId, str]] = []
        self._event_ids: set[UUID] = set()

    async def _release(self) -> None:
        self._entries.clear()
        self._event_ids.clear()

    async def append(self, event: Event) -> int:
        """Record the event; return its sequence number, counted from 1.

        Raises:
            ValueError: the log already holds an event with this `event_id`.
        """
        [sequence] = await self.append_many([event])
        return sequence

    async def append_many(self, events: Sequence[Event]) -> list[int]:
        """Record every event in order, or none; return their sequence numbers.

        Raises:
            ValueError: something is not an event, or an `event_id` is already
                held or repeats within `events`.
        """
        check_sequence(events, argument="events")
        batch_ids: set[UUID] = set()
        for index, event in enumerate(events):
            if not isinstance(event, EVENT_TYPES):
                raise ValueError(f"events[{index}] is not an event: {event!r}")
            if event.event_id in self._event_ids:
                raise ValueError(f"the log already holds event {event.event_id}")
            if event.event_id in batch_ids:
                raise ValueError(f"event {event.event_id} appears twice in one batch")
            batch_ids.add(event.event_id)
        entries = [(event.tenant_id, event_to_json(event)) for event in events]
        first = len(self._entries) + 1
        self._entries.extend(entries)
        self._event_ids |= batch_ids
        return list(range(first, first + len(entries)))

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        """Copies of the events numbered above `after`, in order, optionally of one tenant.

        Raises:
            ValueError: `after` is negative or not an integer.
        """
        check_integer(after, argument="after", minimum=0, maximum=MAX_JSON_INT)
        if tenant_id is not None:
            check_tenant_id(tenant_id)
        return [
            StoredEvent(sequence=sequence, event=event_from_json(text))
            for sequence, (owner, text) in enumerate(self._entries[after:], start=after + 1)
            if tenant_id is None or owner == tenant_id
        ]

    async def last_sequence(self) -> int:
        """The number of the last event recorded; 0 when the log is empty."""
        return len(self._entries)
