"""Passages of source documents, what they mention, and how a search scores them.

A `Chunk` is a span of one source document's text, kept per tenant so that
it can be read back and searched (BM25, `redstring.domain.bm25`). A
`Mention` records that a chunk mentions an entity or a relationship: the
provenance an entity or an edge carries back to the text it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Self
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from redstring.domain.ids import (
    ChunkId,
    EntityId,
    RelationshipId,
    SourceId,
    TenantId,
)
from redstring.domain.json_safety import (
    check_json,
    check_text,
    copy_json,
    is_plain_json,
    is_storable_text,
    shown,
)

#: The longest chunk text, in characters.
MAX_CHUNK_LENGTH: Final = 100_000


def _check_source_id(value: object, *, argument: str) -> SourceId:
    if not isinstance(value, str):
        raise ValueError(f"{argument} must be a string, got {type(value).__name__} {shown(value)}")
    if not value.strip():
        raise ValueError(f"{argument} must not be blank: {shown(value)}")
    return SourceId(check_text(value, field=argument))


def _check_chunk_text(value: str, *, argument: str = "text") -> str:
    if not value.strip():
        raise ValueError(f"{argument} must not be blank: {shown(value)}")
    if len(value) > MAX_CHUNK_LENGTH:
        raise ValueError(
            f"{argument} is {len(value)} characters long; the limit is {MAX_CHUNK_LENGTH}: "
            f"{shown(value)}"
        )
    return check_text(value, field=argument)


def _check_span(start: object, end: object, *, length: int | None, argument: str) -> None:
    if not (type(start) is int and type(end) is int and 0 <= start < end):
        raise ValueError(f"{argument} must satisfy 0 <= start < end, got {start!r}..{end!r}")
    if length is not None and end - start != length:
        raise ValueError(
            f"{argument} spans {end - start} characters but the text has {length}: "
            f"end - start must be len(text)"
        )


class Chunk(BaseModel):
    """A passage of a source document: `text == source_text[start:end]`.

    `start` and `end` are offsets into the source document's text, in
    characters (Python string indices), so `end - start == len(text)` and
    `0 <= start < end`. `ordinal` is the chunk's position among its source's
    chunks (`0` first); a store reads a source's chunks back in `ordinal`
    order. `text` must not be blank and is at most `MAX_CHUNK_LENGTH`
    characters; every string reachable in a field must be storable (no NUL,
    no unpaired surrogate). Immutable; stores re-check what they are given
    (`check_chunks`), since `model_copy(update=...)` skips validation.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: ChunkId
    tenant_id: TenantId
    source_id: SourceId
    ordinal: int = Field(ge=0, strict=True)
    text: str
    start: int = Field(ge=0, strict=True)
    end: int = Field(ge=0, strict=True)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("source_id")
    @classmethod
    def _source_id_not_blank(cls, value: str) -> str:
        return _check_source_id(value, argument="source_id")

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        return _check_chunk_text(value)

    @field_validator("metadata")
    @classmethod
    def _metadata_is_storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_json(value, field="metadata")

    @model_validator(mode="after")
    def _span_matches_text(self) -> Self:
        _check_span(self.start, self.end, length=len(self.text), argument="start..end")
        return self


