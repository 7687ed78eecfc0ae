"""A context: passages ranked by BM25 (and dense vectors), their entities and relationships."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast
from uuid import uuid4

import pytest

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.composition import Consolidator
from redstring.composition.context import ContextRetriever
from redstring.composition.documents import import_documents
from redstring.domain.context import ContextSettings
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import SourceId
from redstring.domain.source import SourceDocument
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.ports.graph_store import GraphReader
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.vector.adapters.memory import InMemoryVectorStore

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from redstring.domain.entity import Entity

TEXTS = {
    "ada": "Ada Lovelace wrote the first program. She worked with Charles Babbage.",
    "babbage": "Charles Babbage designed the Analytical Engine. It was never built.",
    "turing": "Alan Turing described a universal machine. He never met Ada Lovelace.",
}


def documents() -> list[SourceDocument]:
    return [SourceDocument(id=SourceId(key), text=text) for key, text in TEXTS.items()]


async def bm25_store() -> InMemoryChunkStore:
    chunks = InMemoryChunkStore()
    await import_documents(documents(), TENANT, chunks=chunks)
    return chunks


async def test_with_only_chunks_the_context_is_the_chunk_stores_bm25_search() -> None:
    chunks = await bm25_store()
    context = await ContextRetriever(chunks=chunks).retrieve_context("Babbage engine", TENANT, k=2)
    expected = await chunks.search("Babbage engine", TENANT, k=2)
    assert [p.chunk for p in context.passages] == [hit.chunk for hit in expected]
    assert [p.score for p in context.passages] == [hit.score for hit in expected]
    assert [p.bm25 for p in context.passages] == [hit.score for hit in expected]
    assert all(p.graph is None and p.dense is None for p in context.passages)
    assert context.passages[0].chunk.source_id == "babbage"
    assert (context.query, context.entities, context.relationships) == ("Babbage engine", [], [])


async def test_k_zero_gives_an_empty_context_and_another_tenant_sees_nothing() -> None:
    chunks = await bm25_store()
    retriever = ContextRetriever(chunks=chunks)
    assert (await retriever.retrieve_context("Babbage", TENANT, k=0)).passages == []
    assert (await retriever.retrieve_context("Babbage", OTHER_TENANT)).passages == []


async def test_a_budget_keeps_the_best_passage_whole_and_cuts_the_next_at_a_sentence_end() -> None:
    chunks = await bm25_store()
    retriever = ContextRetriever(chunks=chunks)
    full = await retriever.retrieve_context("Ada Lovelace Babbage", TENANT, k=3)
    first = full.passages[0].chunk.text
    second = full.passages[1].chunk.text
    sentence = second[: second.index(".") + 1]
    budget = len(first) + len(sentence) + 2
    context = await retriever.retrieve_context(
        "Ada Lovelace Babbage", TENANT, k=3, budget_chars=budget
    )
    assert [p.chunk.text for p in context.passages] == [first, sentence]
    trimmed = context.passages[1].chunk
    assert trimmed.end == trimmed.start + len(sentence)
    assert sum(len(p.chunk.text) for p in context.passages) <= budget


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": "  "}, "query"),
        ({"tenant_id": "tenant"}, "tenant_id"),
        ({"k": -1}, "k"),
        ({"k": True}, "k"),
        ({"budget_chars": 0}, "budget_chars"),
        ({"budget_chars": "100"}, "budget_chars"),
        ({"budget_chars": 1_000_001}, "budget_chars"),
    ],
)
async def test_bad_arguments_are_a_value_error_naming_them(
    arguments: dict[str, Any], named: str
) -> None:
    retriever = ContextRetriever(chunks=await bm25_store())
    call: dict[str, Any] = {"query": "Babbage", "tenant_id": TENANT, **arguments}
    with pytest.raises(ValueError, match=named):
        await retriever.retrieve_context(call.pop("query"), call.pop("tenant_id"), **call)


def test_bad_collaborators_are_refused_when_the_retriever_is_built() -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises(ValueError, match="chunks"):
        ContextRetriever(chunks=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="graph"):
        ContextRetriever(chunks=chunks, graph=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="passage_vectors"):
        ContextRetriever(chunks=chunks, embeddings=FakeEmbeddingProvider(dimension=8))
    with pytest.raises(DimensionMismatchError):
        ContextRetriever(
            chunks=chunks,
            embeddings=FakeEmbeddingProvider(dimension=8),
            passage_vectors=InMemoryVectorStore(dimension=4),
        )


async def test_given_a_graph_the_context_holds_the_entities_the_walk_reached_and_their_edges() -> (
    None
):
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    turing = make_entity(name="Alan Turing")
    await graph.upsert_entities([ada, babbage, turing])
    worked = make_relationship(ada, babbage, relationship_type="worked_with")
    read = make_relationship(turing, ada, relationship_type="read")
    await graph.upsert_relationships([worked, read])
    await import_documents(documents(), TENANT, chunks=chunks, graph=graph)
    retriever = ContextRetriever(chunks=chunks, graph=graph)
    context = await retriever.retrieve_context("What did Charles Babbage design?", TENANT, k=2)
    assert [e.entity.id for e in context.entities] == [babbage.id, ada.id]
    assert context.relationships == [worked]
    wider = await retriever.retrieve_context("What did Charles Babbage design?", TENANT, k=3)
    assert [e.entity.id for e in wider.entities] == [babbage.id, ada.id, turing.id]
    assert wider.relationships == sorted([worked, read], key=lambda edge: str(edge.id))
    assert all(p.graph is not None for p in wider.passages)
    # Ada's passage names both walked entities; Turing's only one, and no query word.
    assert [p.chunk.source_id for p in wider.passages] == ["ada", "babbage", "turing"]
    assert wider.passages[2].bm25 is None


async def dense_retriever() -> ContextRetriever:
    chunks, vectors = InMemoryChunkStore(), InMemoryVectorStore(dimension=16)
    embeddings = FakeEmbeddingProvider(dimension=16)
    await import_documents(
        documents(), TENANT, chunks=chunks, embeddings=embeddings, passage_vectors=vectors
    )
    return ContextRetriever(chunks=chunks, embeddings=embeddings, passage_vectors=vectors)


async def test_dense_passages_are_fused_with_bm25_by_normalized_score() -> None:
    retriever = await dense_retriever()
    query = TEXTS["turing"]  # the fake embeds equal texts equally: a perfect dense match
    context = await retriever.retrieve_context(query, TENANT, k=3)
    top = context.passages[0]
    assert top.chunk.source_id == "turing"
    assert top.dense == pytest.approx(1.0)
    assert top.bm25 is not None
    assert top.score == pytest.approx(2.0)
    assert all(p.dense is not None for p in context.passages)


async def test_a_passage_only_the_dense_channel_ranks_has_no_bm25_score() -> None:
    retriever = await dense_retriever()
    context = await retriever.retrieve_context(f"zzz{uuid4().hex}", TENANT, k=3)
    assert len(context.passages) == 3
    assert all(p.bm25 is None and p.dense is not None for p in context.passages)


def test_settings_of_another_type_or_out_of_range_are_a_value_error() -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises(ValueError, match="settings"):
        ContextRetriever(chunks=chunks, settings={"depth": 2})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth"):
        ContextSettings(depth=0)
    with pytest.raises(ValueError, match="decay"):
        ContextSettings(decay=1.5)


async def ada_knew_babbage() -> tuple[InMemoryGraphStore, InMemoryChunkStore, list[Entity]]:
    """Ada Lovelace --knew--> Charles Babbage, each with an article titled by their name."""
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    await graph.upsert_entities([ada, babbage])
    await graph.upsert_relationship(make_relationship(ada, babbage, relationship_type="knew"))
    titled = [
        SourceDocument(id=SourceId("ada"), title="Ada Lovelace", text=TEXTS["ada"]),
        SourceDocument(id=SourceId("babbage"), title="Charles Babbage", text=TEXTS["babbage"]),
    ]
    await import_documents(titled, TENANT, chunks=chunks, graph=graph)
    return graph, chunks, [ada, babbage]


async def test_without_linking_or_edge_weights_the_walk_still_starts_from_the_best_passages() -> (
    None
):
    graph, chunks, (ada, babbage) = await ada_knew_babbage()
    settings = ContextSettings(link_entities=False, weight_edges=False)
    context = await ContextRetriever(
        chunks=chunks, graph=graph, settings=settings
    ).retrieve_context("first program", TENANT, k=2)
    # BM25 finds Ada's article; its subject seeds the walk, which reaches Babbage.
    assert [e.entity.id for e in context.entities] == [ada.id, babbage.id]


async def test_an_entity_the_best_passages_are_about_outranks_one_the_walk_alone_reached() -> None:
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    turing = make_entity(name="Alan Turing")
    await graph.upsert_entities([ada, babbage, turing])
    await graph.upsert_relationships(
        [
            make_relationship(ada, babbage, relationship_type="worked_with"),
            make_relationship(turing, ada, relationship_type="read"),
        ]
    )
    titled = [
        SourceDocument(id=SourceId(key), title=title, text=TEXTS[key])
        for key, title in (
            ("ada", "Ada Lovelace"),
            ("babbage", "Charles Babbage"),
            ("turing", "Alan Turing"),
        )
    ]
    await import_documents(titled, TENANT, chunks=chunks, graph=graph)
    query = "Who worked with Ada Lovelace, or described a universal machine?"
    walked_only = ContextSettings(subject_weight=0.0)
    alone = await ContextRetriever(
        chunks=chunks, graph=graph, settings=walked_only
    ).retrieve_context(query, TENANT, k=3)
    # The walk weighs "worked_with" fully and "read" by the floor: Babbage before Turing.
    assert [e.entity.id for e in alone.entities] == [ada.id, babbage.id, turing.id]
    context = await ContextRetriever(chunks=chunks, graph=graph).retrieve_context(
        query, TENANT, k=3
    )
    # Turing's article is among the best passages: he rises above Babbage.
    assert context.passages[0].chunk.source_id == "turing"
    order = [e.entity.id for e in context.entities]
    assert order.index(turing.id) < order.index(babbage.id)


async def test_with_forward_fit_a_relationship_walked_backwards_weighs_the_floor() -> None:
    graph, chunks, _ = await ada_knew_babbage()

    async def graph_scores(settings: ContextSettings) -> dict[object, float | None]:
        context = await ContextRetriever(
            chunks=chunks, graph=graph, settings=settings
        ).retrieve_context("Who knew Charles Babbage?", TENANT, k=2)
        return {each.chunk.source_id: each.graph for each in context.passages}

    both_ways = await graph_scores(ContextSettings(passage_seeds=0))
    forward_only = await graph_scores(ContextSettings(passage_seeds=0, forward_fit=True))
    # From Babbage the walk goes backwards along "knew" to Ada: with
    # forward_fit that step weighs the floor, not the type's fit to "knew".
    assert forward_only["ada"] is not None
    assert both_ways["ada"] is not None
    assert forward_only["ada"] < both_ways["ada"]


async def test_a_passage_mentioning_an_id_merged_since_scores_for_its_canonical_entity() -> None:
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    countess = make_entity(name="Countess of Lovelace")
    await graph.upsert_entities([ada, babbage, countess])
    await graph.upsert_relationship(make_relationship(ada, babbage, relationship_type="knew"))
    notes = SourceDocument(id=SourceId("notes"), text="The Countess of Lovelace wrote notes.")
    await import_documents([notes], TENANT, chunks=chunks, graph=graph)
    # The mention keeps the countess's id; she is then merged into Ada.
    await Consolidator(graph=graph, event_log=InMemoryEventLog()).merge(
        TENANT, ada.id, [countess.id], reason="one person"
    )
    context = await ContextRetriever(
        chunks=chunks, graph=graph, settings=ContextSettings(passage_seeds=0)
    ).retrieve_context("Who knew Charles Babbage?", TENANT, k=2)
    # The walk reaches Ada from Babbage; the notes mention her under the merged id.
    [passage] = context.passages
    assert passage.chunk.source_id == "notes"
    assert passage.graph is not None
    assert passage.graph > 0
    assert [e.entity.id for e in context.entities] == [babbage.id, ada.id]


async def test_a_passage_is_about_the_entity_its_title_names_under_an_id_merged_since() -> None:
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, countess = make_entity(name="Ada Lovelace"), make_entity(name="Countess of Lovelace")
    await graph.upsert_entities([ada, countess])
    notes = SourceDocument(
        id=SourceId("notes"), title="Countess of Lovelace", text="The Countess of Lovelace wrote."
    )
    await import_documents([notes], TENANT, chunks=chunks, graph=graph)
    # Merging keeps the countess's name as Ada's alias; the mention keeps the countess's id.
    await Consolidator(graph=graph, event_log=InMemoryEventLog()).merge(
        TENANT, ada.id, [countess.id], reason="one person"
    )
    context = await ContextRetriever(
        chunks=chunks, graph=graph, settings=ContextSettings(link_entities=False)
    ).retrieve_context("Who wrote?", TENANT, k=2)
    # BM25's best passage is about Ada: she seeds the walk and is the context's entity.
    assert [e.entity.id for e in context.entities] == [ada.id]


class ReaderOnly:
    """Only `GraphReader`'s methods of a graph store: no `merged_ids` (`MergedIdReader`)."""

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self._inner = inner


