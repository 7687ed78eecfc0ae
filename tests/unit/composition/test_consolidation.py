"""The Consolidator against the in-memory stores, the shipped fakes and the real log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

import pytest

from redstring import (
    Consolidator,
    EntitiesMerged,
    EntityId,
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    LlmMergeAdjudicator,
    MergeBand,
    MergeUndoError,
    MergeUndone,
    MissingEntityError,
    PropertyKind,
    RetrievalMode,
    Retriever,
    SourceDocument,
    SourceId,
    VectorRecord,
    build_graph,
    delete_entity,
    replay,
)
from redstring.composition import consolidation
from redstring.consolidation import resolution
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.event_log import make_document_extracted
from tests.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring import Entity, Event, Relationship, StoredEvent, TenantId

DIMENSION = 8


def entity_id(n: int) -> EntityId:
    """A fixed id, so two tenants can hold the same one."""
    return EntityId(UUID(int=n))


class World:
    """A graph, vectors and a log, with a Consolidator over them."""

    def __init__(self, *, adjudicator: Any = None) -> None:
        self.graph = InMemoryGraphStore()
        self.vectors = InMemoryVectorStore(dimension=DIMENSION)
        self.log = InMemoryEventLog()
        self.consolidator = Consolidator(
            graph=self.graph, event_log=self.log, vectors=self.vectors, adjudicator=adjudicator
        )

    async def add(self, *entities: Entity, relationships: tuple[Relationship, ...] = ()) -> None:
        await self.graph.upsert_entities(entities)
        await self.graph.upsert_relationships(relationships)
        vectors = await FakeEmbeddingProvider(dimension=DIMENSION).embed([e.name for e in entities])
        await self.vectors.upsert_many(
            [
                VectorRecord(entity_id=e.id, tenant_id=e.tenant_id, vector=v)
                for e, v in zip(entities, vectors, strict=True)
            ]
        )

    async def snapshot(self, ids: list[EntityId], tenant_id: TenantId = TENANT) -> object:
        entities = await self.graph.find_entities(tenant_id)
        relationships = {
            r.id: r for e in entities for r in await self.graph.get_relationships(e.id, tenant_id)
        }
        vectors = [await self.vectors.get(i, tenant_id) for i in ids]
        resolved = await self.graph.resolve(ids, tenant_id)
        return entities, sorted(relationships.values(), key=lambda r: str(r.id)), vectors, resolved


def ada_variants(tenant_id: TenantId = TENANT) -> list[Entity]:
    born = {"born": "1815-12-10"}
    return [
        make_entity(id=entity_id(1), tenant_id=tenant_id, name="Ada Lovelace", properties=born),
        make_entity(id=entity_id(2), tenant_id=tenant_id, name="Lovelace, Ada", properties=born),
        make_entity(id=entity_id(3), tenant_id=tenant_id, name="Dr Ada Lovelace"),
        make_entity(id=entity_id(4), tenant_id=tenant_id, name="Charles Babbage"),
    ]


async def test_variants_of_one_name_become_one_entity_that_reads_follow() -> None:
    world = World()
    ada, reversed_, titled, babbage = ada_variants()
    knows = make_relationship(reversed_, babbage, relationship_type="knows")
    await world.add(ada, reversed_, titled, babbage, relationships=(knows,))
    report = await world.consolidator.consolidate(TENANT)
    assert [(m.canonical_id, m.merged_ids) for m in report.merges] == [
        (ada.id, (reversed_.id, titled.id))
    ]
    [merge] = report.merges
    assert merge.event_id is not None
    assert merge.score is not None
    assert 0.95 <= merge.score <= 1.0
    assert (report.entities, report.asked, report.dry_run) == (4, 0, False)
    assert report.candidates >= 3
    canonical = await world.graph.get_entity(titled.id, TENANT)
    assert canonical is not None
    assert canonical.id == ada.id
    assert canonical.properties["aliases"] == ["Lovelace, Ada", "Dr Ada Lovelace"]
    assert await world.graph.resolve([reversed_.id], TENANT) == {reversed_.id: ada.id}
    [moved] = await world.graph.get_relationships(babbage.id, TENANT)
    assert moved.source_entity_id == ada.id
    assert await world.vectors.get(reversed_.id, TENANT) is None
    [stored] = [s.event for s in await world.log.read() if isinstance(s.event, EntitiesMerged)]
    assert stored.event_id == merge.event_id


async def test_the_retriever_returns_each_real_world_entity_once() -> None:
    world = World()
    entities = ada_variants()
    await world.add(*entities)
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    retriever = Retriever(embeddings=embeddings, vectors=world.vectors, graph=world.graph)
    before = await retriever.retrieve("Ada Lovelace", TENANT, k=5)
    assert len([m for m in before.matches if "Lovelace" in m.entity.name]) == 3
    # A vector the projection has not yet deleted must still count for the canonical.
    stale = await world.vectors.get(entity_id(3), TENANT)
    await world.consolidator.consolidate(TENANT)
    assert stale is not None
    await world.vectors.upsert_many([stale])
    after = await retriever.retrieve("Dr Ada Lovelace", TENANT, k=5)
    ids = [m.entity.id for m in after.matches]
    assert ids.count(entity_id(1)) == 1
    assert entity_id(3) not in ids
    semantic = await retriever.retrieve("Dr Ada Lovelace", TENANT, k=5, mode=RetrievalMode.SEMANTIC)
    assert (semantic.matches[0].entity.id, semantic.matches[0].semantic) == (entity_id(1), 1.0)


async def test_a_second_pass_merges_nothing_and_the_first_is_deterministic() -> None:
    first, second = World(), World()
    for world in (first, second):
        await world.add(*reversed(ada_variants()))
    one = await first.consolidator.consolidate(TENANT)
    two = await second.consolidator.consolidate(TENANT)
    assert [(m.canonical_id, m.merged_ids, m.score, m.reason) for m in one.merges] == [
        (m.canonical_id, m.merged_ids, m.score, m.reason) for m in two.merges
    ]
    assert (await first.consolidator.consolidate(TENANT)).merges == []


async def test_undoing_every_merge_newest_first_restores_everything_exactly() -> None:
    world = World()
    ada, reversed_, titled, babbage = ada_variants()
    relationships = (
        make_relationship(reversed_, babbage),
        make_relationship(titled, reversed_),
        make_relationship(babbage, ada),
    )
    await world.add(ada, reversed_, titled, babbage, relationships=relationships)
    ids = [ada.id, reversed_.id, titled.id, babbage.id]
    before = await world.snapshot(ids)
    first = await world.consolidator.merge(TENANT, reversed_.id, [titled.id], reason="a test")
    report = await world.consolidator.consolidate(TENANT)
    assert report.merges
    for merge in reversed([first, *report.merges]):
        assert merge.event_id is not None
        await world.consolidator.undo(TENANT, merge.event_id)
    assert await world.snapshot(ids) == before
    kinds = [type(s.event) for s in await world.log.read()]
    assert kinds == [EntitiesMerged, EntitiesMerged, MergeUndone, MergeUndone]


async def test_replaying_the_log_rebuilds_the_merged_graph_and_vectors() -> None:
    world = World()
    document = SourceDocument(id=SourceId("doc-1"), text="Ada Lovelace met Charles Babbage.")
    provider = FakeLlmProvider(
        default={
            "entities": [
                {"name": "Ada Lovelace", "entity_type": "person"},
                {"name": "Lovelace, Ada", "entity_type": "person"},
                {"name": "Charles Babbage", "entity_type": "person"},
            ],
            "relationships": [
                {
                    "source_name": "Lovelace, Ada",
                    "target_name": "Charles Babbage",
                    "relationship_type": "knows",
                }
            ],
        },
        by_substring={},
    )
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    await build_graph(
        document,
        provider=provider,
        store=world.graph,
        tenant_id=TENANT,
        embedding_provider=embeddings,
        vector_store=world.vectors,
        event_log=world.log,
    )
    await world.consolidator.consolidate(TENANT)
    ids = [e.id for s in await world.log.read() for e in getattr(s.event, "entities", ())]
    live = await world.snapshot(ids)
    again = World()
    await replay(world.log, GraphProjection(again.graph), VectorProjection(again.vectors))
    assert await again.snapshot(ids) == live
    # Re-extracting the document after the merge does not undo it.
    await build_graph(
        document,
        provider=provider,
        store=world.graph,
        tenant_id=TENANT,
        embedding_provider=embeddings,
        vector_store=world.vectors,
        event_log=world.log,
    )
    entities = await world.graph.find_entities(TENANT)
    assert sorted(e.name for e in entities) == ["Ada Lovelace", "Charles Babbage"]
    [ada] = [e for e in entities if e.name == "Ada Lovelace"]
    assert ada.properties["aliases"] == ["Lovelace, Ada"]
    [knows] = await world.graph.get_relationships(ada.id, TENANT)
    assert knows.source_entity_id == ada.id


async def test_two_tenants_with_the_same_ids_and_names_never_merge_across() -> None:
    world = World()
    mine, theirs = ada_variants(TENANT), ada_variants(OTHER_TENANT)
    await world.add(*mine, *theirs)
    untouched = await world.snapshot([e.id for e in theirs], OTHER_TENANT)
    report = await world.consolidator.consolidate(TENANT)
    assert report.entities == 4
    assert await world.snapshot([e.id for e in theirs], OTHER_TENANT) == untouched
    assert [s.event.tenant_id for s in await world.log.read()] == [TENANT]
    [merge] = report.merges
    assert merge.event_id is not None
    with pytest.raises(MergeUndoError, match="names no merge"):
        await world.consolidator.undo(OTHER_TENANT, merge.event_id)


async def test_a_dry_run_reports_and_writes_nothing() -> None:
    world = World()
    await world.add(*ada_variants())
    before = await world.snapshot([entity_id(n) for n in range(1, 5)])
    report = await world.consolidator.consolidate(TENANT, dry_run=True)
    assert report.dry_run
    assert [(m.event_id, m.canonical_id) for m in report.merges] == [(None, entity_id(1))]
    [merge] = report.merges
    assert (merge.canonical_name, merge.band) == ("Ada Lovelace", MergeBand.MERGE)
    assert sorted(merge.merged_names) == ["Dr Ada Lovelace", "Lovelace, Ada"]
    assert await world.snapshot([entity_id(n) for n in range(1, 5)]) == before
    assert await world.log.read() == []


async def test_entity_ids_limit_the_pass_to_pairs_with_them() -> None:
    world = World()
    others = [
        make_entity(id=entity_id(10), name="Grace Hopper"),
        make_entity(id=entity_id(11), name="Hopper, Grace"),
    ]
    ada, reversed_, titled, babbage = ada_variants()
    await world.add(ada, reversed_, titled, babbage, *others)
    place = make_entity(id=entity_id(12), name="Ada Lovelace", entity_type="ship")
    await world.add(place)
    report = await world.consolidator.consolidate(TENANT, entity_ids=[reversed_.id])
    assert [(m.canonical_id, m.merged_ids) for m in report.merges] == [
        (ada.id, (reversed_.id, titled.id))
    ]
    assert await world.graph.resolve([place.id], TENANT) == {place.id: place.id}
    assert await world.graph.resolve([entity_id(11)], TENANT) == {entity_id(11): entity_id(11)}
    with pytest.raises(ValueError, match="entity_ids"):
        await world.consolidator.consolidate(TENANT, entity_ids="not ids")  # type: ignore[arg-type]


async def test_the_middle_band_is_decided_by_the_adjudicator() -> None:
    verdicts = {"verdicts": [{"pair": 1, "same": True, "reason": "one engineer"}]}
    adjudicator = LlmMergeAdjudicator(FakeLlmProvider(script=[verdicts]))
    world = World(adjudicator=adjudicator)
    await world.add(make_entity(name="John Smith"), make_entity(name="Jon Smith"))
    report = await world.consolidator.consolidate(TENANT)
    assert report.asked == 1
    [merge] = report.merges
    assert merge.reason.endswith("adjudicated: one engineer")
    assert len(await world.graph.find_entities(TENANT)) == 1
    alone = World()
    await alone.add(make_entity(name="John Smith"), make_entity(name="Jon Smith"))
    assert (await alone.consolidator.consolidate(TENANT)).merges == []


async def test_an_explicit_merge_is_checked_before_anything_is_written() -> None:
    world = World()
    await world.add(*ada_variants())
    consolidator = world.consolidator
    with pytest.raises(MissingEntityError):
        await consolidator.merge(TENANT, entity_id(1), [entity_id(9)], reason="r")
    with pytest.raises(ValueError, match="reason"):
        await consolidator.merge(TENANT, entity_id(1), [entity_id(4)], reason=" ")
    with pytest.raises(ValueError, match="merged_ids"):
        await consolidator.merge(TENANT, entity_id(1), [entity_id(1)], reason="r")
    assert await world.log.read() == []
    merge = await consolidator.merge(TENANT, entity_id(4), [entity_id(1)], reason="told so")
    assert (merge.score, merge.reason) == (None, "told so")
    with pytest.raises(MissingEntityError):
        await consolidator.merge(TENANT, entity_id(2), [entity_id(1)], reason="again")


async def test_undo_refuses_what_it_cannot_undo_in_order() -> None:
    world = World()
    await world.add(*ada_variants())
    first = await world.consolidator.merge(TENANT, entity_id(1), [entity_id(2)], reason="r")
    second = await world.consolidator.merge(TENANT, entity_id(1), [entity_id(3)], reason="r")
    assert first.event_id is not None
    assert second.event_id is not None
    with pytest.raises(MergeUndoError, match="undo it first"):
        await world.consolidator.undo(TENANT, first.event_id)
    with pytest.raises(MergeUndoError, match="names no merge"):
        await world.consolidator.undo(TENANT, uuid4())
    await world.consolidator.undo(TENANT, second.event_id)
    with pytest.raises(MergeUndoError, match="undone already"):
        await world.consolidator.undo(TENANT, second.event_id)
    await world.consolidator.undo(TENANT, first.event_id)
    assert len(await world.graph.find_entities(TENANT)) == 4


def test_vectors_and_embeddings_must_agree_on_the_dimension() -> None:
    with pytest.raises(ValueError, match="dimension"):
        Consolidator(
            graph=InMemoryGraphStore(),
            event_log=InMemoryEventLog(),
            vectors=InMemoryVectorStore(dimension=4),
            embeddings=FakeEmbeddingProvider(dimension=8),
        )


async def test_embeddings_stand_in_for_missing_vectors() -> None:
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    await graph.upsert_entities([make_entity(name="Ada Lovelace") for _ in range(2)])
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    consolidator = Consolidator(graph=graph, event_log=log, embeddings=embeddings)
    report = await consolidator.consolidate(TENANT)
    assert report.merges[0].reason == "names 1.00; cosine 1.00"


async def test_a_focused_pass_skips_aliases_that_are_not_names() -> None:
    world = World()
    odd = make_entity(id=entity_id(20), name="Ada Lovelace", properties={"aliases": [7, " "]})
    await world.add(odd, make_entity(id=entity_id(21), name="Lovelace, Ada"))
    report = await world.consolidator.consolidate(TENANT, entity_ids=[odd.id])
    assert [(m.canonical_id, m.merged_ids) for m in report.merges] == [(odd.id, (entity_id(21),))]


async def test_an_extraction_that_already_lists_the_aliases_is_written_as_it_is() -> None:
    graph = InMemoryGraphStore()
    held = make_entity(properties={"aliases": ["A. L."]})
    await graph.upsert_entity(held)
    again = held.model_copy(update={"properties": {"aliases": ["A. L."], "born": "1815"}})
    event = make_document_extracted(entities=[again])
    await GraphProjection(graph).apply(event)
    assert await graph.get_entity(held.id, TENANT) == again


class PlainLog:
    """An `EventLog` with no entity index, so an undo must read the tenant's log."""

    def __init__(self) -> None:
        self._inner = InMemoryEventLog()

    async def append(self, event: Event) -> int:
        return await self._inner.append(event)

    async def append_many(self, events: Sequence[Event]) -> list[int]:
        return await self._inner.append_many(events)

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        return await self._inner.read(after=after, tenant_id=tenant_id)

    async def last_sequence(self) -> int:
        return await self._inner.last_sequence()