class Mention(BaseModel):
    """A chunk mentioning one entity or one relationship: provenance.

    Exactly one of `entity_id` and `relationship_id` is set. `start` and
    `end` locate the mention in the chunk's text (`chunk.text[start:end]`;
    add `chunk.start` for offsets into the source), with `0 <= start < end`;
    both are `None` when the chunk is known to say it but not where (a
    relationship read from a whole passage). A store refuses a mention whose
    chunk it does not hold (`MissingChunkError`) or whose span runs past the
    chunk's text (`ValueError`). A mention is a value: storing one twice
    keeps one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: TenantId
    chunk_id: ChunkId
    entity_id: EntityId | None = None
    relationship_id: RelationshipId | None = None
    start: int | None = Field(default=None, ge=0, strict=True)
    end: int | None = Field(default=None, ge=0, strict=True)

    @model_validator(mode="after")
    def _one_target_and_a_whole_span(self) -> Self:
        _check_mention_shape(self, argument="mention")
        return self


def _check_mention_shape(mention: Mention, *, argument: str) -> None:
    if (mention.entity_id is None) == (mention.relationship_id is None):
        raise ValueError(
            f"{argument} must name exactly one of entity_id and relationship_id, got "
            f"entity_id={mention.entity_id!r}, relationship_id={mention.relationship_id!r}"
        )
    target = mention.entity_id if mention.relationship_id is None else mention.relationship_id
    if not isinstance(target, UUID):
        raise ValueError(f"{argument} target must be a uuid.UUID, got {shown(target)}")
    if mention.start is None and mention.end is None:
        return
    _check_span(mention.start, mention.end, length=None, argument=f"{argument}.start..end")


class ScoredChunk(BaseModel):
    """A chunk a search found, with its BM25 score (higher is better, always `> 0`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk: Chunk
    score: float


def check_mention_span(mention: Mention, chunk: Chunk, *, argument: str = "mention") -> None:
    """Raise `ValueError` when the mention's span runs past `chunk`'s text."""
    if mention.end is not None and mention.end > len(chunk.text):
        raise ValueError(
            f"{argument} ends at {mention.end}, past the {len(chunk.text)} characters "
            f"of chunk {chunk.id}"
        )


def mention_order(mention: Mention) -> tuple[str, int, str, int, int]:
    """The order every store returns mentions in: chunk id, kind, target id, span.

    Ids compare as their strings, entity mentions before relationship
    mentions, a mention without a span before one with a span.
    """
    target: UUID | None = mention.entity_id
    kind = 0
    if target is None:
        kind, target = 1, mention.relationship_id
    start = -1 if mention.start is None else mention.start
    end = -1 if mention.end is None else mention.end
    return (str(mention.chunk_id), kind, str(target), start, end)


def _storable_chunk(chunk: object) -> bool:
    """Whether `chunk` passes every check of `check_chunks`, silently."""
    if type(chunk) is not Chunk:
        return False
    text, source = chunk.text, chunk.source_id
    return (
        type(source) is str
        and bool(source.strip())
        and isinstance(chunk.id, UUID)
        and isinstance(chunk.tenant_id, UUID)
        and type(chunk.ordinal) is int
        and chunk.ordinal >= 0
        and type(text) is str
        and 0 < len(text) <= MAX_CHUNK_LENGTH
        and not text.isspace()
        and type(chunk.start) is int
        and type(chunk.end) is int
        and 0 <= chunk.start < chunk.end
        and chunk.end - chunk.start == len(text)
        and type(chunk.metadata) is dict
        and (not chunk.metadata or is_plain_json(chunk.metadata))
        and is_storable_text(source)
        and is_storable_text(text)
    )


def check_chunks(value: object, *, argument: str = "chunks") -> Sequence[Chunk]:
    """`value`, once it is a sequence of chunks every store can write and read back.

    Also refuses two chunks with one `(tenant_id, id)`, and two chunks of one
    source with one `ordinal`: a batch says what each source holds, once.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(
            f"{argument} must be a sequence, got {type(value).__name__} {shown(value)}"
        )
    ids: set[tuple[UUID, UUID]] = set()
    ordinals: set[tuple[UUID, str, int]] = set()
    for index, chunk in enumerate(value):
        at = f"{argument}[{index}]"
        if not _storable_chunk(chunk):
            _explain_chunk(chunk, argument=at)
        key = (chunk.tenant_id, chunk.id)
        if key in ids:
            raise ValueError(f"{at}.id {chunk.id} comes twice in tenant {chunk.tenant_id}")
        ids.add(key)
        place = (chunk.tenant_id, chunk.source_id, chunk.ordinal)
        if place in ordinals:
            raise ValueError(
                f"{at}.ordinal {chunk.ordinal} comes twice in source {chunk.source_id!r}"
            )
        ordinals.add(place)
    return value


def _explain_chunk(chunk: object, *, argument: str) -> None:
    """Raise the `ValueError` that says why `chunk` is not storable."""
    if not isinstance(chunk, Chunk):
        raise ValueError(f"{argument} is not a Chunk: {shown(chunk)}")
    for name in ("id", "tenant_id"):
        if not isinstance(getattr(chunk, name), UUID):
            raise ValueError(
                f"{argument}.{name} must be a uuid.UUID, got {shown(getattr(chunk, name))}"
            )
    _check_source_id(chunk.source_id, argument=f"{argument}.source_id")
    if type(chunk.ordinal) is not int or chunk.ordinal < 0:
        raise ValueError(
            f"{argument}.ordinal must be a non-negative integer, got {shown(chunk.ordinal)}"
        )
    if not isinstance(chunk.text, str):
        raise ValueError(f"{argument}.text must be a string, got {shown(chunk.text)}")
    _check_chunk_text(chunk.text, argument=f"{argument}.text")
    _check_span(chunk.start, chunk.end, length=len(chunk.text), argument=f"{argument}.start..end")
    if not isinstance(chunk.metadata, dict):
        raise ValueError(f"{argument}.metadata must be a dict, got {shown(chunk.metadata)}")
    check_json(chunk.metadata, field=f"{argument}.metadata")
    raise ValueError(f"{argument} is not storable: {shown(chunk)}")  # pragma: no cover


def check_mentions(value: object, *, argument: str = "mentions") -> Sequence[Mention]:
    """`value`, once it is a sequence of well-formed mentions (re-checked, like chunks)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(
            f"{argument} must be a sequence, got {type(value).__name__} {shown(value)}"
        )
    for index, mention in enumerate(value):
        at = f"{argument}[{index}]"
        if type(mention) is not Mention:
            raise ValueError(f"{at} is not a Mention: {shown(mention)}")
        for name in ("tenant_id", "chunk_id"):
            if not isinstance(getattr(mention, name), UUID):
                raise ValueError(
                    f"{at}.{name} must be a uuid.UUID, got {shown(getattr(mention, name))}"
                )
        _check_mention_shape(mention, argument=at)
    return value


_set_attribute: Final = object.__setattr__
_CHUNK_FIELDS: Final = frozenset(Chunk.model_fields)


def trusted_chunk(
    chunk_id: ChunkId,
    tenant_id: TenantId,
    source_id: SourceId,
    ordinal: int,
    text: str,
    start: int,
    end: int,
    metadata: dict[str, Any],
) -> Chunk:
    """A `Chunk` from values a store checked when it wrote them, without validating again.

    `metadata` is used as given (pass a copy). See ADR 0045 for why a store
    rebuilds what it wrote this way.
    """
    chunk = Chunk.__new__(Chunk)
    _set_attribute(
        chunk,
        "__dict__",
        {
            "id": chunk_id,
            "tenant_id": tenant_id,
            "source_id": source_id,
            "ordinal": ordinal,
            "text": text,
            "start": start,
            "end": end,
            "metadata": metadata,
        },
    )
    _set_attribute(chunk, "__pydantic_fields_set__", set(_CHUNK_FIELDS))
    _set_attribute(chunk, "__pydantic_extra__", None)
    _set_attribute(chunk, "__pydantic_private__", None)
    return chunk


def copy_chunk(chunk: Chunk) -> Chunk:
    """A copy of `chunk` sharing nothing mutable with it (its metadata is copied)."""
    return trusted_chunk(
        chunk.id,
        chunk.tenant_id,
        chunk.source_id,
        chunk.ordinal,
        chunk.text,
        chunk.start,
        chunk.end,
        copy_json(chunk.metadata) if chunk.metadata else {},
    )


def scored_chunk(chunk: Chunk, score: float) -> ScoredChunk:
    """A `ScoredChunk` of a checked chunk and score, without validating again."""
    return ScoredChunk.model_construct(chunk=chunk, score=score)
