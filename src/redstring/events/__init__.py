"""Event-log adapters, one module per backend, in `redstring.events.adapters`.

The event models live in `redstring.domain.events` and the `EventLog` port in
`redstring.ports.event_log`; both are re-exported here for convenience.
"""

from redstring.domain.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    Event,
    event_from_json,
    event_to_json,
)
from redstring.ports.event_log import EventLog, StoredEvent

__all__ = [
    "DocumentExtracted",
    "EntitiesEmbedded",
    "Event",
    "EventLog",
    "StoredEvent",
    "event_from_json",
    "event_to_json",
]
