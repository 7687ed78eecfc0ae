"""Hypothesis strategies for events, shared by the event and projection tests.

Ids come from small pools, so events in two tenants share entity ids and a
later event overwrites entities, relationships and vectors of an earlier one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

from hypothesis import strategies as st

from redstring.domain.events import EntityDeleted
from redstring.domain.ids import EntityId, RelationshipId, TenantId
from redstring.domain.vector import VectorRecord
from redstring.testing.event_log import make_document_extracted, make_entities_embedded
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from redstring.domain.entity import Entity
    from redstring.domain.events import DocumentExtracted, EntitiesEmbedded, Event

#: Every test vector has this many components.
DIMENSION = 4
#: Entity ids shared by every tenant, so collisions across tenants are routine.
ENTITY_IDS = [EntityId(UUID(int=n)) for n in range(1, 5)]
RELATIONSHIP_IDS = [RelationshipId(UUID(int=n)) for n in range(101, 104)]
TENANTS = [TENANT, OTHER_TENANT]
TYPES = ["person", "org"]

safe_text = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)
names = safe_text.filter(str.strip)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | safe_text,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(safe_text, children, max_size=3)
    ),
    max_leaves=6,
)
properties = st.dictionaries(safe_text, json_values, max_size=3)
#: A day inside `datetime`'s range, so every offset has a UTC equivalent.
timestamps = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
    ),
)
#: Small integers: exact at float32, so a vector reads back exactly as written.
small_vectors = st.lists(
    st.integers(min_value=-3, max_value=3).map(float), min_size=DIMENSION, max_size=DIMENSION
).filter(any)
#: Any finite floats, not all zero: what a JSON round trip must keep exactly.
any_vectors = st.lists(
    st.floats(allow_nan=False, allow_infinity=False), min_size=DIMENSION, max_size=DIMENSION
).filter(any)


@st.composite
def entities(draw: st.DrawFn, tenant_id: TenantId) -> Entity:
    """An entity of `tenant_id` with an id from the shared pool."""
    fields: dict[str, Any] = {
        "id": draw(st.sampled_from(ENTITY_IDS)),
        "tenant_id": tenant_id,
        "name": draw(names),
        "entity_type": draw(st.sampled_from(TYPES)),
        "properties": draw(properties),
        "description": draw(st.none() | safe_text),
        "confidence": draw(st.floats(min_value=0.0, max_value=1.0)),
    }
    return make_entity(**fields)


@st.composite
def documents_extracted(draw: st.DrawFn) -> DocumentExtracted:
    """A valid `DocumentExtracted`: relationships join only its own entities."""
    tenant_id = draw(st.sampled_from(TENANTS))
    held = draw(st.lists(entities(tenant_id), max_size=4))
    relationships = []
    if held:
        for relationship_id in draw(st.lists(st.sampled_from(RELATIONSHIP_IDS), max_size=3)):
            source, target = draw(st.sampled_from(held)), draw(st.sampled_from(held))
            relationships.append(
                make_relationship(
                    source,
                    target,
                    id=relationship_id,
                    relationship_type=draw(st.sampled_from(["knows", "funds"])),
                    properties=draw(properties),
                )
            )
    return make_document_extracted(
        held,
        relationships,
        tenant_id=tenant_id,
        occurred_at=draw(timestamps),
        source_id=draw(names),
    )


@st.composite
def entities_embedded(
    draw: st.DrawFn, vectors: st.SearchStrategy[list[float]] = small_vectors
) -> EntitiesEmbedded:
    """A valid `EntitiesEmbedded` of `DIMENSION`, ids from the shared pool."""
    tenant_id = draw(st.sampled_from(TENANTS))
    records = [
        VectorRecord(
            entity_id=draw(st.sampled_from(ENTITY_IDS)),
            tenant_id=tenant_id,
            vector=draw(vectors),
            metadata={"entity_type": draw(st.sampled_from(TYPES))},
        )
        for _ in range(draw(st.integers(min_value=0, max_value=4)))
    ]
    return make_entities_embedded(
        records, tenant_id=tenant_id, occurred_at=draw(timestamps), dimension=DIMENSION
    )


@st.composite
def entities_deleted(draw: st.DrawFn) -> EntityDeleted:
    """A delete of an id from the shared pool, held by the tenant or not."""
    return EntityDeleted(
        event_id=uuid4(),
        tenant_id=draw(st.sampled_from(TENANTS)),
        occurred_at=draw(timestamps),
        entity_id=draw(st.sampled_from(ENTITY_IDS)),
    )


def events(vectors: st.SearchStrategy[list[float]] = small_vectors) -> st.SearchStrategy[Event]:
    """An extraction, an embedding or a delete."""
    return st.one_of(documents_extracted(), entities_embedded(vectors), entities_deleted())
