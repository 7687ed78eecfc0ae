"""import_entities, delete_entity and build_graphs: the calls a user of the stores expects."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest

from redstring import (
    EMPTY,
    DimensionMismatchError,
    DocumentExtracted,
    EmptyCompletionError,
    EntitiesEmbedded,
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    SourceDocument,
    build_graphs,
    delete_entity,
    import_entities,
    replay,
)
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.vector import VectorRecord
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSION = 16


class CountingEmbeddings(FakeEmbeddingProvider):
    """The hash embedding, recording every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(dimension=DIMENSION)
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return await super().embed(texts)


def eid(n: int) -> EntityId:
    return EntityId(UUID(int=n))


def stores() -> tuple[InMemoryGraphStore, InMemoryVectorStore, CountingEmbeddings]:
    return InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION), CountingEmbeddings()


# -- import_entities ------------------------------------------------------------


async def test_imported_entities_keep_their_ids_and_their_names_are_embedded_typed() -> None:
    graph, vectors, embeddings = stores()
    ada = make_entity(id=eid(1), name="Ada Lovelace")
    engine = make_entity(id=eid(2), name="Analytical Engine", entity_type="machine")
    edge = make_relationship(ada, engine)
    progress: list[tuple[int, int]] = []
    report = await import_entities(
        [ada, engine],
        graph=graph,
        embeddings=embeddings,
        vectors=vectors,
        relationships=[edge],
        batch_size=1,
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert report.model_dump() == {
        "entities": 2,
        "duplicates": 0,
        "relationships": 1,
        "embedded": 2,
        "already_embedded": 0,
    }
    assert await graph.get_entity(eid(1), TENANT) == ada
    assert await graph.get_relationships(eid(1), TENANT) == [edge]
    record = await vectors.get(eid(2), TENANT)
    assert record is not None
    assert record.metadata == {"entity_type": "machine"}
    assert progress == [(1, 2), (2, 2)]


async def test_a_repeated_id_counts_as_a_duplicate_and_the_later_row_wins() -> None:
    graph = InMemoryGraphStore()
    first = make_entity(id=eid(1), name="Ada")
    later = make_entity(id=eid(1), name="Ada Lovelace")
    same_id_elsewhere = make_entity(id=eid(1), name="Ada", tenant_id=OTHER_TENANT)
    report = await import_entities([first, later, same_id_elsewhere], graph=graph)
    assert (report.entities, report.duplicates, report.embedded) == (2, 1, 0)
    assert await graph.get_entity(eid(1), TENANT) == later
    assert await graph.get_entity(eid(1), OTHER_TENANT) == same_id_elsewhere


async def test_reimporting_embeds_only_names_that_changed_or_lack_a_vector() -> None:
    graph, vectors, embeddings = stores()
    ada, alan = make_entity(id=eid(1), name="Ada"), make_entity(id=eid(2), name="Alan")
    grace = make_entity(id=eid(3), name="Grace")
    await import_entities([ada, alan, grace], graph=graph, embeddings=embeddings, vectors=vectors)
    await vectors.delete(grace.id, TENANT)
    embeddings.texts.clear()

    renamed = alan.model_copy(update={"name": "Alan Turing"})
    retyped = ada.model_copy(update={"entity_type": "mathematician"})
    report = await import_entities(
        [retyped, renamed, grace], graph=graph, embeddings=embeddings, vectors=vectors
    )

    assert sorted(embeddings.texts) == ["Ada", "Alan Turing", "Grace"]
    assert (report.embedded, report.already_embedded) == (3, 0)
    embeddings.texts.clear()
    report = await import_entities(
        [retyped, renamed, grace], graph=graph, embeddings=embeddings, vectors=vectors
    )
    assert embeddings.texts == []
    assert (report.embedded, report.already_embedded) == (0, 3)


async def test_an_import_is_recorded_so_replay_rebuilds_both_stores() -> None:
    graph, vectors, embeddings = stores()
    log = InMemoryEventLog()
    ada, engine = make_entity(id=eid(1)), make_entity(id=eid(2), name="Engine")
    theirs = make_entity(id=eid(1), tenant_id=OTHER_TENANT)
    await import_entities(
        [ada, engine, theirs],
        graph=graph,
        embeddings=embeddings,
        vectors=vectors,
        relationships=[make_relationship(ada, engine)],
        event_log=log,
        source_id="import:people.csv",
    )
    events = [stored.event for stored in await log.read(tenant_id=TENANT)]
    assert [type(event) for event in events] == [DocumentExtracted, EntitiesEmbedded]
    extracted = events[0]
    assert isinstance(extracted, DocumentExtracted)
    assert (extracted.source_id, extracted.domain, extracted.model) == (
        "import:people.csv",
        "import",
        "import",
    )
    rebuilt_graph, rebuilt_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    await replay(
        log, GraphProjection(rebuilt_graph), VectorProjection(rebuilt_vectors), tenant_id=TENANT
    )
    assert await rebuilt_graph.find_entities(TENANT) == await graph.find_entities(TENANT)
    assert await rebuilt_vectors.get(eid(2), TENANT) == await vectors.get(eid(2), TENANT)
    assert await rebuilt_graph.get_entity(eid(1), OTHER_TENANT) is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"embeddings": FakeEmbeddingProvider(dimension=DIMENSION)}, "go together"),
        ({"vectors": InMemoryVectorStore(dimension=DIMENSION)}, "go together"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"relationships": ["knows"]}, r"relationships\[0\]"),
    ],
)
async def test_a_refused_import_writes_nothing(arguments: dict[str, Any], message: str) -> None:
    graph = InMemoryGraphStore()
    with pytest.raises(ValueError, match=message):
        await import_entities([make_entity(id=eid(1))], graph=graph, **arguments)
    assert await graph.find_entities(TENANT) == []


