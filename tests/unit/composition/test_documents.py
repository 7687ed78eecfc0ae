"""Documents into a chunk store with their mentions, through merges, deletes and replays."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import pytest

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.composition import Consolidator, build_graph, delete_entity
from redstring.composition.documents import (
    DocumentImportReport,
    chunk_id_for,
    delete_document,
    entity_mentions,
    import_documents,
    mentioned_entities,
)
from redstring.domain.chunk import Mention
from redstring.domain.events import PassagesEmbedded
from redstring.domain.exceptions import DimensionMismatchError, EmbeddingProviderError
from redstring.domain.ids import ChunkId, EntityId, SourceId
from redstring.domain.source import SourceDocument
from redstring.domain.vector import VectorRecord
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.extraction.chunking import Chunk as TextChunk
from redstring.extraction.chunking import SlidingWindowChunker
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.fake import FakeLlmProvider
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.projections import ChunkProjection, PassageVectorProjection, replay
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity
from redstring.vector.adapters.memory import InMemoryVectorStore

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId

TEXT = "Ada Lovelace worked with Charles Babbage. Later, Babbage met Ada Lovelace again."
ANSWER: dict[str, Any] = {
    "entities": [
        {"name": "Ada Lovelace", "entity_type": "person"},
        {
            "name": "Charles Babbage",
            "entity_type": "person",
            "properties": {"aliases": ["Babbage"]},
        },
        {"name": "Analytical Engine", "entity_type": "machine"},
    ],
    "relationships": [
        {
            "source_name": "Ada Lovelace",
            "target_name": "Charles Babbage",
            "relationship_type": "collaborated_with",
        }
    ],
}


def document(text: str = TEXT, source: str = "ada") -> SourceDocument:
    return SourceDocument(id=SourceId(source), text=text, title="Ada")


async def everything(store: InMemoryChunkStore, tenant: TenantId, *sources: str) -> Any:
    """What the store holds of `sources` in `tenant`, in a comparable form."""
    chunks = [c for s in sources for c in await store.get_source_chunks(SourceId(s), tenant)]
    mentions = await store.mentions_in([c.id for c in chunks], tenant)
    return chunks, mentions


async def test_build_graph_keeps_its_chunks_and_where_each_entity_and_relationship_is_said() -> (
    None
):
    graph, chunks, log = InMemoryGraphStore(), InMemoryChunkStore(), InMemoryEventLog()
    await build_graph(
        document(),
        provider=FakeLlmProvider(by_substring={"Lovelace": ANSWER}),
        store=graph,
        tenant_id=TENANT,
        chunks=chunks,
        event_log=log,
    )
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    assert (chunk.text, chunk.start, chunk.end, chunk.ordinal) == (TEXT, 0, 80, 0)
    assert chunk.metadata == {"title": "Ada"}
    by_name = {e.name: e for e in await graph.find_entities(TENANT)}
    mentions = await chunks.mentions_in([chunk.id], TENANT)
    spans = {(m.entity_id, m.start, m.end) for m in mentions if m.entity_id is not None}
    ada, babbage, engine = (
        by_name["Ada Lovelace"].id,
        by_name["Charles Babbage"].id,
        by_name["Analytical Engine"].id,
    )
    assert spans == {
        (ada, 0, 12),
        (ada, 61, 73),
        (babbage, 25, 40),
        (babbage, 49, 56),
        (engine, None, None),  # read from the chunk, named nowhere in it
    }
    [edge] = [m for m in mentions if m.relationship_id is not None]
    assert (edge.start, edge.end) == (49, 73)  # the shortest: "Babbage met Ada Lovelace"

    rebuilt = InMemoryChunkStore()
    await replay(log, ChunkProjection(rebuilt))
    assert await everything(rebuilt, TENANT, "ada") == await everything(chunks, TENANT, "ada")


async def test_build_graph_without_a_chunk_store_records_no_chunks() -> None:
    log = InMemoryEventLog()
    await build_graph(
        document(),
        provider=FakeLlmProvider(by_substring={"Lovelace": ANSWER}),
        store=InMemoryGraphStore(),
        tenant_id=TENANT,
        event_log=log,
    )
    assert [stored.event.kind for stored in await log.read()] == ["document_extracted"]


async def test_a_relationship_whose_ends_are_not_both_named_in_its_chunk_has_no_span() -> None:
    answer = {
        **ANSWER,
        "relationships": [
            {
                "source_name": "Ada Lovelace",
                "target_name": "Analytical Engine",
                "relationship_type": "described",
            }
        ],
    }
    chunks = InMemoryChunkStore()
    await build_graph(
        document(),
        provider=FakeLlmProvider(by_substring={"Lovelace": answer}),
        store=InMemoryGraphStore(),
        tenant_id=TENANT,
        chunks=chunks,
    )
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    [edge] = [m for m in await chunks.mentions_in([chunk.id], TENANT) if m.relationship_id]
    assert (edge.start, edge.end) == (None, None)


async def test_each_chunk_records_only_what_was_extracted_from_it() -> None:
    text = "Ada Lovelace wrote notes. " * 3 + "Charles Babbage built engines. " * 3
    chunks = InMemoryChunkStore()
    answers = {
        "Ada": {"entities": [{"name": "Ada Lovelace", "entity_type": "person"}]},
        "Charles": {"entities": [{"name": "Charles Babbage", "entity_type": "person"}]},
    }
    graph = InMemoryGraphStore()
    await build_graph(
        document(text),
        provider=FakeLlmProvider(by_substring=answers, default={"entities": []}),
        store=graph,
        tenant_id=TENANT,
        chunks=chunks,
        chunker=SlidingWindowChunker(size=80, overlap=0, min_size=0),
    )
    held = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    assert [(c.start, c.end) for c in held] == [(0, 78), (78, 156), (156, 171)]
    names = await mentioned_entities([c.id for c in held], TENANT, chunks=chunks, graph=graph)
    assert [[e.name for e in names[c.id]] for c in held] == [
        ["Ada Lovelace"],
        ["Charles Babbage"],
        [],
    ]


async def test_import_documents_chunks_indexes_and_records_without_a_model() -> None:
    chunks, log = InMemoryChunkStore(), InMemoryEventLog()
    docs = [document("Lisbon is by the sea. " * 80, "lisbon"), document("Oslo is cold.", "oslo")]
    report = await import_documents(docs, TENANT, chunks=chunks, event_log=log)
    assert report == DocumentImportReport(
        documents=2, chunks=3, replaced=0, mentions=0, linked_entities=0, embedded=0
    )
    lisbon = await chunks.get_source_chunks(SourceId("lisbon"), TENANT)
    assert [(c.start, c.end) for c in lisbon] == [(0, 1000), (900, 1760)]
    [best] = await chunks.search("cold", TENANT, k=1)
    assert best.chunk.source_id == "oslo"
    assert [stored.event.kind for stored in await log.read()] == ["document_chunked"] * 2
    assert await chunks.count_chunks(OTHER_TENANT) == 0


async def test_import_links_whole_proper_words_of_names_and_aliases_and_each_namesake() -> None:
    graph = InMemoryGraphStore()
    paris_fr, paris_tx = (
        make_entity(name="Paris", entity_type="city"),
        make_entity(name="Paris", entity_type="city"),
    )
    york = make_entity(name="New York City", entity_type="city", properties={"aliases": ["NYC"]})
    of = make_entity(name="Of", entity_type="city")
    other_tenant = make_entity(id=york.id, tenant_id=OTHER_TENANT, name="Oslo", entity_type="city")
    await graph.upsert_entities([paris_fr, paris_tx, york, of, other_tenant])
    chunks = InMemoryChunkStore()
    text = "Paris, not Parisville; the mayor of NYC and New York City. Of is a town; paris."
    report = await import_documents([document(text)], TENANT, chunks=chunks, graph=graph)
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    found = {
        (m.entity_id, text[m.start or 0 : m.end])
        for m in await chunks.mentions_in([chunk.id], TENANT)
    }
    assert found == {
        (paris_fr.id, "Paris"),
        (paris_tx.id, "Paris"),
        (york.id, "NYC"),
        (york.id, "New York City"),
        (of.id, "Of"),
    }
    assert (report.mentions, report.linked_entities) == (5, 4)
    names = await mentioned_entities([chunk.id], TENANT, chunks=chunks, graph=graph)
    parises = sorted([paris_fr.id, paris_tx.id], key=str)
    assert [e.id for e in names[chunk.id]] == [*parises, york.id, of.id]


async def test_mentioned_entities_lists_each_entity_once_in_order_of_first_mention() -> None:
    graph = InMemoryGraphStore()
    oslo, rome = (
        make_entity(name="Oslo", entity_type="city"),
        make_entity(name="Rome", entity_type="city"),
    )
    await graph.upsert_entities([oslo, rome])
    chunks = InMemoryChunkStore()
    await import_documents(
        [document("Rome, then Oslo, then Rome.")], TENANT, chunks=chunks, graph=graph
    )
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    missing = ChunkId(chunk_id_for(TENANT, SourceId("none"), 0, "x"))
    names = await mentioned_entities([chunk.id, missing], TENANT, chunks=chunks, graph=graph)
    assert [e.name for e in names[chunk.id]] == ["Rome", "Oslo"]
    assert names[missing] == []


async def test_mentions_follow_a_merge_and_its_undo() -> None:
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    ada = make_entity(name="Ada Lovelace")
    countess = make_entity(name="Countess of Lovelace")
    await graph.upsert_entities([ada, countess])
    chunks = InMemoryChunkStore()
    text = "The Countess of Lovelace wrote notes."
    await import_documents([document(text)], TENANT, chunks=chunks, graph=graph)
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    consolidator = Consolidator(graph=graph, event_log=log)
    merge = await consolidator.merge(TENANT, ada.id, [countess.id], reason="one person")
    names = await mentioned_entities([chunk.id], TENANT, chunks=chunks, graph=graph)
    assert [e.id for e in names[chunk.id]] == [ada.id]
    assert merge.event_id is not None
    await consolidator.undo(TENANT, merge.event_id)
    names = await mentioned_entities([chunk.id], TENANT, chunks=chunks, graph=graph)
    assert [e.id for e in names[chunk.id]] == [countess.id]


@pytest.fixture(params=["memory", "sqlite"])
def graph_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> InMemoryGraphStore | SqliteGraphStore:
    if request.param == "memory":
        return InMemoryGraphStore()
    return SqliteGraphStore(tmp_path / "graph.db")


async def test_an_entitys_mentions_take_in_those_merged_into_it_and_an_undo_splits_them(
    graph_store: InMemoryGraphStore | SqliteGraphStore,
) -> None:
    graph, log, chunks = graph_store, InMemoryEventLog(), InMemoryChunkStore()
    ada = make_entity(name="Ada Lovelace")
    countess = make_entity(name="Countess of Lovelace")
    augusta = make_entity(name="Augusta King")
    await graph.upsert_entities([ada, countess, augusta])
    text = "Ada Lovelace, the Countess of Lovelace, was born Augusta King."
    await import_documents([document(text)], TENANT, chunks=chunks, graph=graph)

    async def said(entity: EntityId) -> list[EntityId | None]:
        found = await entity_mentions(entity, TENANT, chunks=chunks, graph=graph)
        return [mention.entity_id for mention in found]

    def ids(*entities: Entity) -> list[EntityId | None]:
        """The ids in `mention_order`'s order: one chunk, so by `str(id)`."""
        return sorted((entity.id for entity in entities), key=str)

    assert await said(ada.id) == [ada.id]
    consolidator = Consolidator(graph=graph, event_log=log)
    first = await consolidator.merge(TENANT, countess.id, [augusta.id], reason="one name")
    second = await consolidator.merge(TENANT, ada.id, [countess.id], reason="one person")
    assert await said(ada.id) == ids(ada, countess, augusta)
    # A merged id reads as its canonical, as graph reads do.
    assert await said(augusta.id) == ids(ada, countess, augusta)
    assert second.event_id is not None
    assert first.event_id is not None
    await consolidator.undo(TENANT, second.event_id)
    assert await said(ada.id) == [ada.id]
    assert await said(countess.id) == ids(countess, augusta)
    await consolidator.undo(TENANT, first.event_id)
    assert await said(countess.id) == [countess.id]
    assert await said(augusta.id) == [augusta.id]


