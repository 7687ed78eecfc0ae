"""A typed, directed edge between two entities of one tenant."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redstring.domain.entity import ExtractionMethod
from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId  # noqa: TC001
from redstring.domain.json_safety import check_json, check_name, check_text


class Relationship(BaseModel):
    """`source_entity_id --relationship_type--> target_entity_id`, within one tenant.

    Immutable. Both endpoints must exist in the same tenant when the
    relationship is stored; a store refuses a dangling endpoint with
    `MissingEntityError`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RelationshipId
    tenant_id: TenantId
    source_entity_id: EntityId
    target_entity_id: EntityId
    relationship_type: str
    description: str | None = None
    source_id: SourceId | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    extraction_method: ExtractionMethod = ExtractionMethod.LLM
    model: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, allow_inf_nan=False)

    @field_validator("relationship_type")
    @classmethod
    def _type_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(f"relationship_type must not be blank: {value!r}")
        return check_name(value, argument="relationship_type")

    @field_validator("description", "source_id", "model")
    @classmethod
    def _text_is_storable(cls, value: str | None) -> str | None:
        return None if value is None else check_text(value, field="text field")

    @field_validator("properties")
    @classmethod
    def _properties_are_storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_json(value, field="properties")
