"""The entity: one thing the graph knows about, within one tenant."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from redstring.domain.ids import EntityId, SourceId, TenantId  # noqa: TC001 - pydantic needs them
from redstring.domain.json_safety import (
    STORABLE_TEXT,
    check_name,
    check_text,
    filled_name,
    storable_json,
)
from redstring.domain.keys import keys_of
from redstring.domain.normalization import normalize_name


class ExtractionMethod(StrEnum):
    """How an entity came to be in the graph. The values are a wire format."""

    LLM = "llm"
    PATTERN = "pattern"
    MANUAL = "manual"
    HYBRID = "hybrid"


class Entity(BaseModel):
    """A named thing of some type, owned by one tenant.

    Immutable: change one with `model_copy(update=...)`, which does not
    validate the update; every store re-checks what it is given
    (`redstring.domain.validation.check_entities`). `name` is stored as
    given and must not be blank; `normalized_name` defaults to
    `normalize_name(name)` but may carry an extractor's own form. Every string
    reachable in a field must be storable (no NUL, no unpaired surrogate).
    `name`, `normalized_name` and `entity_type` are at most `MAX_NAME_LENGTH`
    characters, and `properties` is held to the payload limits of
    `redstring.domain.limits`. `confidence` is on `0..1` inclusive.
    `blocking_keys` given (an extractor's own, or `None` for "not computed")
    are kept as given; left out, they are computed as `blocking_keys_for` does,
    so an entity built by hand is blocked like an extracted one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: EntityId
    tenant_id: TenantId
    name: Annotated[str, filled_name("name")]
    normalized_name: str
    entity_type: Annotated[str, filled_name("entity_type")]
    description: Annotated[str | None, STORABLE_TEXT] = None
    source_id: Annotated[SourceId | None, STORABLE_TEXT] = None
    properties: Annotated[dict[str, Any], storable_json("properties")] = Field(default_factory=dict)
    extraction_method: ExtractionMethod
    model: Annotated[str | None, STORABLE_TEXT] = None
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    blocking_keys: frozenset[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_normalized_name(cls, data: object) -> object:
        if (
            isinstance(data, dict)
            and "normalized_name" not in data
            and isinstance(data.get("name"), str)
        ):
            return {**data, "normalized_name": normalize_name(data["name"])}
        return data

    @model_validator(mode="after")
    def _default_blocking_keys(self) -> Self:
        if "blocking_keys" not in self.model_fields_set:
            # Frozen: the computed keys are set the way pydantic sets a field.
            object.__setattr__(self, "blocking_keys", keys_of(self.name, self.entity_type))
            self.model_fields_set.add("blocking_keys")
        return self

    @field_validator("normalized_name")
    @classmethod
    def _normalized_name_is_bounded(cls, value: str) -> str:
        return check_name(value, argument="normalized_name")

    @field_serializer("blocking_keys", when_used="json")
    def _keys_in_order(self, value: frozenset[str] | None) -> list[str] | None:
        # A frozenset iterates in hash order, which differs between processes;
        # sorted, the same entity always serializes to the same bytes.
        return None if value is None else sorted(value)

    @field_validator("blocking_keys")
    @classmethod
    def _keys_are_storable(cls, value: frozenset[str] | None) -> frozenset[str] | None:
        if value is not None:
            for key in value:
                check_text(key, field="blocking_keys")
        return value