async def test_entity_mentions_refuses_a_graph_that_cannot_list_merged_ids() -> None:
    with pytest.raises(ValueError, match="graph"):
        await entity_mentions(
            make_entity().id,
            TENANT,
            chunks=InMemoryChunkStore(),
            graph=object(),  # type: ignore[arg-type]
        )


class _PassageForm(FakeEmbeddingProvider):
    """A fake with a passage form of its own: the hash of `"passage: " + text`."""

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed([f"passage: {text}" for text in texts])


@pytest.mark.parametrize("form", ["passage: ", ""])
async def test_passages_are_embedded_in_the_models_passage_form_when_it_has_one(form: str) -> None:
    embeddings = _PassageForm(dimension=16) if form else FakeEmbeddingProvider(dimension=16)
    chunks, vectors = InMemoryChunkStore(), InMemoryVectorStore(dimension=16)
    await import_documents(
        [document("Oslo is cold.")],
        TENANT,
        chunks=chunks,
        embeddings=embeddings,
        passage_vectors=vectors,
    )
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    record = await vectors.get(EntityId(chunk.id), TENANT)
    assert record is not None
    [expected] = await FakeEmbeddingProvider(dimension=16).embed([form + chunk.text])
    assert list(record.vector) == expected


async def test_deleting_an_entity_through_the_log_drops_its_mentions_on_replay_too() -> None:
    graph, log, chunks = InMemoryGraphStore(), InMemoryEventLog(), InMemoryChunkStore()
    oslo = make_entity(name="Oslo", entity_type="city")
    await graph.upsert_entities([oslo])
    await import_documents(
        [document("Oslo is cold.")], TENANT, chunks=chunks, graph=graph, event_log=log
    )
    await delete_entity(oslo.id, TENANT, graph=graph, event_log=log)
    await replay(log, ChunkProjection(chunks))
    assert await chunks.mentions_of(TENANT, entity_ids=[oslo.id]) == []