async def test_a_bad_row_after_a_good_one_refuses_the_whole_import() -> None:
    graph = InMemoryGraphStore()
    with pytest.raises(ValueError, match=r"entities\[1\]"):
        await import_entities([make_entity(id=eid(1)), {"name": "Ada"}], graph=graph)  # type: ignore[list-item]
    assert await graph.find_entities(TENANT) == []


async def test_a_relationship_outside_the_imported_entities_is_refused_before_writing() -> None:
    graph = InMemoryGraphStore()
    ada, elsewhere = make_entity(id=eid(1)), make_entity(id=eid(2))
    with pytest.raises(ValueError, match="not among the event's entities"):
        await import_entities([ada], graph=graph, relationships=[make_relationship(ada, elsewhere)])
    theirs = make_entity(id=eid(3), tenant_id=OTHER_TENANT)
    with pytest.raises(ValueError, match="which none of the entities does"):
        await import_entities([ada], graph=graph, relationships=[make_relationship(theirs, theirs)])
    assert await graph.find_entities(TENANT) == []


async def test_an_embedding_model_of_another_dimension_is_refused() -> None:
    with pytest.raises(DimensionMismatchError):
        await import_entities(
            [make_entity()],
            graph=InMemoryGraphStore(),
            embeddings=FakeEmbeddingProvider(dimension=8),
            vectors=InMemoryVectorStore(dimension=DIMENSION),
        )


# -- delete_entity --------------------------------------------------------------


async def test_delete_entity_removes_it_from_both_channels_in_its_tenant_only() -> None:
    graph, vectors, embeddings = stores()
    ours, theirs = make_entity(id=eid(1)), make_entity(id=eid(1), tenant_id=OTHER_TENANT)
    await import_entities([ours, theirs], graph=graph, embeddings=embeddings, vectors=vectors)

    assert await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors) is True

    assert await graph.get_entity(eid(1), TENANT) is None
    assert await vectors.get(eid(1), TENANT) is None
    assert await graph.get_entity(eid(1), OTHER_TENANT) == theirs
    assert await vectors.get(eid(1), OTHER_TENANT) is not None
    assert await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors) is False


async def test_delete_entity_finishes_a_delete_the_graph_already_did() -> None:
    graph, vectors, embeddings = stores()
    await import_entities(
        [make_entity(id=eid(1))], graph=graph, embeddings=embeddings, vectors=vectors
    )
    await graph.delete_entity(eid(1), TENANT)
    assert await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors) is True
    assert await vectors.get(eid(1), TENANT) is None
    assert await delete_entity(eid(1), TENANT, graph=graph) is False


