"""Replaying the log rebuilds both stores exactly as projecting live built them."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from redstring.domain.events import DocumentExtracted, EntitiesEmbedded, EntityDeleted
from redstring.domain.ids import EntityId
from redstring.domain.vector import VectorRecord
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.projections.graph import GraphProjection
from redstring.projections.replay import replay
from redstring.projections.vector import VectorProjection
from redstring.testing.event_log import make_document_extracted, make_entities_embedded
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.support import run
from redstring.vector.adapters.memory import InMemoryVectorStore
from tests.unit.domain.event_strategies import (
    DIMENSION,
    ENTITY_IDS,
    RELATIONSHIP_IDS,
    TENANTS,
    events,
)

if TYPE_CHECKING:
    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.ids import RelationshipId, TenantId
    from redstring.domain.relationship import Relationship

QUERY = [1.0, 1.0, 1.0, 1.0]


class Stores:
    """A graph store and a vector store, with the projections that fill them."""

    def __init__(self) -> None:
        self.graph = InMemoryGraphStore()
        self.vectors = InMemoryVectorStore(dimension=DIMENSION)
        self.projections = (GraphProjection(self.graph), VectorProjection(self.vectors))

    async def snapshot(self) -> dict[str, Any]:
        """Everything the stores answer about the id pools, through their read ports."""
        seen: dict[str, Any] = {}
        for tenant_id in TENANTS:
            seen[f"{tenant_id} all"] = await self.graph.find_entities(tenant_id)
            for entity_id in ENTITY_IDS:
                key = f"{tenant_id} {entity_id}"
                seen[f"{key} entity"] = await self.graph.get_entity(entity_id, tenant_id)
                seen[f"{key} edges"] = await self.graph.get_relationships(entity_id, tenant_id)
                seen[f"{key} vector"] = await self.vectors.get(entity_id, tenant_id)
            for relationship_id in RELATIONSHIP_IDS:
                seen[f"{tenant_id} {relationship_id}"] = await self.graph.get_relationship(
                    relationship_id, tenant_id
                )
            seen[f"{tenant_id} search"] = await self.vectors.search(QUERY, tenant_id, k=10)
        return seen


class Oracle:
    """The stores' expected contents, folded with plain dicts: last write per key wins."""

    def __init__(self, history: list[Event]) -> None:
        self.entities: dict[tuple[TenantId, EntityId], Entity] = {}
        self.relationships: dict[tuple[TenantId, RelationshipId], Relationship] = {}
        self.vectors: dict[tuple[TenantId, EntityId], VectorRecord] = {}
        for event in history:
            if isinstance(event, DocumentExtracted):
                for entity in event.entities:
                    self.entities[entity.tenant_id, entity.id] = entity
                for relationship in event.relationships:
                    self.relationships[relationship.tenant_id, relationship.id] = relationship
            elif isinstance(event, EntitiesEmbedded):
                for record in event.records:
                    self.vectors[record.tenant_id, record.entity_id] = record
            elif isinstance(event, EntityDeleted):
                key = (event.tenant_id, event.entity_id)
                self.entities.pop(key, None)
                self.vectors.pop(key, None)
                self.relationships = {
                    (owner, rid): edge
                    for (owner, rid), edge in self.relationships.items()
                    if owner != event.tenant_id
                    or event.entity_id not in (edge.source_entity_id, edge.target_entity_id)
                }

    def score(self, vector: list[float]) -> float:
        dot = sum(x * y for x, y in zip(vector, QUERY, strict=True))
        norms = math.sqrt(sum(x * x for x in vector)) * math.sqrt(sum(y * y for y in QUERY))
        return (1.0 + dot / norms) / 2.0

    def check(self, seen: dict[str, Any]) -> None:
        """Assert that a snapshot holds exactly what the oracle expects."""
        for tenant_id in TENANTS:
            mine = [entity for (owner, _), entity in self.entities.items() if owner == tenant_id]
            assert seen[f"{tenant_id} all"] == sorted(mine, key=lambda entity: str(entity.id))
            for entity_id in ENTITY_IDS:
                key = f"{tenant_id} {entity_id}"
                assert seen[f"{key} entity"] == self.entities.get((tenant_id, entity_id))
                assert seen[f"{key} vector"] == self.vectors.get((tenant_id, entity_id))
                touching = [
                    relationship
                    for (owner, _), relationship in self.relationships.items()
                    if owner == tenant_id
                    and entity_id in (relationship.source_entity_id, relationship.target_entity_id)
                ]
                assert seen[f"{key} edges"] == sorted(touching, key=lambda edge: str(edge.id))
            for relationship_id in RELATIONSHIP_IDS:
                expected = self.relationships.get((tenant_id, relationship_id))
                assert seen[f"{tenant_id} {relationship_id}"] == expected
            scores = {match.entity_id: match.score for match in seen[f"{tenant_id} search"]}
            assert scores == pytest.approx(
                {
                    entity_id: self.score(record.vector.tolist())
                    for (owner, entity_id), record in self.vectors.items()
                    if owner == tenant_id
                }
            )