async def test_deleting_a_document_drops_its_chunks_mentions_and_vectors_and_replay_agrees() -> (
    None
):
    graph, log = InMemoryGraphStore(), InMemoryEventLog()
    oslo = make_entity(name="Oslo", entity_type="city")
    await graph.upsert_entities([oslo])
    chunks, vectors = InMemoryChunkStore(), InMemoryVectorStore(dimension=16)
    embeddings = FakeEmbeddingProvider(dimension=16)
    keep = document("Oslo is cold.", "keep")
    await import_documents(
        [document("Oslo is far north.", "gone"), keep],
        TENANT,
        chunks=chunks,
        graph=graph,
        embeddings=embeddings,
        passage_vectors=vectors,
        event_log=log,
    )
    [gone] = await chunks.get_source_chunks(SourceId("gone"), TENANT)
    assert await vectors.get(EntityId(gone.id), TENANT) is not None
    same_ids_elsewhere = InMemoryChunkStore()
    assert (
        await delete_document(
            SourceId("gone"), TENANT, chunks=chunks, passage_vectors=vectors, event_log=log
        )
        == 1
    )
    assert await chunks.get_source_chunks(SourceId("gone"), TENANT) == []
    assert [m.chunk_id for m in await chunks.mentions_of(TENANT, entity_ids=[oslo.id])] != [gone.id]
    assert await vectors.get(EntityId(gone.id), TENANT) is None
    assert await delete_document(SourceId("gone"), TENANT, chunks=chunks, event_log=log) == 0

    rebuilt, rebuilt_vectors = InMemoryChunkStore(), InMemoryVectorStore(dimension=16)
    await replay(log, ChunkProjection(rebuilt), PassageVectorProjection(rebuilt_vectors))
    assert await everything(rebuilt, TENANT, "gone", "keep") == await everything(
        chunks, TENANT, "gone", "keep"
    )
    [kept] = await chunks.get_source_chunks(SourceId("keep"), TENANT)
    assert await rebuilt_vectors.get(EntityId(kept.id), TENANT) == await vectors.get(
        EntityId(kept.id), TENANT
    )
    assert await rebuilt_vectors.get(EntityId(gone.id), TENANT) is None
    assert await same_ids_elsewhere.count_chunks(TENANT) == 0


