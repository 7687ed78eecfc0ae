"""A query's relation chain followed over a tenant's relationships, from seed entities.

`follow_chain` takes the seeds through each term of a `RelationChain`
(`redstring.domain.relation_chains`) in turn: a term's steps follow the
relationships whose type says the step's basic relation
(`relation_of_type`): "the mother of X is Y" is `X --mother--> Y`, or
`Y --mother_of--> X`. The relationships that imply a relation are
followed too (X's child is whoever has X as parent), but for a step that
asks a gender only where none says it (the implying type does not tell
the gender), and never to an end a relationship says is of the other
gender.
A seed that takes part in no relationship of a basic relation (a hobby,
an occupation) stands for the entities it is joined to, whatever the
type: "the person whose hobby is X" starts from X's holders.

Every entity a term's end reaches is bound: it scores the best seed weight
that reaches it, as do the seeds, so a chain's every link (the trace of the
question, not only its answer) is found. Each step keeps at most `limit`
entities, the best first, so a chain reads a bounded number of
relationships. See ADR 0126.

Each entity the whole chain binds (its answer) keeps the path that reached
it (`Chain.paths`): the entities and relationships from a seed, the middle
of a derived relation included ("the cousin of X" crosses X's parent and
that parent's sibling). Of the paths from seeds of equal weight, the
shortest is kept, and then the one whose relationship ids come first, so
the same graph gives the same path. See ADR 0128.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from redstring.domain.relation_chains import StatedRelation, Step, relation_of_type
from redstring.graph.walk import Walk
from redstring.ports.graph_reads import read_relationships

if TYPE_CHECKING:
    from collections.abc import Mapping

    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relation_chains import RelationChain
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader

#: Each basic relation's inverse: `X --r--> Y` states `Y --inverse(r)--> X`.
_INVERSE: Final = {
    "parent": "child",
    "child": "parent",
    "sibling": "sibling",
    "spouse": "spouse",
    "friend": "friend",
}


@dataclass(frozen=True, slots=True)
class ChainPath:
    """A path a chain followed: `relationships[i]` joins `entities[i]` and `entities[i + 1]`.

    `entities` runs from a seed (or the entity joined to a seed that stood
    for it) to the entity bound; a relationship may point either way.
    """

    entities: tuple[EntityId, ...]
    relationships: tuple[Relationship, ...] = ()

    def then(self, edge: Relationship, entity_id: EntityId) -> ChainPath:
        """This path, one relationship further, to `entity_id`."""
        return ChainPath((*self.entities, entity_id), (*self.relationships, edge))


@dataclass(slots=True)
class Chain(Walk):
    """What a chain bound (`scores`), the relationships it followed, and its answers' paths."""

    paths: dict[EntityId, ChainPath] = field(default_factory=dict)


def _order(weight: float, path: ChainPath) -> tuple[float, int, tuple[int, ...]]:
    """Which of two ways to one entity is kept: the heavier, then the shorter, then by ids."""
    return (-weight, len(path.relationships), tuple(edge.id.int for edge in path.relationships))


def _keep(
    reached: dict[EntityId, tuple[float, ChainPath]],
    entity_id: EntityId,
    weight: float,
    path: ChainPath,
) -> None:
    """Record `path` of `weight` to `entity_id` where it beats the way recorded."""
    known = reached.get(entity_id)
    if known is None or _order(weight, path) < _order(*known):
        reached[entity_id] = (weight, path)


class _Edges:
    """The relationships of the entities a chain has visited, read once each, in batches."""

    def __init__(
        self,
        graph: GraphReader,
        tenant_id: TenantId,
        read: dict[EntityId, list[Relationship]] | None,
    ) -> None:
        self._graph = graph
        self._tenant_id = tenant_id
        self.read: dict[EntityId, list[Relationship]] = {} if read is None else read
        self._types: dict[str, StatedRelation | None] = {}

    async def load(self, entity_ids: list[EntityId]) -> None:
        """Read the relationships of those of `entity_ids` not read yet, in one batch."""
        unread = [entity_id for entity_id in entity_ids if entity_id not in self.read]
        if unread:
            self.read.update(await read_relationships(self._graph, unread, self._tenant_id))

    def stated(self, relationship_type: str) -> StatedRelation | None:
        """The basic relation `relationship_type` states, read once per type."""
        if relationship_type not in self._types:
            self._types[relationship_type] = relation_of_type(relationship_type)
        return self._types[relationship_type]


def _said(edges: _Edges, edge: Relationship, entity_id: EntityId) -> tuple[Step, bool] | None:
    """What `edge`'s other end is to `entity_id`, and whether the edge says so itself.

    "X --mother--> Y" says Y is X's mother (its gender stated); read from
    Y, it implies X is Y's child (`False`: the gender not stated).
    """
    stated = edges.stated(edge.relationship_type)
    if stated is None:
        return None
    step, reversed_ = stated
    if (edge.source_entity_id == entity_id) != reversed_:
        return step, True
    return Step(_INVERSE[step.relation]), False


