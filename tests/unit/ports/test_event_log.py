"""The event log port names every event class its union admits."""

from __future__ import annotations

from redstring.domain.events import (
    DocumentChunked,
    DocumentDeleted,
    DocumentExtracted,
    EntitiesEmbedded,
    EntitiesMerged,
    EntityDeleted,
    MergeUndone,
    PassagesEmbedded,
    TenantDeleted,
)
from redstring.ports.event_log import EVENT_TYPES


def test_event_types_are_the_classes_of_the_event_union_in_order() -> None:
    assert list(EVENT_TYPES) == [
        DocumentExtracted,
        EntitiesEmbedded,
        EntitiesMerged,
        MergeUndone,
        EntityDeleted,
        DocumentChunked,
        PassagesEmbedded,
        DocumentDeleted,
        TenantDeleted,
    ]