async def test_adding_a_changed_document_replaces_it_and_drops_the_vectors_of_chunks_it_lost() -> (
    None
):
    chunks, vectors, log = (
        InMemoryChunkStore(),
        InMemoryVectorStore(dimension=8),
        InMemoryEventLog(),
    )
    embeddings = FakeEmbeddingProvider(dimension=8)
    cutter = SlidingWindowChunker(size=20, overlap=0, min_size=0)
    common: dict[str, Any] = {
        "chunks": chunks,
        "embeddings": embeddings,
        "passage_vectors": vectors,
        "chunker": cutter,
        "event_log": log,
    }
    await import_documents([document("one two three four five six seven eight")], TENANT, **common)
    before = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    assert len(before) == 2
    report = await import_documents([document("one two three")], TENANT, **common)
    assert report.replaced == 1
    [after] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    assert after.text == "one two three"
    for chunk in before:
        assert await vectors.get(EntityId(chunk.id), TENANT) is None
    assert await vectors.get(EntityId(after.id), TENANT) is not None
    kinds = [stored.event.kind for stored in await log.read()]
    assert kinds[-3:] == ["document_deleted", "document_chunked", "passages_embedded"]


async def test_the_same_document_in_two_tenants_stays_apart() -> None:
    chunks = InMemoryChunkStore()
    await import_documents([document("Oslo is cold.")], TENANT, chunks=chunks)
    await import_documents([document("Rome is warm.")], OTHER_TENANT, chunks=chunks)
    [mine] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    [theirs] = await chunks.get_source_chunks(SourceId("ada"), OTHER_TENANT)
    assert (mine.text, theirs.text) == ("Oslo is cold.", "Rome is warm.")
    assert mine.id != theirs.id
    assert await chunks.search("rome", TENANT) == []