def _delegate(name: str) -> Callable[..., Awaitable[Any]]:
    async def method(self: ReaderOnly, *args: Any, **kwargs: Any) -> Any:
        return await getattr(self._inner, name)(*args, **kwargs)

    return method


for _name in GraphReader.__protocol_attrs__:  # type: ignore[attr-defined]
    setattr(ReaderOnly, _name, _delegate(_name))


async def test_a_graph_that_cannot_list_merged_ids_reads_only_the_canonical_ids_mentions() -> None:
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    ada, babbage = make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")
    countess = make_entity(name="Countess of Lovelace")
    await graph.upsert_entities([ada, babbage, countess])
    await graph.upsert_relationship(make_relationship(ada, babbage, relationship_type="knew"))
    notes = SourceDocument(id=SourceId("notes"), text="The Countess of Lovelace wrote notes.")
    await import_documents([notes], TENANT, chunks=chunks, graph=graph)
    await Consolidator(graph=graph, event_log=InMemoryEventLog()).merge(
        TENANT, ada.id, [countess.id], reason="one person"
    )
    context = await ContextRetriever(
        chunks=chunks,
        graph=cast("GraphReader", ReaderOnly(graph)),
        settings=ContextSettings(passage_seeds=0),
    ).retrieve_context("Who knew Charles Babbage?", TENANT, k=2)
    # The walk reaches Ada, but the notes name her only under the merged id it cannot list.
    assert [p.graph for p in context.passages if p.chunk.source_id == "notes"] in ([], [None])
