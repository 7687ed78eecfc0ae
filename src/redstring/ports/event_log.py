"""The event log port: an append-only, totally ordered record of events.

The log, not any store, is the record of what was extracted; the stores are
projections of it and are rebuilt by replaying it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, get_args, runtime_checkable
from uuid import UUID  # noqa: TC003 - the public surface test resolves signatures

from pydantic import BaseModel, ConfigDict, Field

from redstring.domain.events import EntitiesMerged, EntityDeleted, Event, MergeUndone

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
