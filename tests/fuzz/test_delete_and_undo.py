"""A delete stays deleted, whatever is merged or undone around it.

A hypothesis state machine drives merges, undos and deletes in random order
through a `Consolidator` and `delete_entity`, on the in-memory stores and on
SQLite (graph, vectors and log in one file), against a model kept by the
test: which entities the tenant holds, and where each merged id resolves.
After each step both worlds must agree with the model, no id may resolve to
an entity the tenant does not hold, every relationship must join held
entities, and replaying the log into fresh stores must give the same graph
and vectors (ADR 0057).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from redstring import (
    Consolidator,
    EntityId,
    FakeEmbeddingProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    MergeUndoError,
    MissingEntityError,
    SqliteEventLog,
    SqliteGraphStore,
    SqliteVectorStore,
    VectorRecord,
    delete_entity,
    replay,
)
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.event_log import make_document_extracted, make_entities_embedded
from redstring.testing.factories import TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from uuid import UUID as EventId

DIMENSION = 8
IDS = tuple(EntityId(UUID(int=n)) for n in range(1, 7))
NAMES = (
    "Ada Lovelace",
    "Charles Babbage",
    "Mary Somerville",
    "Alan Turing",
    "Grace Hopper",
    "Kurt",
)

ids = st.sampled_from(range(len(IDS)))


class World:
    """A graph, vectors and a log of one backend, with a Consolidator over them."""

    def __init__(self, graph: Any, vectors: Any, log: Any) -> None:
        self.graph, self.vectors, self.log = graph, vectors, log
        self.consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
        self.merges: list[EventId] = []


class DeleteStaysDeleted(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.folder = tempfile.TemporaryDirectory()
        path = Path(self.folder.name) / "store.db"
        self.worlds = [
            World(
                InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION), InMemoryEventLog()
            ),
            World(
                SqliteGraphStore(path),
                SqliteVectorStore(path, dimension=DIMENSION),
                SqliteEventLog(path),
            ),
        ]
        entities = [make_entity(id=i, name=n) for i, n in zip(IDS, NAMES, strict=True)]
        ring = [make_relationship(entities[n], entities[(n + 1) % 6]) for n in range(6)]
        embedded = self.run(FakeEmbeddingProvider(dimension=DIMENSION).embed(NAMES))
        records = [
            VectorRecord(entity_id=e.id, tenant_id=TENANT, vector=v)
            for e, v in zip(entities, embedded, strict=True)
        ]
        for world in self.worlds:
            self.run(world.log.append(make_document_extracted(entities, ring)))
            self.run(world.graph.upsert_entities(entities))
            self.run(world.graph.upsert_relationships(ring))
            self.run(world.log.append(make_entities_embedded(records, dimension=DIMENSION)))
            self.run(world.vectors.upsert_many(records))
        # The model: the entities held as themselves, where merged ids point,
        # and every merge made, with its entities and whether it is undone.
        self.held: set[int] = set(range(6))
        self.redirect: dict[int, int] = {}
        self.merges: list[tuple[int, tuple[int, ...], bool]] = []

    def run[T](self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        for world in self.worlds:
            for closable in (world.graph, world.vectors, world.log):
                self.run(closable.close())
        self.loop.close()
        self.folder.cleanup()

    def resolve(self, n: int) -> int:
        while n in self.redirect:
            n = self.redirect[n]
        return n

    # -- steps -------------------------------------------------------------------

    @rule(canonical=ids, merged=st.sets(ids, min_size=1, max_size=2))
    def merge(self, canonical: int, merged: set[int]) -> None:
        if canonical in merged:
            return
        allowed = canonical in self.held and merged <= self.held
        for world in self.worlds:
            call = world.consolidator.merge(
                TENANT, IDS[canonical], [IDS[n] for n in sorted(merged)], reason="a test"
            )
            if allowed:
                done = self.run(call)
                assert done.event_id is not None
                world.merges.append(done.event_id)
            else:
                try:
                    self.run(call)
                except MissingEntityError:
                    continue
                raise AssertionError("a merge of an entity not held was accepted")
        if allowed:
            self.held -= merged
            self.redirect.update(dict.fromkeys(merged, canonical))
            self.merges.append((canonical, tuple(sorted(merged)), False))

    @rule(pick=st.integers(0, 20))
    def undo(self, pick: int) -> None:
        if not self.merges:
            return
        index = pick % len(self.merges)
        canonical, merged, undone = self.merges[index]
        touched = {canonical, *merged}
        later_standing = any(
            not later_undone and touched & {later_canonical, *later_merged}
            for later_canonical, later_merged, later_undone in self.merges[index + 1 :]
        )
        intact = canonical in self.held and all(self.redirect.get(n) == canonical for n in merged)
        allowed = not undone and not later_standing and intact
        for world in self.worlds:
            call = world.consolidator.undo(TENANT, world.merges[index])
            if allowed:
                self.run(call)
            else:
                try:
                    self.run(call)
                except MergeUndoError:
                    continue
                raise AssertionError(f"undo of merge {index} was accepted")
        if allowed:
            self.held |= touched
            for n in merged:
                del self.redirect[n]
            self.merges[index] = (canonical, merged, True)

    @rule(n=ids)
    def delete(self, n: int) -> None:
        target = self.resolve(n)
        expected = target in self.held
        for world in self.worlds:
            removed = self.run(
                delete_entity(
                    IDS[n], TENANT, graph=world.graph, vectors=world.vectors, event_log=world.log
                )
            )
            assert removed is expected
        self.held.discard(target)
        gone = [target]
        while gone:
            into = gone.pop()
            for merged in [m for m, c in self.redirect.items() if c == into]:
                del self.redirect[merged]
                gone.append(merged)

    # -- what must hold after every step -----------------------------------------

    @invariant()
    def the_stores_agree_with_the_model(self) -> None:
        for world in self.worlds:
            resolved = self.run(world.graph.resolve(list(IDS), TENANT))
            assert resolved == {IDS[n]: IDS[self.resolve(n)] for n in range(6)}
            held = {e.id for e in self.run(world.graph.find_entities(TENANT))}
            assert held == {IDS[n] for n in self.held}
            for entity_id, canonical in resolved.items():
                assert canonical == entity_id or canonical in held, "resolves to a missing id"
            vectored = {i for i in IDS if self.run(world.vectors.get(i, TENANT)) is not None}
            assert vectored == held
            for entity_id in held:
                for relationship in self.run(world.graph.get_relationships(entity_id, TENANT)):
                    assert {relationship.source_entity_id, relationship.target_entity_id} <= held

    @invariant()
    def a_replay_of_the_log_agrees(self) -> None:
        for world in self.worlds:
            graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
            self.run(replay(world.log, GraphProjection(graph), VectorProjection(vectors)))
            assert self.run(_snapshot(graph, vectors)) == self.run(
                _snapshot(world.graph, world.vectors)
            )


async def _snapshot(graph: Any, vectors: Any) -> object:
    entities = sorted(await graph.find_entities(TENANT), key=lambda e: str(e.id))
    relationships = {r.id: r for e in entities for r in await graph.get_relationships(e.id, TENANT)}
    held_vectors = [await vectors.get(i, TENANT) for i in IDS]
    return (
        entities,
        sorted(relationships.values(), key=lambda r: str(r.id)),
        [None if v is None else list(v.vector) for v in held_vectors],
        await graph.resolve(list(IDS), TENANT),
    )


DeleteStaysDeleted.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_a_delete_stays_deleted = DeleteStaysDeleted.TestCase
