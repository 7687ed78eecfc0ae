"""A typed, directed edge between two entities of one tenant."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from redstring.domain.entity import ExtractionMethod
from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId  # noqa: TC001
from redstring.domain.json_safety import STORABLE_TEXT, filled_name, storable_json


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
    relationship_type: Annotated[str, filled_name("relationship_type")]
    description: Annotated[str | None, STORABLE_TEXT] = None
    source_id: Annotated[SourceId | None, STORABLE_TEXT] = None
    properties: Annotated[dict[str, Any], storable_json("properties")] = Field(default_factory=dict)
    extraction_method: ExtractionMethod = ExtractionMethod.LLM
    model: Annotated[str | None, STORABLE_TEXT] = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, allow_inf_nan=False)