def _step(
    edges: _Edges,
    frontier: Mapping[EntityId, tuple[float, ChainPath]],
    step: Step,
    used: Walk,
    limit: int,
) -> dict[EntityId, tuple[float, ChainPath]]:
    """The best `limit` entities `step` takes `frontier` to, each with its best weight and path.

    The relationships that lead to those kept join `used`.

    A step that asks no gender follows every relationship that says or
    implies its relation. One that asks a gender follows those that say it
    with that gender; only where none does, those that imply the relation
    (which cannot tell the gender), but for the ends a relationship says
    are of the other gender.
    """
    reached: dict[EntityId, tuple[float, ChainPath]] = {}
    leading: dict[EntityId, list[Relationship]] = {}
    for entity_id, (weight, path) in frontier.items():
        said: list[tuple[Relationship, EntityId]] = []
        implied: list[tuple[Relationship, EntityId]] = []
        other_gender: set[EntityId] = set()
        for edge in edges.read.get(entity_id, []):
            found = _said(edges, edge, entity_id)
            if found is None or found[0].relation != step.relation:
                continue
            other = (
                edge.target_entity_id
                if edge.source_entity_id == entity_id
                else edge.source_entity_id
            )
            if not found[1]:
                implied.append((edge, other))
            elif step.gender is None or found[0].gender in (None, step.gender):
                said.append((edge, other))
            else:
                other_gender.add(other)
        if step.gender is None:
            said += implied
        elif not said:
            said = [(edge, other) for edge, other in implied if other not in other_gender]
        for edge, other in said:
            leading.setdefault(other, []).append(edge)
            _keep(reached, other, weight, path.then(edge, other))
    kept = _best(reached, limit)
    for entity_id in kept:
        for edge in leading[entity_id]:
            used.relationships[edge.id] = edge
    return kept


def _best(
    scores: Mapping[EntityId, tuple[float, ChainPath]], limit: int
) -> dict[EntityId, tuple[float, ChainPath]]:
    kept = sorted(scores, key=lambda key: (-scores[key][0], key.int))[:limit]
    return {key: scores[key] for key in kept}


async def follow_chain(
    graph: GraphReader,
    tenant_id: TenantId,
    seeds: Mapping[EntityId, float],
    chain: RelationChain,
    *,
    limit: int,
    read: dict[EntityId, list[Relationship]] | None = None,
) -> Chain:
    """The entities `chain` binds from `seeds`, each with its best seed's weight; the edges read.

    An empty chain, or seeds of no positive weight, bind the seeds alone.
    A term no step of which leads anywhere ends the chain there. `paths`
    holds, for each entity the chain's last term binds, the path that
    reached it; it is empty when the chain ends before its last term.
    `read`, when given, holds relationships already read of the tenant's
    entities (a walk's) and gains those the chain reads.
    """
    result = Chain()
    frontier = _best(
        {key: (value, ChainPath((key,))) for key, value in seeds.items() if value > 0}, limit
    )
    result.scores.update((key, weight) for key, (weight, _) in frontier.items())
    if not chain.terms or not frontier:
        return result
    edges = _Edges(graph, tenant_id, read)
    await edges.load(list(frontier))
    frontier = _people(edges, frontier, result, limit)
    for term in chain.terms:
        bound: dict[EntityId, tuple[float, ChainPath]] = {}
        for spelling in term:
            current = frontier
            for step in spelling:
                await edges.load(list(current))
                current = _step(edges, current, step, result, limit)
                if not current:
                    break
            for entity_id, (weight, path) in current.items():
                _keep(bound, entity_id, weight, path)
        if not bound:
            return result
        frontier = _best(bound, limit)
        for entity_id, (weight, _) in frontier.items():
            if weight > result.scores.get(entity_id, 0.0):
                result.scores[entity_id] = weight
    result.paths = {entity_id: path for entity_id, (_, path) in frontier.items()}
    return result


def _people(
    edges: _Edges,
    seeds: dict[EntityId, tuple[float, ChainPath]],
    result: Walk,
    limit: int,
) -> dict[EntityId, tuple[float, ChainPath]]:
    """The seeds, each one in no basic relation replaced by the entities joined to it."""
    frontier: dict[EntityId, tuple[float, ChainPath]] = {}
    for entity_id, (weight, path) in seeds.items():
        known = edges.read.get(entity_id, [])
        if any(edges.stated(edge.relationship_type) is not None for edge in known):
            _keep(frontier, entity_id, weight, path)
            continue
        for edge in known:
            other = (
                edge.target_entity_id
                if edge.source_entity_id == entity_id
                else edge.source_entity_id
            )
            result.relationships[edge.id] = edge
            _keep(frontier, other, weight, path.then(edge, other))
            result.scores[other] = max(result.scores.get(other, 0.0), weight)
    return _best(frontier, limit)