@pytest.mark.parametrize(
    ("documents", "match"),
    [
        pytest.param(
            [document(), "text"], r"documents\[1\] is not a SourceDocument", id="not-a-doc"
        ),
        pytest.param([document(), document()], "repeats the document id 'ada'", id="repeat"),
        pytest.param("text", "documents must be a sequence", id="a-string"),
    ],
)
async def test_bad_documents_are_refused_and_nothing_is_written(documents: Any, match: str) -> None:
    chunks, log = InMemoryChunkStore(), InMemoryEventLog()
    with pytest.raises(ValueError, match=match):
        await import_documents(documents, TENANT, chunks=chunks, event_log=log)
    assert await chunks.count_chunks(TENANT) == 0
    assert await log.read() == []


async def test_bad_collaborators_are_refused() -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises(ValueError, match="chunks"):
        await import_documents([document()], TENANT, chunks=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="graph"):
        await import_documents([document()], TENANT, chunks=chunks, graph=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="go together"):
        await import_documents(
            [document()], TENANT, chunks=chunks, embeddings=FakeEmbeddingProvider()
        )
    with pytest.raises(DimensionMismatchError):
        await import_documents(
            [document()],
            TENANT,
            chunks=chunks,
            embeddings=FakeEmbeddingProvider(dimension=8),
            passage_vectors=InMemoryVectorStore(dimension=4),
        )
    with pytest.raises(ValueError, match="on_progress"):
        await import_documents([document()], TENANT, chunks=chunks, on_progress=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tenant_id"):
        await import_documents([document()], "t", chunks=chunks)  # type: ignore[arg-type]
    assert await chunks.count_chunks(TENANT) == 0


async def test_a_failing_embedding_model_writes_nothing() -> None:
    chunks, vectors, log = (
        InMemoryChunkStore(),
        InMemoryVectorStore(dimension=8),
        InMemoryEventLog(),
    )
    with pytest.raises(EmbeddingProviderError):
        await import_documents(
            [document("Oslo is cold.")],
            TENANT,
            chunks=chunks,
            embeddings=FakeEmbeddingProvider(dimension=8, fail_on="Oslo"),
            passage_vectors=vectors,
            event_log=log,
        )
    assert (await chunks.count_chunks(TENANT), await log.read()) == (0, [])


async def test_progress_follows_the_documents_linked() -> None:
    graph = InMemoryGraphStore()
    await graph.upsert_entities([make_entity(name="Oslo", entity_type="city")])
    calls: list[tuple[int, int]] = []
    await import_documents(
        [document("Oslo and Rome, then oslo."), document("Rome, Oslo.", "b")],
        TENANT,
        chunks=InMemoryChunkStore(),
        graph=graph,
        on_progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(1, 2), (2, 2)]


async def test_delete_document_refuses_bad_arguments() -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises(ValueError, match="source_id"):
        await delete_document("  ", TENANT, chunks=chunks)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="passage_vectors"):
        await delete_document(SourceId("a"), TENANT, chunks=chunks, passage_vectors=object())  # type: ignore[arg-type]


