"""The one place tests build domain objects: valid defaults, any field overridable."""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID, uuid4

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.chunk import Chunk
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.relationship import Relationship

#: The tenant every factory-built object belongs to unless told otherwise.
TENANT: Final = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
#: A second tenant, for tests that check nothing crosses tenants.
OTHER_TENANT: Final = TenantId(UUID("00000000-0000-4000-8000-000000000002"))


def make_entity(**overrides: Any) -> Entity:
    """A valid entity; `overrides` replace any field.

    `blocking_keys` are computed with `blocking_keys_for` from the final name
    and type unless passed explicitly (`None` included), in which case they
    are validated like any other field.
    """
    fields: dict[str, Any] = {
        "id": EntityId(uuid4()),
        "tenant_id": TENANT,
        "name": "Ada Lovelace",
        "entity_type": "person",
        "extraction_method": ExtractionMethod.MANUAL,
        "confidence": 1.0,
        **overrides,
    }
    entity = Entity(**fields)
    if "blocking_keys" in overrides:
        return entity
    return entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)})


def make_relationship(source: Entity, target: Entity, **overrides: Any) -> Relationship:
    """A valid `source --related_to--> target` edge in `source`'s tenant; `overrides` win."""
    fields: dict[str, Any] = {
        "id": RelationshipId(uuid4()),
        "tenant_id": source.tenant_id,
        "source_entity_id": source.id,
        "target_entity_id": target.id,
        "relationship_type": "related_to",
        "extraction_method": ExtractionMethod.MANUAL,
        "confidence": 1.0,
        **overrides,
    }
    return Relationship(**fields)


def make_chunk(text: str = "Ada Lovelace wrote the first program.", **overrides: Any) -> Chunk:
    """A valid chunk of `text`; `overrides` replace any field.

    `end` defaults to `start + len(text)`, so only `start` needs moving.
    """
    start = overrides.pop("start", 0)
    fields: dict[str, Any] = {
        "id": ChunkId(uuid4()),
        "tenant_id": TENANT,
        "source_id": SourceId("doc-1"),
        "ordinal": 0,
        "text": text,
        "start": start,
        "end": start + len(text),
        **overrides,
    }
    return Chunk(**fields)