class CountingLog(InMemoryEventLog):
    """The in-memory log, counting whole-log reads."""

    reads = 0

    async def read(self, *, after: int = 0, tenant_id: TenantId | None = None) -> list[StoredEvent]:
        self.reads += 1
        return await super().read(after=after, tenant_id=tenant_id)


@pytest.mark.parametrize("log", [PlainLog, InMemoryEventLog], ids=["plain", "indexed"])
async def test_undo_decides_alike_with_or_without_the_logs_index(log: type[Any]) -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    consolidator = Consolidator(graph=graph, event_log=log(), vectors=vectors)
    await graph.upsert_entities(ada_variants())
    first = await consolidator.merge(TENANT, entity_id(1), [entity_id(2)], reason="r")
    second = await consolidator.merge(TENANT, entity_id(1), [entity_id(3)], reason="r")
    assert first.event_id is not None
    assert second.event_id is not None
    with pytest.raises(MergeUndoError, match="undo it first"):
        await consolidator.undo(TENANT, first.event_id)
    with pytest.raises(MergeUndoError, match="names no merge"):
        await consolidator.undo(TENANT, uuid4())
    await consolidator.undo(TENANT, second.event_id)
    with pytest.raises(MergeUndoError, match="undone already"):
        await consolidator.undo(TENANT, second.event_id)
    await consolidator.undo(TENANT, first.event_id)
    assert len(await graph.find_entities(TENANT)) == 4


