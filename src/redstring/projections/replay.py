"""Replaying the event log into projections, to rebuild or catch up a store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from redstring.domain.validation import check_collaborator
from redstring.ports.event_log import EventLog

if TYPE_CHECKING:
    from redstring.domain.events import Event
    from redstring.domain.ids import TenantId


@runtime_checkable
class Projection(Protocol):
    """Folds events into some state. Applying an event twice must change nothing."""

    async def apply(self, event: Event) -> None:
        """Fold one event in; ignore kinds this projection does not project."""
        ...


async def replay(
    log: EventLog,
    *projections: Projection,
    after: int = 0,
    tenant_id: TenantId | None = None,
) -> int:
    """Apply every event numbered above `after` to every projection, in log order.

    Each event reaches every projection before the next event is applied.
    `tenant_id` replays only that tenant's events. Returns the sequence number
    of the last event applied, or `after` when there was none; pass it back as
    `after` to catch up later. Projections are idempotent, so after a failure
    replaying again from the same `after` is safe.

    Raises:
        ValueError: `after` is negative, or `log` or a projection is not one.
    """
    check_collaborator(log, EventLog, argument="log")
    for index, projection in enumerate(projections):
        check_collaborator(projection, Projection, argument=f"projections[{index}]")
    last = after
    for stored in await log.read(after=after, tenant_id=tenant_id):
        for projection in projections:
            await projection.apply(stored.event)
        last = stored.sequence
    return last