def _entity(n: int, tenant_id: TenantId, name: str) -> Entity:
    return make_entity(id=UUID(int=n), tenant_id=tenant_id, name=name, properties={"n": name})


def _record(n: int, tenant_id: TenantId, vector: list[float]) -> VectorRecord:
    return VectorRecord(entity_id=EntityId(UUID(int=n)), tenant_id=tenant_id, vector=vector)


_ada, _charles = _entity(1, TENANT, "Ada"), _entity(2, TENANT, "Charles")
ONE_EVENT = make_document_extracted(
    [_ada, _charles], [make_relationship(_ada, _charles, id=RELATIONSHIP_IDS[0])]
)
_second_ada = _entity(1, TENANT, "Ada, again")
COLLISIONS: list[Event] = [
    ONE_EVENT,
    make_document_extracted([_entity(1, OTHER_TENANT, "Theirs")], tenant_id=OTHER_TENANT),
    make_entities_embedded([_record(1, TENANT, [1.0, 0.0, 0.0, 0.0])]),
    make_entities_embedded(
        [_record(1, OTHER_TENANT, [0.0, 1.0, 0.0, 0.0])], tenant_id=OTHER_TENANT
    ),
    make_document_extracted(
        [_second_ada], [make_relationship(_second_ada, _second_ada, id=RELATIONSHIP_IDS[0])]
    ),
    make_entities_embedded([_record(1, TENANT, [0.0, 0.0, -2.0, 1.0])]),
]


def _deleted(n: int, tenant_id: TenantId) -> EntityDeleted:
    return EntityDeleted(
        event_id=uuid4(),
        tenant_id=tenant_id,
        occurred_at=datetime(2024, 5, 6, tzinfo=UTC),
        entity_id=EntityId(UUID(int=n)),
    )


#: Ada deleted in TENANT after writes in both tenants, deleted again, then re-extracted.
DELETES: list[Event] = [*COLLISIONS[:4], _deleted(1, TENANT), _deleted(1, TENANT), COLLISIONS[4]]


@settings(max_examples=60, deadline=None)
@given(history=st.lists(events(), max_size=8))
@example(history=[])
@example(history=[ONE_EVENT])
@example(history=COLLISIONS)
@example(history=DELETES[:-1])
@example(history=DELETES)
def test_replaying_the_log_rebuilds_what_live_projection_built(history: list[Event]) -> None:
    async def scenario() -> None:
        live, rebuilt, log = Stores(), Stores(), InMemoryEventLog()
        for event in history:
            await log.append(event)
            for projection in live.projections:
                await projection.apply(event)
        assert await replay(log, *rebuilt.projections) == len(history)
        seen = await rebuilt.snapshot()
        assert seen == await live.snapshot()
        Oracle(history).check(seen)

    run(scenario())


# -- after, tenant and order ---------------------------------------------------