async def test_delete_entity_removes_a_vector_written_for_a_merged_id_after_the_merge() -> None:
    graph, vectors, embeddings = stores()
    canonical, merged, other = (make_entity(id=eid(n), name=f"Ada {n}") for n in (1, 2, 3))
    theirs = make_entity(id=eid(2), tenant_id=OTHER_TENANT)
    await import_entities(
        [canonical, merged, other, theirs], graph=graph, embeddings=embeddings, vectors=vectors
    )
    await graph.merge_entities(canonical, [merged.id])
    # A re-embed of the merged id after the merge writes its vector again.
    [vector] = await embeddings.embed([merged.name])
    await vectors.upsert_many([VectorRecord(entity_id=eid(2), tenant_id=TENANT, vector=vector)])
    assert await vectors.get(eid(2), TENANT) is not None

    # Deleted by the canonical's id, which the merged id's vector is not under.
    assert await delete_entity(eid(1), TENANT, graph=graph, vectors=vectors) is True

    assert await vectors.get(eid(1), TENANT) is None
    assert await vectors.get(eid(2), TENANT) is None
    assert await vectors.get(eid(3), TENANT) is not None
    assert await vectors.get(eid(2), OTHER_TENANT) is not None


# -- build_graphs ---------------------------------------------------------------


def answer(name: str) -> dict[str, Any]:
    return {"entities": [{"name": name, "entity_type": "person"}], "relationships": []}


class GatedLlm(FakeLlmProvider):
    """Answers by substring, counting how many extractions run at once."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__(by_substring=answers)
        self.running = 0
        self.most = 0

    async def extract(self, text: str, schema: Any, *, system_prompt: str | None = None) -> Any:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            return await super().extract(text, schema, system_prompt=system_prompt)
        finally:
            self.running -= 1


async def test_build_graphs_keeps_input_order_bounds_concurrency_and_reports_progress() -> None:
    names = [f"Person{n}" for n in range(7)]
    llm = GatedLlm({name: answer(name) for name in names})
    documents = [
        SourceDocument(id=SourceId(f"doc{n}"), text=f"About {name}.")
        for n, name in enumerate(names)
    ]
    graph, vectors, embeddings = stores()
    progress: list[tuple[int, int]] = []
    reports = await build_graphs(
        documents,
        provider=llm,
        store=graph,
        tenant_id=TENANT,
        concurrency=3,
        on_progress=lambda done, total: progress.append((done, total)),
        embedding_provider=embeddings,
        vector_store=vectors,
    )
    assert [report.entities for report in reports] == [1] * 7
    assert llm.most == 3
    assert progress == [(n, 7) for n in range(1, 8)]
    assert sorted(entity.name for entity in await graph.find_entities(TENANT)) == names


async def test_build_graphs_stops_at_a_failing_document_and_names_it() -> None:
    llm = FakeLlmProvider(by_substring={"Ada": answer("Ada")}, default=EMPTY)
    documents = [
        SourceDocument(id=SourceId("ada"), text="About Ada."),
        SourceDocument(id=SourceId("broken"), text="About nobody."),
        SourceDocument(id=SourceId("later"), text="About Ada again."),
    ]
    graph = InMemoryGraphStore()
    with pytest.raises(EmptyCompletionError) as raised:
        await build_graphs(documents, provider=llm, store=graph, tenant_id=TENANT, concurrency=1)
    assert raised.value.__notes__ == ["while building document 'broken'"]
    assert [entity.name for entity in await graph.find_entities(TENANT)] == ["Ada"]


@pytest.mark.parametrize("concurrency", [0, -1, True, 1.5])
async def test_build_graphs_refuses_a_bad_concurrency(concurrency: Any) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        await build_graphs(
            [],
            provider=FakeLlmProvider(script=[]),
            store=InMemoryGraphStore(),
            tenant_id=TENANT,
            concurrency=concurrency,
        )


async def test_build_graphs_refuses_something_other_than_documents_before_any_call() -> None:
    llm = GatedLlm({"Ada": answer("Ada")})
    with pytest.raises(ValueError, match=r"documents\[1\]"):
        await build_graphs(
            [SourceDocument(id=SourceId("ada"), text="Ada"), "text"],  # type: ignore[list-item]
            provider=llm,
            store=InMemoryGraphStore(),
            tenant_id=TENANT,
        )
    assert llm.most == 0


async def test_build_graphs_starts_no_document_after_on_progress_raises() -> None:
    llm = GatedLlm({"Ada": answer("Ada"), "Alan": answer("Alan")})
    documents = [
        SourceDocument(id=SourceId(name), text=f"About {name}.") for name in ("Ada", "Alan")
    ]
    graph = InMemoryGraphStore()

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        raise Stop

    with pytest.raises(Stop):
        await build_graphs(
            documents, provider=llm, store=graph, tenant_id=TENANT, concurrency=1, on_progress=stop
        )
    assert [entity.name for entity in await graph.find_entities(TENANT)] == ["Ada"]