def test_chunk_ids_are_deterministic_and_differ_by_tenant_position_and_text() -> None:
    one = chunk_id_for(TENANT, SourceId("a"), 0, "x")
    assert one == chunk_id_for(TENANT, SourceId("a"), 0, "x")
    assert (
        len(
            {
                one,
                chunk_id_for(OTHER_TENANT, SourceId("a"), 0, "x"),
                chunk_id_for(TENANT, SourceId("a"), 1, "x"),
                chunk_id_for(TENANT, SourceId("a"), 0, "y"),
            }
        )
        == 4
    )
    assert str(one) == str(chunk_id_for(TENANT, SourceId("a"), 0, "x"))


def test_a_mention_is_a_value() -> None:
    chunk_id = chunk_id_for(TENANT, SourceId("a"), 0, "x")
    entity_id = make_entity().id
    assert Mention(tenant_id=TENANT, chunk_id=chunk_id, entity_id=entity_id) == Mention(
        tenant_id=TENANT, chunk_id=chunk_id, entity_id=entity_id
    )


class BlankFirst:
    """Cuts a text into its first character (blank in these tests) and the rest."""

    def __init__(self, *, rest: bool = True) -> None:
        self._rest = rest

    def chunk(self, text: str) -> list[TextChunk]:
        pieces = [TextChunk(index=0, text=text[:1], start=0, end=1)]
        if self._rest:
            pieces.append(TextChunk(index=1, text=text[1:], start=1, end=len(text)))
        return pieces


class MiscountingEmbeddings:
    """An embedding model that answers with too few vectors, or vectors too short."""

    model = "miscounting"
    dimension = 4

    def __init__(self, *, short: bool) -> None:
        self._short = short

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._short:
            return [[1.0] for _ in texts]
        return []