async def test_an_empty_log_replays_nothing_and_returns_after() -> None:
    stores = Stores()
    assert await replay(InMemoryEventLog(), *stores.projections) == 0
    assert await replay(InMemoryEventLog(), *stores.projections, after=5) == 5
    assert await stores.graph.find_entities(TENANT) == []


async def test_replay_after_a_sequence_applies_only_later_events_and_returns_the_last() -> None:
    log, stores = InMemoryEventLog(), Stores()
    early, late = make_entity(name="Early"), make_entity(name="Late")
    await log.append_many([make_document_extracted([early]), make_document_extracted([late])])
    assert await replay(log, *stores.projections, after=1) == 2
    assert await stores.graph.find_entities(TENANT) == [late]
    assert await replay(log, *stores.projections, after=2) == 2


async def test_catching_up_applies_only_what_was_appended_since() -> None:
    log, stores = InMemoryEventLog(), Stores()
    first, second = make_entity(id=UUID(int=1)), make_entity(id=UUID(int=2))
    await log.append(make_document_extracted([first]))
    caught_up = await replay(log, *stores.projections)
    await stores.graph.delete_by_tenant(TENANT)
    await log.append(make_document_extracted([second]))
    assert await replay(log, *stores.projections, after=caught_up) == 2
    assert await stores.graph.find_entities(TENANT) == [second]


async def test_a_tenant_replay_rebuilds_that_tenant_only_and_returns_its_last_sequence() -> None:
    log, stores = InMemoryEventLog(), Stores()
    same = EntityId(UUID(int=1))
    mine = make_entity(id=same, name="Mine")
    theirs = make_entity(id=same, name="Theirs", tenant_id=OTHER_TENANT)
    await log.append_many(
        [
            make_document_extracted([mine]),
            make_document_extracted([theirs], tenant_id=OTHER_TENANT),
            make_document_extracted([mine]),
        ]
    )
    assert await replay(log, *stores.projections, tenant_id=OTHER_TENANT) == 2
    assert await stores.graph.get_entity(same, OTHER_TENANT) == theirs
    assert await stores.graph.get_entity(same, TENANT) is None


class Recording:
    """A projection that records what reached it, in a journal it shares."""

    def __init__(self, name: str, journal: list[tuple[str, UUID]]) -> None:
        self.name = name
        self.journal = journal

    async def apply(self, event: Event) -> None:
        self.journal.append((self.name, event.event_id))


async def test_each_event_reaches_every_projection_before_the_next_event() -> None:
    log = InMemoryEventLog()
    first, second = make_document_extracted(), make_entities_embedded()
    await log.append_many([first, second])
    journal: list[tuple[str, UUID]] = []
    await replay(log, Recording("a", journal), Recording("b", journal))
    assert journal == [
        ("a", first.event_id),
        ("b", first.event_id),
        ("a", second.event_id),
        ("b", second.event_id),
    ]


async def test_replay_without_projections_still_reports_the_last_sequence() -> None:
    log = InMemoryEventLog()
    await log.append_many([make_document_extracted(), make_document_extracted()])
    assert await replay(log) == 2


async def test_a_negative_after_is_refused() -> None:
    with pytest.raises(ValueError, match="-1"):
        await replay(InMemoryEventLog(), after=-1)


async def test_a_replayed_delete_keeps_the_entity_deleted_in_its_tenant_only() -> None:
    log, stores = InMemoryEventLog(), Stores()
    await log.append_many(DELETES[:-1])
    await replay(log, *stores.projections)
    ada, charles = EntityId(UUID(int=1)), EntityId(UUID(int=2))
    assert await stores.graph.get_entity(ada, TENANT) is None
    assert await stores.vectors.get(ada, TENANT) is None
    assert await stores.graph.get_relationships(charles, TENANT) == []
    assert await stores.graph.get_entity(charles, TENANT) == _charles
    theirs = await stores.graph.get_entity(ada, OTHER_TENANT)
    assert theirs is not None
    assert theirs.name == "Theirs"
    assert await stores.vectors.get(ada, OTHER_TENANT) is not None
