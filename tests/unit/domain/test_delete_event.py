"""The delete event: its stored format, and what it refuses."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest
from pydantic import ValidationError

from redstring import EntityDeleted
from redstring.domain.events import event_from_json, event_to_json
from redstring.domain.ids import EntityId
from redstring.testing.factories import TENANT


def deleted(**overrides: object) -> EntityDeleted:
    fields: dict[str, object] = {
        "event_id": UUID(int=100),
        "tenant_id": TENANT,
        "occurred_at": datetime(2024, 5, 6, 9, 8, 9, tzinfo=timezone(timedelta(hours=2))),
        "entity_id": EntityId(UUID(int=1)),
    }
    fields.update(overrides)
    return EntityDeleted(**fields)  # type: ignore[arg-type]


def test_a_delete_round_trips_exactly_with_its_kind_and_version_pinned() -> None:
    event = deleted()
    text = event_to_json(event)
    assert event_from_json(text) == event
    stored = json.loads(text)
    assert (stored["kind"], stored["version"]) == ("entity_deleted", 1)
    assert stored["entity_id"] == "00000000-0000-0000-0000-000000000001"
    assert event.occurred_at == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"occurred_at": datetime(2024, 5, 6)}, "timezone-aware"),
        ({"entity_id": "not a uuid"}, "entity_id"),
        ({"reason": "extra"}, "reason"),
    ],
)
def test_a_delete_refuses_a_bad_field(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        deleted(**overrides)


def test_a_delete_is_frozen() -> None:
    with pytest.raises(ValidationError):
        deleted().entity_id = EntityId(UUID(int=2))  # type: ignore[misc]


def test_a_delete_recorded_before_merged_ids_existed_reads_as_naming_none() -> None:
    stored = json.loads(event_to_json(deleted(merged_ids=(EntityId(UUID(int=2)),))))
    assert stored["merged_ids"] == ["00000000-0000-0000-0000-000000000002"]
    del stored["merged_ids"]
    assert event_from_json(json.dumps(stored)) == deleted()
    assert deleted().merged_ids == ()
