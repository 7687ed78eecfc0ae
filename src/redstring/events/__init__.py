"""Events: the facts `build_graph` records, and the append-only log that holds them.

Adapters of the log live in `redstring.events.adapters`, one module per backend.
"""

from redstring.events.log import EventLog, StoredEvent
from redstring.events.models import (
    DocumentExtracted,
    EntitiesEmbedded,
    Event,
    event_from_json,
    event_to_json,
)

__all__ = [
    "DocumentExtracted",
    "EntitiesEmbedded",
    "Event",
    "EventLog",
    "StoredEvent",
    "event_from_json",
    "event_to_json",
]
