"""The facts `build_graph` records, as immutable, versioned pydantic models.

An event carries a model's output, never a request for it, so projecting one
makes no model call. Each event names its `kind` (the discriminator of
`Event`) and its schema `version`: both are a stored format, pinned by tests.
See [ADR 0001](../adr/0001-stores-are-projections-of-an-event-log.md).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Literal, Self
from uuid import UUID  # noqa: TC003 - pydantic needs it at runtime

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from redstring.domain.entity import Entity  # noqa: TC001 - pydantic needs it at runtime
from redstring.domain.ids import EntityId, SourceId, TenantId  # noqa: TC001 - pydantic needs them
from redstring.domain.json_safety import check_text
from redstring.domain.relationship import Relationship  # noqa: TC001 - pydantic needs it
from redstring.domain.vector import VectorRecord  # noqa: TC001 - pydantic needs it


def _utc(value: datetime) -> datetime:
    if value.utcoffset() is None:
        raise ValueError(f"occurred_at must be timezone-aware, got naive {value.isoformat()}")
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"occurred_at {value.isoformat()} has no UTC equivalent") from exc


def _not_blank(value: str, *, field: str) -> str:
    if not value.strip():
        raise ValueError(f"{field} must not be blank: {value!r}")
    return check_text(value, field=field)


class DocumentExtracted(BaseModel):
    """The entities and relationships extracted from one document for one tenant.

    Every entity and relationship belongs to `tenant_id`, and every
    relationship joins two of the event's own entities, so projecting the
    event can never meet a dangling endpoint. `occurred_at` must be
    timezone-aware and is stored in UTC.

    Raises:
        ValueError: a rule above is broken; the message names the offending id.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["document_extracted"] = "document_extracted"
    version: Literal[1] = 1
    event_id: UUID
    tenant_id: TenantId
    source_id: SourceId
    occurred_at: datetime
    domain: str
    model: str
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]

    @field_validator("occurred_at")
    @classmethod
    def _occurred_at_is_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @field_validator("source_id", "domain", "model")
    @classmethod
    def _text_not_blank(cls, value: str, info: ValidationInfo) -> str:
        return _not_blank(value, field=info.field_name or "text field")

    @model_validator(mode="after")
    def _one_tenant_and_no_dangling_endpoint(self) -> Self:
        entity_ids: set[EntityId] = set()
        for entity in self.entities:
            if entity.tenant_id != self.tenant_id:
                raise ValueError(
                    f"entity {entity.id} belongs to tenant {entity.tenant_id}, "
                    f"not the event's tenant {self.tenant_id}"
                )
            entity_ids.add(entity.id)
        for relationship in self.relationships:
            if relationship.tenant_id != self.tenant_id:
                raise ValueError(
                    f"relationship {relationship.id} belongs to tenant "
                    f"{relationship.tenant_id}, not the event's tenant {self.tenant_id}"
                )
            for endpoint in (relationship.source_entity_id, relationship.target_entity_id):
                if endpoint not in entity_ids:
                    raise ValueError(
                        f"relationship {relationship.id} has endpoint {endpoint}, "
                        "which is not among the event's entities"
                    )
        return self


class EntitiesEmbedded(BaseModel):
    """Vectors an embedding model computed for entities of one tenant.

    Every record belongs to `tenant_id` and has `dimension` finite components,
    not all zero: a record no vector store could hold is refused here, so
    the log never holds an event that cannot be projected. `occurred_at` must
    be timezone-aware and is stored in UTC.

    Raises:
        ValueError: a rule above is broken; the message names the entity id.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["entities_embedded"] = "entities_embedded"
    version: Literal[1] = 1
    event_id: UUID
    tenant_id: TenantId
    occurred_at: datetime
    model: str
    dimension: int = Field(ge=1)
    records: tuple[VectorRecord, ...]

    @field_validator("occurred_at")
    @classmethod
    def _occurred_at_is_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @field_validator("model")
    @classmethod
    def _model_not_blank(cls, value: str) -> str:
        return _not_blank(value, field="model")

    @model_validator(mode="after")
    def _one_tenant_and_one_dimension(self) -> Self:
        for record in self.records:
            name = f"record for entity {record.entity_id}"
            if record.tenant_id != self.tenant_id:
                raise ValueError(
                    f"{name} belongs to tenant {record.tenant_id}, "
                    f"not the event's tenant {self.tenant_id}"
                )
            if len(record.vector) != self.dimension:
                raise ValueError(
                    f"{name} has {len(record.vector)} components, not {self.dimension}"
                )
            # `sum` is the fast check; it also overflows on huge finite components,
            # which the exact check below then lets through.
            if not math.isfinite(sum(record.vector)) and not all(map(math.isfinite, record.vector)):
                raise ValueError(f"{name} has a NaN or infinite component")
            if not any(record.vector):
                raise ValueError(f"{name} is all zeros")
        return self


#: Any event, discriminated on `kind`.
type Event = Annotated[DocumentExtracted | EntitiesEmbedded, Field(discriminator="kind")]

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def event_to_json(event: Event) -> str:
    """The event as JSON text, the stored format that `event_from_json` reads.

    Raises:
        ValueError: `event` is not an event.
    """
    if not isinstance(event, DocumentExtracted | EntitiesEmbedded):
        raise ValueError(f"event must be an event, got {type(event).__name__} {event!r:.80}")
    return event.model_dump_json()


def event_from_json(text: str) -> Event:
    """Parse and validate an event written by `event_to_json`.

    The round trip is exact: `event_from_json(event_to_json(e)) == e`.

    Raises:
        ValueError: the text is not a valid event of a known kind and version.
    """
    return _EVENT.validate_json(text)