async def test_blank_pieces_are_not_kept_and_what_was_read_from_them_has_no_mention() -> None:
    ghost = {
        "entities": [
            {"name": "Ghost", "entity_type": "person"},
            {"name": "Ada Lovelace", "entity_type": "person"},
        ],
        "relationships": [
            {"source_name": "Ghost", "target_name": "Ada Lovelace", "relationship_type": "haunts"}
        ],
    }
    chunks, graph = InMemoryChunkStore(), InMemoryGraphStore()
    await build_graph(
        document(" Ada Lovelace wrote."),
        provider=FakeLlmProvider(by_substring={"Lovelace": ANSWER}, default=ghost),
        store=graph,
        tenant_id=TENANT,
        chunks=chunks,
        chunker=BlankFirst(),
    )
    [chunk] = await chunks.get_source_chunks(SourceId("ada"), TENANT)
    assert (chunk.ordinal, chunk.start, chunk.text) == (0, 1, "Ada Lovelace wrote.")
    names = await mentioned_entities([chunk.id], TENANT, chunks=chunks, graph=graph)
    assert "Ghost" not in [entity.name for entity in names[chunk.id]]

    log = InMemoryEventLog()
    await build_graph(
        document(" x"),
        provider=FakeLlmProvider(by_substring={}, default=ghost),
        store=graph,
        tenant_id=OTHER_TENANT,
        chunks=chunks,
        chunker=BlankFirst(rest=False),
        event_log=log,
    )
    assert [stored.event.kind for stored in await log.read()] == ["document_extracted"]
    report = await import_documents(
        [document(" Oslo.")], OTHER_TENANT, chunks=chunks, chunker=BlankFirst()
    )
    assert report.chunks == 1


async def test_a_name_many_entities_share_links_every_one_of_them() -> None:
    graph = InMemoryGraphStore()
    towns = [make_entity(name="Springfield", entity_type="city") for _ in range(40)]
    await graph.upsert_entities(towns)
    chunks = InMemoryChunkStore()
    report = await import_documents(
        [document("Springfield has a river.")], TENANT, chunks=chunks, graph=graph
    )
    assert (report.mentions, report.linked_entities) == (40, 40)


@pytest.mark.parametrize("short", [False, True], ids=["too-few", "too-short"])
async def test_an_embedding_model_that_miscounts_is_refused_before_anything_is_written(
    short: bool,
) -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises((EmbeddingProviderError, DimensionMismatchError)):
        await import_documents(
            [document()],
            TENANT,
            chunks=chunks,
            embeddings=MiscountingEmbeddings(short=short),
            passage_vectors=InMemoryVectorStore(dimension=4),
        )
    assert await chunks.count_chunks(TENANT) == 0


async def test_replacing_a_document_without_passage_vectors_drops_its_lost_chunks() -> None:
    chunks = InMemoryChunkStore()
    cutter = SlidingWindowChunker(size=20, overlap=0, min_size=0)
    await import_documents(
        [document("one two three four five six seven")], TENANT, chunks=chunks, chunker=cutter
    )
    await import_documents([document("one two")], TENANT, chunks=chunks, chunker=cutter)
    assert [c.text for c in await chunks.get_source_chunks(SourceId("ada"), TENANT)] == ["one two"]


async def test_a_passage_vector_event_of_another_dimension_is_refused() -> None:
    event = PassagesEmbedded(
        event_id=uuid4(),
        tenant_id=TENANT,
        occurred_at=datetime.now(UTC),
        model="m",
        dimension=2,
        records=(VectorRecord(entity_id=EntityId(uuid4()), tenant_id=TENANT, vector=[1.0, 0.0]),),
    )
    with pytest.raises(DimensionMismatchError):
        await PassageVectorProjection(InMemoryVectorStore(dimension=3)).apply(event)
