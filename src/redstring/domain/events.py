"""The facts `build_graph` records, as immutable, versioned pydantic models.

An event carries a model's output, never a request for it, so projecting one
makes no model call. Each event names its `kind` (the discriminator of
`Event`) and its schema `version`: both are a stored format, pinned by tests.
See [ADR 0001](../adr/0001-stores-are-projections-of-an-event-log.md).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal, Self
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

from redstring.domain.chunk import Chunk, Mention  # noqa: TC001 - pydantic needs them at runtime
from redstring.domain.entity import Entity  # noqa: TC001 - pydantic needs it at runtime
from redstring.domain.ids import (  # noqa: TC001 - pydantic needs them
    ChunkId,
    EntityId,
    SourceId,
    TenantId,
)
from redstring.domain.json_safety import check_filled, check_text
from redstring.domain.relationship import Relationship  # noqa: TC001 - pydantic needs it
from redstring.domain.vector import VectorRecord


def _utc(value: datetime) -> datetime:
    if value.utcoffset() is None:
        raise ValueError(f"occurred_at must be timezone-aware, got naive {value.isoformat()}")
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"occurred_at {value.isoformat()} has no UTC equivalent") from exc


class _Event(BaseModel):
    """What every event shares: frozen, no unknown fields, `occurred_at` in UTC, no blank text.

    A subclass pins `kind` and `version` as literals and declares
    `occurred_at` after its own leading fields, so each kind keeps its
    field order on the wire.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    version: int
    event_id: UUID
    tenant_id: TenantId

    @field_validator("occurred_at", check_fields=False)
    @classmethod
    def _occurred_at_is_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @field_validator("source_id", "domain", "model", "reason", check_fields=False)
    @classmethod
    def _text_not_blank(cls, value: str, info: ValidationInfo) -> str:
        field = info.field_name or "text field"
        return check_text(check_filled(value, field=field), field=field)


class DocumentExtracted(_Event):
    """The entities and relationships extracted from one document for one tenant.

    Every entity and relationship belongs to `tenant_id`, and every
    relationship joins two of the event's own entities, so projecting the
    event can never meet a dangling endpoint. `occurred_at` must be
    timezone-aware and is stored in UTC.

    Raises:
        ValueError: a rule above is broken; the message names the offending id.
    """

    kind: Literal["document_extracted"] = "document_extracted"
    version: Literal[1] = 1
    source_id: SourceId
    occurred_at: datetime
    domain: str
    model: str
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]

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


class _VectorsEmbedded(_Event):
    """What `EntitiesEmbedded` and `PassagesEmbedded` share: records of one tenant and dimension.

    A record of another tenant or dimension, or one no vector store could
    hold (a NaN, an infinite or an all-zero vector), is refused; the message
    names the record's `_owner`.
    """

    _owner: ClassVar[str]
    occurred_at: datetime
    model: str
    dimension: int = Field(ge=1)
    records: tuple[VectorRecord, ...]

    @model_validator(mode="after")
    def _one_tenant_and_one_dimension(self) -> Self:
        for record in self.records:
            name = f"record for {self._owner} {record.entity_id}"
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


class EntitiesEmbedded(_VectorsEmbedded):
    """Vectors an embedding model computed for entities of one tenant.

    Every record belongs to `tenant_id` and has `dimension` finite components,
    not all zero: a record no vector store could hold is refused here, so
    the log never holds an event that cannot be projected. `occurred_at` must
    be timezone-aware and is stored in UTC.

    Raises:
        ValueError: a rule above is broken; the message names the entity id.
    """

    kind: Literal["entities_embedded"] = "entities_embedded"
    version: Literal[1] = 1
    _owner: ClassVar[str] = "entity"


def _check_tenant(
    tenant: TenantId, items: tuple[Entity | Relationship | VectorRecord, ...]
) -> None:
    for item in items:
        if item.tenant_id != tenant:
            if isinstance(item, VectorRecord):
                name = f"the vector of entity {item.entity_id}"
            else:
                name = f"{type(item).__name__.lower()} {item.id}"
            raise ValueError(
                f"{name} belongs to tenant {item.tenant_id}, not the event's tenant {tenant}"
            )