async def test_an_undo_over_an_indexed_log_never_reads_the_whole_log() -> None:
    log = CountingLog()
    graph = InMemoryGraphStore()
    consolidator = Consolidator(graph=graph, event_log=log)
    await graph.upsert_entities(ada_variants())
    merge = await consolidator.merge(TENANT, entity_id(1), [entity_id(2)], reason="r")
    assert merge.event_id is not None
    await consolidator.undo(TENANT, merge.event_id)
    assert log.reads == 0


async def test_an_undo_of_an_event_that_is_not_a_merge_names_no_merge() -> None:
    world = World()
    await world.add(*ada_variants())
    merge = await world.consolidator.merge(TENANT, entity_id(1), [entity_id(2)], reason="r")
    assert merge.event_id is not None
    undo_id = await world.consolidator.undo(TENANT, merge.event_id)
    with pytest.raises(MergeUndoError, match="names no merge"):
        await world.consolidator.undo(TENANT, undo_id)
    with pytest.raises(MergeUndoError, match="names no merge"):
        await world.consolidator.undo(OTHER_TENANT, merge.event_id)


@pytest.mark.parametrize("logged", [True, False], ids=["delete-logged", "delete-unlogged"])
@pytest.mark.parametrize("deleted", [1, 2], ids=["by-canonical", "by-merged-id"])
async def test_deleting_a_merged_entity_stays_deleted_when_the_merge_is_undone(
    logged: bool, deleted: int
) -> None:
    """Merge b into a, delete a (or b, which reads as a): undo is refused, neither returns."""
    world = World()
    await world.add(*ada_variants())
    merge = await world.consolidator.merge(TENANT, entity_id(1), [entity_id(2)], reason="r")
    assert merge.event_id is not None
    removed = await delete_entity(
        entity_id(deleted),
        TENANT,
        graph=world.graph,
        vectors=world.vectors,
        event_log=world.log if logged else None,
    )
    assert removed is True
    with pytest.raises(MergeUndoError, match="deleted"):
        await world.consolidator.undo(TENANT, merge.event_id)
    pair = [entity_id(1), entity_id(2)]
    assert await world.graph.get_entities(pair, TENANT) == []
    assert await world.graph.resolve(pair, TENANT) == {i: i for i in pair}
    assert [await world.vectors.get(i, TENANT) for i in pair] == [None, None]


