"""A document handed to redstring for extraction."""

from __future__ import annotations

from datetime import datetime  # noqa: TC003 - pydantic needs it at runtime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redstring.domain.ids import SourceId  # noqa: TC001 - pydantic needs it at runtime
from redstring.domain.json_safety import STORABLE_TEXT, filled_text, storable_json


class SourceDocument(BaseModel):
    """A document: an id, its text, and what is known about where it came from.

    `text` must not be blank. `published_at`, when given, must be
    timezone-aware: a naive timestamp is ambiguous by up to a day.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Annotated[SourceId, filled_text("id")]
    text: Annotated[str, filled_text("text")]
    uri: Annotated[str | None, STORABLE_TEXT] = None
    title: Annotated[str | None, STORABLE_TEXT] = None
    published_at: datetime | None = None
    metadata: Annotated[dict[str, Any], storable_json("metadata")] = Field(default_factory=dict)

    @field_validator("published_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError(f"published_at must be timezone-aware, got naive {value.isoformat()}")
        return value
