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
from redstring.ports.event_log import EventLogBase, StoredEvent
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from uuid import UUID

    from redstring.domain.events import Event
    from redstring.domain.ids import TenantId


class InMemoryEventLog(AsyncClosable, EventLogBase):
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
        return list(range(first, first + len(entries)))

    async def _read(self, after: int, tenant_id: TenantId | None) -> list[StoredEvent]:
        return [
            StoredEvent(sequence=sequence, event=event_from_json(text))
            for sequence, (owner, text) in enumerate(self._entries[after:], start=after + 1)
            if tenant_id is None or owner == tenant_id
        ]

    async def last_sequence(self) -> int:
        """The number of the last event recorded; 0 when the log is empty."""
        return len(self._entries)
