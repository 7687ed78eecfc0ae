"""The schema a language model fills when it extracts from one chunk of text.

Deliberately lenient: a blank name, a NUL or a confidence of 7 does not make
the answer malformed. Such a row is dropped and counted when the answer is
mapped onto `Entity` and `Relationship`, so one bad row never costs the rest
of the chunk. Field *types* are still enforced: a string where a list belongs
makes the whole answer malformed. Unknown keys are ignored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ExtractedEntity(BaseModel):
    """One entity as the model reported it: a name and a free-form type."""

    model_config = ConfigDict(frozen=True)

    name: str
    entity_type: str
    description: str | None = None
    confidence: float = 1.0
    properties: dict[str, Any] = Field(default_factory=dict)


class ExtractedRelationship(BaseModel):
    """One directed relationship, naming its ends by entity name."""

    model_config = ConfigDict(frozen=True)

    source_name: str
    target_name: str
    relationship_type: str
    description: str | None = None
    confidence: float = 1.0


class Extraction(BaseModel):
    """Everything the model found in one chunk."""

    model_config = ConfigDict(frozen=True)

    entities: list[ExtractedEntity] = Field(default_factory=list)
    relationships: list[ExtractedRelationship] = Field(default_factory=list)
