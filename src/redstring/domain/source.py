"""A document handed to redstring for extraction."""

from __future__ import annotations

from datetime import datetime  # noqa: TC003 - pydantic needs it at runtime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redstring.domain.ids import SourceId  # noqa: TC001 - pydantic needs it at runtime
from redstring.domain.json_safety import check_json, check_text


class SourceDocument(BaseModel):
    """A document: an id, its text, and what is known about where it came from.

    `text` must not be blank. `published_at`, when given, must be
    timezone-aware: a naive timestamp is ambiguous by up to a day.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: SourceId
    text: str
    uri: str | None = None
    title: str | None = None
    published_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(f"id must not be blank: {value!r}")
        return check_text(value, field="id")

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text must not be blank")
        return check_text(value, field="text")

    @field_validator("uri", "title")
    @classmethod
    def _text_is_storable(cls, value: str | None) -> str | None:
        return None if value is None else check_text(value, field="text field")

    @field_validator("published_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError(f"published_at must be timezone-aware, got naive {value.isoformat()}")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_is_storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_json(value, field="metadata")
