"""Rules every graph store applies the same way when it merges entities."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from redstring.domain.batches import require_all
from redstring.domain.ids import EntityId

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.relationship import Relationship


def check_merge(canonical_id: EntityId, merged_ids: Sequence[EntityId]) -> list[EntityId]:
    """The merged ids as a list, or `ValueError` naming what is wrong with them.

    Raises:
        ValueError: `merged_ids` is not a sequence of ids, is empty, repeats
            an id, or holds `canonical_id`.
    """
    merged = [EntityId(entity_id) for entity_id in require_all(merged_ids, UUID, name="merged_ids")]
    if not merged:
        raise ValueError("merged_ids must not be empty")
    if len(set(merged)) != len(merged):
        raise ValueError(f"merged_ids repeats an id: {[str(entity_id) for entity_id in merged]}")
    if canonical_id in merged:
        raise ValueError(f"merged_ids holds the canonical id {canonical_id}")
    return merged


def repoint(relationship: Relationship, old: EntityId, new: EntityId) -> Relationship:
    """`relationship` with every endpoint equal to `old` replaced by `new`, id kept."""
    update: dict[str, EntityId] = {}
    if relationship.source_entity_id == old:
        update["source_entity_id"] = new
    if relationship.target_entity_id == old:
        update["target_entity_id"] = new
    return relationship.model_copy(update=update)
