"""Rules every graph store applies the same way when it merges entities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from uuid import UUID

from redstring.domain.batches import require_all
from redstring.domain.ids import EntityId
from redstring.domain.normalization import normalize_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.relationship import Relationship

#: The property holding an entity's other names, a list of strings.
ALIASES_KEY: Final = "aliases"


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


def absorb(canonical: Entity, merged: Sequence[Entity]) -> Entity:
    """`canonical` once it stands for `merged` too.

    Every other name (and alias) becomes an alias; a property the canonical
    lacks is taken from the first merged entity holding it; the blocking keys
    are united, so a lookup by any absorbed name finds the canonical; a
    missing description is filled. The canonical wins every conflict, so
    absorbing the same entities again changes nothing.
    """
    own = canonical.properties.get(ALIASES_KEY)
    aliases: list[str] = [a for a in own if isinstance(a, str)] if isinstance(own, list) else []
    seen = {normalize_name(canonical.name), *(normalize_name(a) for a in aliases)}
    properties = dict(canonical.properties)
    keys = set(canonical.blocking_keys or ())
    description = canonical.description
    for entity in merged:
        theirs = entity.properties.get(ALIASES_KEY)
        names = [entity.name, *(theirs if isinstance(theirs, list) else [])]
        for name in names:
            if isinstance(name, str) and normalize_name(name) not in seen:
                seen.add(normalize_name(name))
                aliases.append(name)
        for key, value in entity.properties.items():
            if key != ALIASES_KEY:
                properties.setdefault(key, value)
        keys |= entity.blocking_keys or set()
        description = description or entity.description
    if aliases:
        properties[ALIASES_KEY] = aliases
    return canonical.model_copy(
        update={
            "properties": properties,
            "blocking_keys": frozenset(keys) if keys else canonical.blocking_keys,
            "description": description,
        }
    )