async def test_an_undo_points_a_relationship_at_where_its_other_end_was_merged_since() -> None:
    world = World()
    ada, reversed_, titled, babbage = ada_variants()
    knows = make_relationship(reversed_, babbage)
    await world.add(ada, reversed_, titled, babbage, relationships=(knows,))
    first = await world.consolidator.merge(TENANT, ada.id, [reversed_.id], reason="r")
    await world.consolidator.merge(TENANT, titled.id, [babbage.id], reason="r")
    assert first.event_id is not None
    await world.consolidator.undo(TENANT, first.event_id)
    [restored] = await world.graph.get_relationships(reversed_.id, TENANT)
    assert (restored.id, restored.source_entity_id, restored.target_entity_id) == (
        knows.id,
        reversed_.id,
        titled.id,
    )


async def test_a_declared_property_kind_decides_and_a_bad_one_is_refused() -> None:
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    twins = [
        make_entity(tenant_id=TENANT, name="Ada Lovelace", properties={"ref": ref})
        for ref in (100, 104)
    ]
    await graph.upsert_entities(twins)
    plain = await Consolidator(graph=graph, event_log=log).consolidate(TENANT, dry_run=True)
    assert len(plain.merges) == 1
    declared = Consolidator(
        graph=graph, event_log=log, property_kinds={"ref": PropertyKind.IDENTIFIER}
    )
    assert (await declared.consolidate(TENANT, dry_run=True)).merges == []
    for bad, match in (
        ([("ref", PropertyKind.IDENTIFIER)], "mapping"),
        ({"": PropertyKind.VALUE}, "keys"),
        ({"ref": "identifier"}, "PropertyKind"),
    ):
        with pytest.raises(ValueError, match=match):
            Consolidator(graph=graph, event_log=log, property_kinds=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("workers", "match"),
    [(0, "workers"), (-1, "workers"), (33, "workers"), (True, "workers"), ("2", "workers")],
)
def test_workers_must_be_a_count_of_processes(workers: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Consolidator(
            graph=InMemoryGraphStore(),
            event_log=InMemoryEventLog(),
            workers=workers,  # type: ignore[arg-type]
        )


async def test_workers_merge_what_one_process_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolution, "PARALLEL_PAIRS", 1)  # every round forks
    people = [
        ("Ada Lovelace", "18151210"), ("Ada Lovelase", "18151210"), ("Ada Lovelacey", "18151210"),
        ("A. Lovelace", None), ("Charles Babbage", "17911226"), ("Charles Babage", "17911226"),
        ("Charls Babbage", "17911226"), ("Mary Somerville", "17801226"),
        ("Mary Sommerville", "17801226"), ("Babbage", None),
    ]  # fmt: skip
    entities = [
        make_entity(id=entity_id(n + 1), name=name, properties={} if dob is None else {"born": dob})
        for n, (name, dob) in enumerate(people)
    ]
    reached = []
    for workers in (1, 2):
        graph, log = InMemoryGraphStore(), InMemoryEventLog()
        await graph.upsert_entities(entities)
        report = await Consolidator(graph=graph, event_log=log, workers=workers).consolidate(TENANT)
        merges = [(m.canonical_id, m.merged_ids, m.score, m.reason) for m in report.merges]
        reached.append((merges, report.candidates))
    assert reached[1] == reached[0]
    assert len(reached[0][0]) >= 2


def test_workers_need_processes_that_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consolidation, "can_fork", lambda: False)  # as on Windows
    with pytest.raises(ValueError, match="workers=2 needs processes that fork"):
        Consolidator(graph=InMemoryGraphStore(), event_log=InMemoryEventLog(), workers=2)
    Consolidator(graph=InMemoryGraphStore(), event_log=InMemoryEventLog(), workers=1)
