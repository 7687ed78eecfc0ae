"""The event log port: an append-only, totally ordered record of events.

The log, not any store, is the record of what was extracted; the stores are
projections of it and are rebuilt by replaying it.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Final, Protocol, get_args, runtime_checkable
from uuid import UUID  # noqa: TC003 - the public surface test resolves signatures

from pydantic import BaseModel, ConfigDict, Field

from redstring.domain.events import EntitiesMerged, EntityDeleted, Event, MergeUndone
from redstring.domain.limits import MAX_JSON_INT
from redstring.domain.validation import check_integer, check_sequence, check_tenant_id

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import EntityId, TenantId


#: Every event class `Event` admits, read from the union itself, so that a log
#: adapter refusing anything else (`isinstance(x, EVENT_TYPES)`) admits a new
#: kind the moment it joins `Event`.
EVENT_TYPES: Final[tuple[type, ...]] = get_args(get_args(Event.__value__)[0])


def entities_named(event: Event) -> tuple[EntityId, ...]:
    """The entity ids `event` names, for `EntityEventReader`: merges, undoings and deletes."""
    if isinstance(event, EntitiesMerged | MergeUndone):
        return (event.canonical_id, *event.merged_ids)
    if isinstance(event, EntityDeleted):
        return (event.entity_id,)
    return ()


class StoredEvent(BaseModel):
    """An event as the log holds it: its 1-based sequence number and the event."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sequence: int = Field(ge=1)
    event: Event


@runtime_checkable
class EventLog(Protocol):
    """Append-only and totally ordered; an event is held at most once.

    Sequence numbers start at 1 and strictly increase across the whole log,
    every tenant together. An event whose `event_id` the log already holds is
    refused, so the log never records one fact twice. Reads return copies.
    """

    async def append(self, event: Event) -> int:
        """Record the event; return its sequence number.

        Raises:
            ValueError: the log already holds an event with this `event_id`.
        """
        ...

    async def append_many(self, events: Sequence[Event]) -> list[int]:
        """Record every event, in order, or none of them; return their sequence numbers.

        Raises:
            ValueError: an `event_id` is already held, or repeats in `events`.
        """
        ...

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        """Every event with a sequence number above `after`, in sequence order.

        `tenant_id` keeps only that tenant's events (their sequence numbers
        unchanged); `None` keeps every tenant's.

        Raises:
            ValueError: `after` is negative.
        """
        ...

    async def last_sequence(self) -> int:
        """The sequence number of the last event recorded; 0 when the log is empty."""
        ...


class EventLogBase(EventLog):
    """An `EventLog` whose public methods check their arguments, then call its hooks.

    `append_many` refuses, before any hook runs, anything that is not an
    event and an `event_id` repeated within the batch; the hook refuses an
    id the log already holds. `read` checks `after` and `tenant_id`. An
    adapter subclasses `AsyncClosable` and this class and implements the
    hooks. A class that implements `EventLog`'s methods itself is an event
    log all the same.
    """

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
        seen: set[object] = set()
        for index, event in enumerate(events):
            if not isinstance(event, EVENT_TYPES):
                raise ValueError(f"events[{index}] is not an event: {event!r}")
            if event.event_id in seen:
                raise ValueError(f"event {event.event_id} appears twice in one batch")
            seen.add(event.event_id)
        return await self._append_many(events) if events else []

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        """Copies of the events numbered above `after`, in order, optionally of one tenant.

        Raises:
            ValueError: `after` is negative or not an integer.
        """
        check_integer(after, argument="after", minimum=0, maximum=MAX_JSON_INT)
        if tenant_id is not None:
            check_tenant_id(tenant_id)
        return await self._read(after, tenant_id)

    @abstractmethod
    async def last_sequence(self) -> int:
        """The sequence number of the last event recorded; 0 when the log is empty."""

    @abstractmethod
    async def _append_many(self, events: Sequence[Event]) -> list[int]:
        """Record a non-empty batch of events with distinct ids, or none if one is held."""

    @abstractmethod
    async def _read(self, after: int, tenant_id: TenantId | None) -> list[StoredEvent]:
        """The events numbered above `after`, of `tenant_id` unless it is `None`."""


@runtime_checkable
class EntityEventReader(Protocol):
    """Reads a tenant's events by id, and those naming given entities, from an index.

    What an undo reads instead of the whole log (ADR 0058). The entities an
    event names: an `EntitiesMerged`'s canonical id and merged ids, a
    `MergeUndone`'s canonical id and merged ids, an `EntityDeleted`'s entity
    id; the other kinds name none. Both reads answer in sequence order, each
    event once, never another tenant's, and return copies.
    """

    async def read_events(
        self, event_ids: Sequence[UUID], *, tenant_id: TenantId
    ) -> list[StoredEvent]:
        """The tenant's events among `event_ids`; ids it does not hold are omitted.

        Raises:
            ValueError: `event_ids` is not a sequence of UUIDs, or `tenant_id`
                is not a UUID.
        """
        ...

    async def read_naming(
        self, entity_ids: Sequence[EntityId], *, tenant_id: TenantId, after: int = 0
    ) -> list[StoredEvent]:
        """The tenant's events above `after` that name one of `entity_ids`.

        Raises:
            ValueError: `entity_ids` is not a sequence of entity ids, `after`
                is negative, or `tenant_id` is not a UUID.
        """
        ...
