"""Mapping a model's answer onto domain entities, with deterministic ids.

Ids are uuid5 over `EXTRACTION_ID_NAMESPACE` and the parts that identify a
row, so extracting the same document again yields the same ids and a store
upsert is idempotent.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypedDict
from uuid import UUID

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.json_safety import copy_json
from redstring.domain.normalization import normalize_name

if TYPE_CHECKING:
    from redstring.extraction.schema import ExtractedRelationship, Extraction

#: The uuid5 namespace of every extracted id. Changing it changes every id: a wire format.
EXTRACTION_ID_NAMESPACE: Final = UUID("6f1d8a52-3c4e-5b7a-9d2f-0e8c1b4a7d36")


class LlmProvenance(TypedDict):
    """The fields every entity and relationship a model extracted from one source carries."""

    tenant_id: TenantId
    source_id: SourceId
    extraction_method: ExtractionMethod
    model: str


def llm_provenance(tenant_id: TenantId, source_id: SourceId, model: str) -> LlmProvenance:
    """What an extracted row of `tenant_id`'s `source_id`, read by `model`, is stamped with."""
    return {
        "tenant_id": tenant_id,
        "source_id": source_id,
        "extraction_method": ExtractionMethod.LLM,
        "model": model,
    }


def _uuid_for(kind: str, *parts: str) -> UUID:
    """uuid5 of the length-prefixed parts: no two part lists encode alike."""
    encoded = "".join(f"{len(part)}:{part}" for part in (kind, *parts))
    # surrogatepass keeps this total; a row carrying a surrogate is refused later.
    return uuid.uuid5(EXTRACTION_ID_NAMESPACE, encoded.encode("utf-8", "surrogatepass"))


def entity_id_for(
    tenant_id: TenantId, source_id: SourceId, entity_type: str, name: str
) -> EntityId:
    """The id of the entity named `name` of type `entity_type` in one tenant's document.

    Type and name are compared after `normalize_name`, so "Ada  Lovelace"
    and "ada lovelace" get one id. Total and deterministic.
    """
    return EntityId(
        _uuid_for(
            "entity", str(tenant_id), source_id, normalize_name(entity_type), normalize_name(name)
        )
    )


def relationship_id_for(
    tenant_id: TenantId,
    source_id: SourceId,
    relationship_type: str,
    source_entity_id: EntityId,
    target_entity_id: EntityId,
) -> RelationshipId:
    """The id of one typed, directed edge in one tenant's document.

    The type is compared after `normalize_name`; direction matters. Total and
    deterministic.
    """
    return RelationshipId(
        _uuid_for(
            "relationship",
            str(tenant_id),
            source_id,
            normalize_name(relationship_type),
            str(source_entity_id),
            str(target_entity_id),
        )
    )


@dataclass(frozen=True, slots=True)
class MappedChunk:
    """One chunk's answer as domain entities, plus its relationship rows unresolved.

    `relationships` are kept as the model wrote them: their ends name
    entities that may come from another chunk. `dropped_rows` counts entity
    rows that did not make a valid `Entity`.
    """

    entities: tuple[Entity, ...]
    relationships: tuple[ExtractedRelationship, ...]
    dropped_rows: int


def map_extraction(
    extraction: Extraction, *, tenant_id: TenantId, source_id: SourceId, model: str
) -> MappedChunk:
    """Map a model's answer onto entities of `tenant_id` extracted from `source_id`.

    Each entity has extraction method `llm`, the given `model`, a
    deterministic id from `entity_id_for` and its blocking keys filled, in
    row order. A row that `Entity` refuses (blank name or type, NUL, a
    confidence outside `0..1`, non-JSON properties) is dropped and counted,
    never raised. Rows sharing an id are all kept; merging is the caller's.
    """
    entities: list[Entity] = []
    dropped = 0
    provenance = llm_provenance(tenant_id, source_id, model)
    for row in extraction.entities:
        try:
            entity = Entity(
                id=entity_id_for(tenant_id, source_id, row.entity_type, row.name),
                name=row.name,
                normalized_name=normalize_name(row.name),
                entity_type=row.entity_type,
                description=row.description,
                properties=copy_json(row.properties),
                confidence=row.confidence,
                **provenance,
            )
        except ValueError:
            dropped += 1
            continue
        entities.append(entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)}))
    return MappedChunk(
        entities=tuple(entities),
        relationships=tuple(extraction.relationships),
        dropped_rows=dropped,
    )
