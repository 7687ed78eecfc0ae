"""The merge and undo events: what they refuse, and an exact round trip."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import UUID

import pytest
from pydantic import ValidationError

from redstring.domain.events import EntitiesMerged, MergeUndone, event_from_json, event_to_json
from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

WHEN = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
A, B, C = (make_entity(id=EntityId(UUID(int=n))) for n in (1, 2, 3))


def merged(**overrides: object) -> EntitiesMerged:
    fields: dict[str, object] = {
        "event_id": UUID(int=100),
        "tenant_id": TENANT,
        "occurred_at": WHEN,
        "canonical": A,
        "merged_ids": (B.id,),
        "score": 0.97,
        "reason": "names 1.00",
        "before": (A, B),
        "relationships": (make_relationship(B, C),),
        "vectors": (VectorRecord(entity_id=B.id, tenant_id=TENANT, vector=[1.0, 0.0]),),
    }
    fields.update(overrides)
    return EntitiesMerged(**fields)  # type: ignore[arg-type]


def test_a_merge_and_its_undoing_round_trip_exactly() -> None:
    event = merged()
    assert event.canonical_id == A.id
    assert event_from_json(event_to_json(event)) == event
    undo = MergeUndone(
        event_id=UUID(int=101),
        tenant_id=TENANT,
        occurred_at=WHEN,
        merge_event_id=event.event_id,
        canonical_id=A.id,
        merged_ids=(B.id,),
        entities=event.before,
        relationships=event.relationships,
        vectors=event.vectors,
    )
    assert event_from_json(event_to_json(undo)) == undo
    assert json.loads(event_to_json(undo))["kind"] == "merge_undone"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"merged_ids": ()}, "must not be empty"),
        ({"merged_ids": (B.id, B.id), "before": (A, B)}, "repeats"),
        ({"merged_ids": (A.id,), "before": (A,)}, "canonical id"),
        ({"before": (A,)}, "exactly once"),
        ({"before": (A, B, B)}, "exactly once"),
        ({"reason": "  "}, "reason"),
        ({"score": 1.5}, "less than or equal"),
        ({"occurred_at": datetime(2024, 5, 6)}, "timezone-aware"),
        ({"relationships": (make_relationship(make_entity(tenant_id=OTHER_TENANT), C),)}, "tenant"),
        (
            {"vectors": (VectorRecord(entity_id=B.id, tenant_id=OTHER_TENANT, vector=[1.0]),)},
            "the vector of entity",
        ),
    ],
)
def test_a_merge_that_cannot_be_undone_exactly_is_refused(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        merged(**overrides)


def test_an_undo_of_nothing_or_of_another_tenant_is_refused() -> None:
    fields: dict[str, object] = {
        "event_id": UUID(int=101),
        "tenant_id": TENANT,
        "occurred_at": WHEN,
        "merge_event_id": UUID(int=100),
        "canonical_id": A.id,
        "merged_ids": (B.id,),
        "entities": (A, B),
    }
    with pytest.raises(ValidationError, match="must not be empty"):
        MergeUndone(**{**fields, "merged_ids": ()})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="tenant"):
        MergeUndone(**{**fields, "entities": (make_entity(tenant_id=OTHER_TENANT),)})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="timezone-aware"):
        MergeUndone(**{**fields, "occurred_at": datetime(2024, 5, 6)})  # type: ignore[arg-type]