class EntitiesMerged(_Event):
    """Entities found to be one thing, folded into `canonical`, with what undoing needs.

    `canonical` is the surviving entity as it is after the merge (absorbed
    names in `properties["aliases"]`); `merged_ids` are absorbed into it.
    `before` holds the canonical and every merged entity as they were,
    `relationships` every relationship that touched a merged entity as it
    was, and `vectors` the merged entities' vectors: enough to restore all
    of it exactly. `score` is the pass's score (`None` for an explicit merge).

    Raises:
        ValueError: `merged_ids` is empty, repeats an id or holds the
            canonical's; `before` is not exactly the canonical and the merged
            entities; or anything belongs to another tenant.
    """

    kind: Literal["entities_merged"] = "entities_merged"
    version: Literal[1] = 1
    occurred_at: datetime
    canonical: Entity
    merged_ids: tuple[EntityId, ...]
    score: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    reason: str
    before: tuple[Entity, ...]
    relationships: tuple[Relationship, ...] = ()
    vectors: tuple[VectorRecord, ...] = ()

    @property
    def canonical_id(self) -> EntityId:
        """The id of the entity the others were merged into."""
        return self.canonical.id

    @model_validator(mode="after")
    def _a_whole_merge_of_one_tenant(self) -> Self:
        if not self.merged_ids:
            raise ValueError("merged_ids must not be empty")
        if len(set(self.merged_ids)) != len(self.merged_ids):
            raise ValueError(f"merged_ids repeats an id: {[str(i) for i in self.merged_ids]}")
        if self.canonical.id in self.merged_ids:
            raise ValueError(f"merged_ids holds the canonical id {self.canonical.id}")
        expected = {self.canonical.id, *self.merged_ids}
        held = [entity.id for entity in self.before]
        if len(set(held)) != len(held) or set(held) != expected:
            raise ValueError("before must hold the canonical and each merged entity exactly once")
        _check_tenant(self.tenant_id, (self.canonical, *self.before))
        _check_tenant(self.tenant_id, self.relationships)
        _check_tenant(self.tenant_id, self.vectors)
        return self


class MergeUndone(_Event):
    """The merge `merge_event_id` undone: what it absorbed, restored as it was.

    Carries the merge's `before`, `relationships` and `vectors` as
    `entities`, `relationships` and `vectors`, so projecting it needs no
    other event.

    Raises:
        ValueError: `merged_ids` is empty, or anything belongs to another tenant.
    """

    kind: Literal["merge_undone"] = "merge_undone"
    version: Literal[1] = 1
    occurred_at: datetime
    merge_event_id: UUID
    canonical_id: EntityId
    merged_ids: tuple[EntityId, ...]
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...] = ()
    vectors: tuple[VectorRecord, ...] = ()

    @model_validator(mode="after")
    def _one_tenant(self) -> Self:
        if not self.merged_ids:
            raise ValueError("merged_ids must not be empty")
        _check_tenant(self.tenant_id, self.entities)
        _check_tenant(self.tenant_id, self.relationships)
        _check_tenant(self.tenant_id, self.vectors)
        return self


class EntityDeleted(_Event):
    """An entity removed from both channels: its graph node, its relationships and its vector.

    Projecting it deletes `entity_id` as `GraphWriter.delete_entity` and
    `VectorWriter.delete` do; an entity already gone stays gone, so applying
    it twice changes nothing. Replaying a log puts the delete after the
    writes it follows, so the entity stays deleted; a later event that
    writes the entity again (a re-extraction) brings it back.
    `merged_ids` are the ids merged into the entity when it was deleted:
    projecting the event deletes their vectors too, so a vector written for
    one after its merge goes with the entity (`()` in an event recorded
    before it was added, which reads as it always did).
    """

    kind: Literal["entity_deleted"] = "entity_deleted"
    version: Literal[1] = 1
    occurred_at: datetime
    entity_id: EntityId
    merged_ids: tuple[EntityId, ...] = ()


