"""Events: validation at the field, and an exact round trip through the stored format."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from redstring.domain.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    Event,
    event_from_json,
    event_to_json,
)
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vector import VectorRecord
from redstring.testing.event_log import (
    OCCURRED_AT,
    make_document_extracted,
    make_entities_embedded,
)
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from tests.unit.domain.event_strategies import any_vectors, events

FIXED = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def record(n: int, vector: list[float], tenant_id: TenantId = TENANT) -> VectorRecord:
    return VectorRecord(entity_id=EntityId(UUID(int=n)), tenant_id=tenant_id, vector=vector)


# -- the stored format ---------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(event=events(any_vectors))
@example(event=make_document_extracted())
@example(event=make_entities_embedded())
@example(event=make_entities_embedded([record(1, [1e308, 1e308, -0.0, 5e-324])]))
def test_an_event_survives_its_json_exactly(event: Event) -> None:
    text = event_to_json(event)
    parsed = event_from_json(text)
    assert parsed == event
    assert type(parsed) is type(event)


def test_the_wire_format_of_each_kind_is_pinned() -> None:
    extracted = make_document_extracted(
        event_id=UUID(int=7), occurred_at=FIXED, model="m", source_id="doc-1"
    )
    assert json.loads(event_to_json(extracted)) == {
        "kind": "document_extracted",
        "version": 1,
        "event_id": "00000000-0000-0000-0000-000000000007",
        "tenant_id": "00000000-0000-4000-8000-000000000001",
        "source_id": "doc-1",
        "occurred_at": "2024-05-06T07:08:09Z",
        "domain": "general",
        "model": "m",
        "entities": [],
        "relationships": [],
    }
    embedded = make_entities_embedded(
        [record(1, [0.5, -1.0])], event_id=UUID(int=8), occurred_at=FIXED, model="m", dimension=2
    )
    assert json.loads(event_to_json(embedded)) == {
        "kind": "entities_embedded",
        "version": 1,
        "event_id": "00000000-0000-0000-0000-000000000008",
        "tenant_id": "00000000-0000-4000-8000-000000000001",
        "occurred_at": "2024-05-06T07:08:09Z",
        "model": "m",
        "dimension": 2,
        "records": [
            {
                "entity_id": "00000000-0000-0000-0000-000000000001",
                "tenant_id": "00000000-0000-4000-8000-000000000001",
                "vector": [0.5, -1.0],
                "metadata": {},
            }
        ],
    }


@pytest.mark.parametrize(
    ("change", "match"),
    [
        pytest.param({"kind": "document_forgotten"}, "kind", id="unknown-kind"),
        pytest.param({"version": 2}, "version", id="unknown-version"),
        pytest.param({"surprise": 1}, "surprise", id="extra-field"),
    ],
)
def test_json_of_an_unknown_kind_version_or_field_is_refused(
    change: dict[str, object], match: str
) -> None:
    stored = json.loads(event_to_json(make_document_extracted()))
    with pytest.raises(ValueError, match=match):
        event_from_json(json.dumps({**stored, **change}))


def test_an_event_is_frozen() -> None:
    event = make_document_extracted()
    with pytest.raises(ValidationError):
        event.model = "other"  # type: ignore[misc]


# -- occurred_at ---------------------------------------------------------------


@pytest.mark.parametrize("factory", [make_document_extracted, make_entities_embedded])
def test_a_naive_occurred_at_is_refused(factory: object) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        factory(occurred_at=datetime(2024, 5, 6, 7, 8, 9))  # type: ignore[operator]


@pytest.mark.parametrize(
    "edge",
    [
        pytest.param(datetime.min.replace(tzinfo=timezone(timedelta(hours=1))), id="min-east"),
        pytest.param(datetime.max.replace(tzinfo=timezone(-timedelta(hours=1))), id="max-west"),
    ],
)
def test_an_occurred_at_with_no_utc_equivalent_is_refused(edge: datetime) -> None:
    with pytest.raises(ValueError, match="UTC"):
        make_document_extracted(occurred_at=edge)


def test_occurred_at_is_kept_as_the_same_instant_in_utc() -> None:
    local = datetime(2024, 5, 6, 12, 38, 9, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    event = make_document_extracted(occurred_at=local)
    assert event.occurred_at == FIXED
    assert event.occurred_at.tzinfo is UTC


# -- DocumentExtracted -----------------------------------------------------------


def test_an_entity_of_another_tenant_is_refused_by_its_id() -> None:
    mine = make_entity()
    theirs = make_entity(tenant_id=OTHER_TENANT)
    with pytest.raises(ValueError, match=str(theirs.id)):
        make_document_extracted([mine, theirs])


def test_a_relationship_of_another_tenant_is_refused_by_its_id() -> None:
    a, b = make_entity(), make_entity()
    crossing = make_relationship(a, b, tenant_id=OTHER_TENANT)
    with pytest.raises(ValueError, match=str(crossing.id)):
        make_document_extracted([a, b], [crossing])


@pytest.mark.parametrize("end", ["source", "target"])
def test_a_relationship_to_an_entity_outside_the_event_is_refused(end: str) -> None:
    inside, outside = make_entity(), make_entity()
    ends = (outside, inside) if end == "source" else (inside, outside)
    good = make_relationship(inside, inside)
    dangling = make_relationship(*ends)
    with pytest.raises(ValueError, match=str(outside.id)):
        make_document_extracted([inside], [good, dangling])


def test_the_same_entity_id_in_another_tenant_is_not_an_endpoint() -> None:
    mine = make_entity(id=EntityId(UUID(int=1)))
    theirs = make_entity(id=EntityId(UUID(int=1)), tenant_id=OTHER_TENANT)
    with pytest.raises(ValueError, match=str(OTHER_TENANT)):
        make_document_extracted([theirs], [make_relationship(theirs, theirs)])
    event = make_document_extracted([mine], [make_relationship(mine, mine)])
    assert event.relationships[0].source_entity_id == mine.id


@pytest.mark.parametrize("field", ["source_id", "domain", "model"])
@pytest.mark.parametrize("value", ["", "  ", "bad\x00text"])
def test_a_blank_or_unstorable_name_is_refused(field: str, value: str) -> None:
    with pytest.raises(ValueError, match=field):
        make_document_extracted((), (), **{field: value})


# -- EntitiesEmbedded ----------------------------------------------------------


def test_a_record_of_another_tenant_is_refused_by_its_entity_id() -> None:
    with pytest.raises(ValueError, match=str(EntityId(UUID(int=2)))):
        make_entities_embedded(
            [record(1, [1.0, 0.0, 0.0, 0.0]), record(2, [1.0, 0.0, 0.0, 0.0], OTHER_TENANT)]
        )


@pytest.mark.parametrize("length", [3, 5])
def test_a_record_of_another_length_is_refused_naming_both_lengths(length: int) -> None:
    with pytest.raises(ValueError, match=rf"{length} components, not 4"):
        make_entities_embedded([record(1, [1.0] * 4), record(2, [1.0] * length)])


@pytest.mark.parametrize(
    ("vector", "match"),
    [
        pytest.param([float("nan"), 1.0, 1.0, 1.0], "NaN", id="nan"),
        pytest.param([1.0, 1.0, 1.0, float("-inf")], "infinite", id="inf"),
        pytest.param([float("inf"), float("-inf"), 1.0, 1.0], "infinite", id="inf-cancels"),
        pytest.param([0.0, -0.0, 0.0, 0.0], "zeros", id="zero"),
    ],
)
def test_a_vector_no_store_could_hold_is_refused(vector: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_entities_embedded([record(1, vector)])


def test_huge_finite_components_are_accepted() -> None:
    event = make_entities_embedded([record(1, [1e308, 1e308, 1e308, 1.0])])
    assert event.records[0].vector[0] == 1e308


@pytest.mark.parametrize("dimension", [0, -1])
def test_a_dimension_below_one_is_refused(dimension: int) -> None:
    with pytest.raises(ValueError, match="dimension"):
        make_entities_embedded(dimension=dimension)


def test_a_blank_model_is_refused() -> None:
    with pytest.raises(ValueError, match="model"):
        make_entities_embedded(model=" ")


def test_the_defaults_name_the_kind_and_the_first_version() -> None:
    assert (make_document_extracted().kind, make_document_extracted().version) == (
        "document_extracted",
        1,
    )
    embedded = make_entities_embedded(occurred_at=OCCURRED_AT)
    assert (embedded.kind, embedded.version) == ("entities_embedded", 1)
    assert isinstance(embedded, EntitiesEmbedded)
    assert not isinstance(embedded, DocumentExtracted)


@given(tenant=st.sampled_from([TENANT, OTHER_TENANT]))
def test_an_event_with_nothing_in_it_is_valid_in_any_tenant(tenant: TenantId) -> None:
    assert make_document_extracted(tenant_id=tenant).entities == ()
    assert make_entities_embedded(tenant_id=tenant).records == ()
