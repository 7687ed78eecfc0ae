"""A walk over a tenant's relationships from seed entities, and passages scored by what it reached.

`walk` spreads mass from the seeds for `depth` hops over relationships
read with `GraphReader.get_relationships` (all of a hop's entities in one
`relationships_of` where the graph offers it, ADR 0122), in either direction. At each
hop an entity hands each of its relationships `decay * weight` of the mass
it received (a bounded weighted expansion), or, with `normalize`, `decay`
of it split over its relationships in proportion to their weights (a
truncated personalized PageRank, where a hub does not flood its
neighbours). An entity's score is the mass it received over all hops, the
seeds' included; with `best_path`, the mass of its best path alone (the
product of `decay * weight` along it: a weighted breadth-first search, in
which a clique of neighbours cannot pile up mass by their many paths).
Each hop expands at most `frontier` entities, the ones
holding the most mass, so a walk reads a bounded number of relationships.

`score_passages` scores each passage by the entities it mentions: the sum
of their walk scores, each weighted by its specificity (`1 / ln(1 + df)`,
where `df` is how many of the passages mention it: an entity named in few
passages says more about each) and by `about` when the passage is about the
entity (its document's title is the entity's name). See ADR 0078.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redstring.ports.graph_reads import read_relationships

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from redstring.domain.ids import ChunkId, EntityId, RelationshipId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader


@dataclass(slots=True)
class Walk:
    """What a walk reached: each entity's score, and the relationships it read."""

    scores: dict[EntityId, float] = field(default_factory=dict)
    relationships: dict[RelationshipId, Relationship] = field(default_factory=dict)


async def walk(
    graph: GraphReader,
    tenant_id: TenantId,
    seeds: Mapping[EntityId, float],
    *,
    edge_weight: Callable[[str, bool], float],
    depth: int,
    decay: float,
    frontier: int,
    normalize: bool = True,
    best_path: bool = False,
    read: dict[EntityId, list[Relationship]] | None = None,
) -> Walk:
    """Spread the seeds' mass (normalized to sum 1) over the tenant's relationships.

    `depth` hops at most, `decay` of the mass handed on per hop, at most
    `frontier` entities expanded per hop. `edge_weight(relationship_type,
    forward)` is `>= 0`, `forward` when the walk goes from the relationship's
    source to its target; a relationship of weight 0 carries nothing. Entities are
    keyed by the ids the relationships name. `read`, when given, holds the
    relationships already read of the tenant's entities, and gains those the
    walk reads, so a later reader need not read them again.
    """
    result = Walk()
    total = sum(seeds.values())
    if total <= 0:
        return result
    mass = {entity_id: weight / total for entity_id, weight in seeds.items() if weight > 0}
    for entity_id, value in mass.items():
        result.scores[entity_id] = value
    edges: dict[EntityId, list[Relationship]] = {} if read is None else read
    for _ in range(depth):
        expanded = sorted(mass, key=lambda key: (-mass[key], key.int))[:frontier]
        unread = [entity_id for entity_id in expanded if entity_id not in edges]
        if unread:
            edges.update(await read_relationships(graph, unread, tenant_id))
        handed: dict[EntityId, float] = {}
        for entity_id in expanded:
            known = edges[entity_id]
            weighted = [
                (edge, edge_weight(edge.relationship_type, edge.source_entity_id == entity_id))
                for edge in known
            ]
            norm = sum(weight for _, weight in weighted) if normalize else 1.0
            if norm <= 0:
                continue
            share = mass[entity_id] * decay / norm
            for edge, weight in weighted:
                if weight <= 0:
                    continue
                result.relationships[edge.id] = edge
                other = (
                    edge.target_entity_id
                    if edge.source_entity_id == entity_id
                    else edge.source_entity_id
                )
                if best_path:
                    handed[other] = max(handed.get(other, 0.0), share * weight)
                else:
                    handed[other] = handed.get(other, 0.0) + share * weight
        if best_path:
            # Only an entity reached by a better path than before walks on.
            handed = {
                key: value for key, value in handed.items() if value > result.scores.get(key, 0.0)
            }
        if not handed:
            break
        for entity_id, value in handed.items():
            if best_path:
                result.scores[entity_id] = value
            else:
                result.scores[entity_id] = result.scores.get(entity_id, 0.0) + value
        mass = handed
    return result


@dataclass(frozen=True, slots=True)
class PassageMention:
    """One passage mentioning one entity; `about` when the passage is about it."""

    chunk_id: ChunkId
    entity_id: EntityId
    about: bool


def score_passages(
    scores: Mapping[EntityId, float],
    mentions: list[PassageMention],
    *,
    about: float,
    best_only: bool = False,
) -> dict[ChunkId, float]:
    """Each passage's score: its entities' walk scores, weighted by specificity and `about`.

    Each `(chunk, entity)` pair counts once; an entity's `df` is the number
    of distinct passages among `mentions` that mention it.
    """
    pairs: dict[tuple[ChunkId, EntityId], bool] = {}
    for mention in mentions:
        key = (mention.chunk_id, mention.entity_id)
        pairs[key] = pairs.get(key, False) or mention.about
    frequency: dict[EntityId, int] = {}
    for _, entity_id in pairs:
        frequency[entity_id] = frequency.get(entity_id, 0) + 1
    passages: dict[ChunkId, float] = {}
    for (chunk_id, entity_id), is_about in pairs.items():
        score = scores.get(entity_id, 0.0)
        if score <= 0:
            continue
        weight = (about if is_about else 1.0) / math.log(1.0 + frequency[entity_id])
        if best_only:
            passages[chunk_id] = max(passages.get(chunk_id, 0.0), score * weight)
        else:
            passages[chunk_id] = passages.get(chunk_id, 0.0) + score * weight
    return passages