class DocumentChunked(_Event):
    """A document's passages and what they mention: all a chunk store holds of `source_id`.

    `chunks` are every chunk of the source, each of `tenant_id` and
    `source_id`, at least one; projecting the event replaces whatever the
    store held of the source. Each mention names a chunk of the event, in
    its tenant, with a span inside that chunk's text. `occurred_at` must be
    timezone-aware and is stored in UTC. See ADR 0074.

    Raises:
        ValueError: a rule above is broken; the message names the chunk.
    """

    kind: Literal["document_chunked"] = "document_chunked"
    version: Literal[1] = 1
    source_id: SourceId
    occurred_at: datetime
    chunks: tuple[Chunk, ...]
    mentions: tuple[Mention, ...] = ()

    @model_validator(mode="after")
    def _one_source_and_mentions_of_its_chunks(self) -> Self:
        if not self.chunks:
            raise ValueError(f"chunks must not be empty: source {self.source_id!r} has none")
        lengths: dict[ChunkId, int] = {}
        for chunk in self.chunks:
            if chunk.tenant_id != self.tenant_id or chunk.source_id != self.source_id:
                raise ValueError(
                    f"chunk {chunk.id} belongs to tenant {chunk.tenant_id}, source "
                    f"{chunk.source_id!r}, not the event's {self.tenant_id}, {self.source_id!r}"
                )
            if chunk.id in lengths:
                raise ValueError(f"chunk {chunk.id} comes twice")
            lengths[chunk.id] = len(chunk.text)
        for mention in self.mentions:
            length = lengths.get(mention.chunk_id)
            if mention.tenant_id != self.tenant_id or length is None:
                raise ValueError(
                    f"a mention of chunk {mention.chunk_id} in tenant {mention.tenant_id} "
                    "names no chunk of the event"
                )
            if mention.end is not None and mention.end > length:
                raise ValueError(
                    f"a mention of chunk {mention.chunk_id} ends at {mention.end}, "
                    f"past its {length} characters"
                )
        return self


class PassagesEmbedded(_VectorsEmbedded):
    """Vectors an embedding model computed for chunks of one tenant.

    Each record's `entity_id` holds the id of the chunk it embeds (a
    `VectorRecord` keys a vector by one UUID), so these vectors go to a
    vector store of their own, never the entities'. Checked as
    `EntitiesEmbedded` is. See ADR 0074.

    Raises:
        ValueError: a record of another tenant or dimension, or one no
            vector store could hold; the message names the chunk.
    """

    kind: Literal["passages_embedded"] = "passages_embedded"
    version: Literal[1] = 1
    _owner: ClassVar[str] = "chunk"


class DocumentDeleted(_Event):
    """A source document removed: its chunks, their mentions and their passage vectors.

    `chunk_ids` are the chunks the source held when it was deleted, so a
    passage-vector projection deletes their vectors without reading a chunk
    store. Applying it twice changes nothing. See ADR 0074.
    """

    kind: Literal["document_deleted"] = "document_deleted"
    version: Literal[1] = 1
    occurred_at: datetime
    source_id: SourceId
    chunk_ids: tuple[ChunkId, ...] = ()


class TenantDeleted(_Event):
    """A whole tenant removed: its entities, relationships, merges, vectors and passages.

    Projecting it purges `tenant_id` from each store as its `delete_by_tenant`
    does; the log keeps the tenant's earlier events, so a replay writes them
    and then purges them again, and only events after this one bring the
    tenant back. Applying it twice changes nothing. See ADR 0106.
    """

    kind: Literal["tenant_deleted"] = "tenant_deleted"
    version: Literal[1] = 1
    occurred_at: datetime


#: The kinds of event, each a model.
_EVENT_TYPES = (
    DocumentExtracted
    | EntitiesEmbedded
    | EntitiesMerged
    | MergeUndone
    | EntityDeleted
    | DocumentChunked
    | PassagesEmbedded
    | DocumentDeleted
    | TenantDeleted
)

#: Any event, discriminated on `kind`.
type Event = Annotated[_EVENT_TYPES, Field(discriminator="kind")]

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def event_to_json(event: Event) -> str:
    """The event as JSON text, the stored format that `event_from_json` reads.

    Raises:
        ValueError: `event` is not an event.
    """
    if not isinstance(event, _EVENT_TYPES):
        raise ValueError(f"event must be an event, got {type(event).__name__} {event!r:.80}")
    return event.model_dump_json()


def event_from_json(text: str) -> Event:
    """Parse and validate an event written by `event_to_json`.

    The round trip is exact: `event_from_json(event_to_json(e)) == e`.

    Raises:
        ValueError: the text is not a valid event of a known kind and version.
    """
    return _EVENT.validate_json(text)
