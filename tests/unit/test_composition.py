"""build_graph: a document in, a graph and its vectors out, or nothing at all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from redstring import (
    AUTO,
    DimensionMismatchError,
    EmbeddingProviderError,
    FakeEmbeddingProvider,
    FakeLlmProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    MalformedCompletionError,
    PartialExtractionError,
    SlidingWindowChunker,
    SourceDocument,
    SourceId,
    UnknownDomainError,
    build_graph,
    replay,
)
from redstring.composition import GraphBuildReport
from redstring.projections import GraphProjection, VectorProjection
from redstring.testing.factories import OTHER_TENANT, TENANT

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSION = 384
TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine."
ANSWER: dict[str, Any] = {
    "entities": [
        {"name": "Ada Lovelace", "entity_type": "person"},
        {"name": "Charles Babbage", "entity_type": "person"},
        {"name": "Analytical Engine", "entity_type": "machine"},
    ],
    "relationships": [
        {
            "source_name": "Ada Lovelace",
            "target_name": "Charles Babbage",
            "relationship_type": "collaborated_with",
        },
        {
            "source_name": "Charles Babbage",
            "target_name": "Nobody At All",
            "relationship_type": "knew",
        },
    ],
}
DOCUMENT = SourceDocument(id=SourceId("ada"), text=TEXT)


def provider(**answers: Any) -> FakeLlmProvider:
    return FakeLlmProvider(by_substring=answers or {"Lovelace": ANSWER})


async def snapshot(graph: InMemoryGraphStore, vectors: InMemoryVectorStore) -> dict[str, Any]:
    """Everything the stores hold for TENANT, in a comparable form."""
    entities = await graph.find_entities(TENANT)
    relationships = sorted(
        {
            relationship.model_dump_json()
            for entity in entities
            for relationship in await graph.get_relationships(entity.id, TENANT)
        }
    )
    records = [await vectors.get(entity.id, TENANT) for entity in entities]
    return {"entities": entities, "relationships": relationships, "vectors": records}


async def test_a_document_becomes_entities_relationships_and_typed_vectors() -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    report = await build_graph(
        DOCUMENT,
        provider=provider(),
        store=graph,
        tenant_id=TENANT,
        embedding_provider=FakeEmbeddingProvider(dimension=DIMENSION),
        vector_store=vectors,
    )
    assert report == GraphBuildReport(
        entities=3,
        relationships=1,
        chunks=1,
        failed_chunks=0,
        dropped_rows=0,
        unresolved_relationships=1,
        embedded=3,
        domain="general",
        domain_confidence=1.0,
    )
    [babbage] = await graph.find_entities(TENANT, name="Charles Babbage")
    assert [each.name for each in await graph.neighbors(babbage.id, TENANT)] == ["Ada Lovelace"]
    assert babbage.blocking_keys
    record = await vectors.get(babbage.id, TENANT)
    assert record is not None
    assert record.metadata == {"entity_type": "person"}


async def test_a_type_filter_finds_the_same_entity_on_the_semantic_channel() -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    await build_graph(
        DOCUMENT,
        provider=provider(),
        store=graph,
        tenant_id=TENANT,
        embedding_provider=embeddings,
        vector_store=vectors,
    )
    [query] = await embeddings.embed(["Analytical Engine"])
    matches = await vectors.search(query, TENANT, k=5, entity_types=["machine"])
    [engine] = await graph.find_entities(TENANT, entity_type="machine")
    assert [match.entity_id for match in matches] == [engine.id]


async def test_building_the_same_document_twice_leaves_the_stores_as_after_once() -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    arguments: dict[str, Any] = {
        "provider": provider(),
        "store": graph,
        "tenant_id": TENANT,
        "embedding_provider": FakeEmbeddingProvider(dimension=DIMENSION),
        "vector_store": vectors,
    }
    await build_graph(DOCUMENT, **arguments)
    once = await snapshot(graph, vectors)
    await build_graph(DOCUMENT, **arguments)
    assert await snapshot(graph, vectors) == once


async def test_two_tenants_building_one_document_each_see_only_their_own() -> None:
    graph = InMemoryGraphStore()
    await build_graph(DOCUMENT, provider=provider(), store=graph, tenant_id=TENANT)
    await build_graph(DOCUMENT, provider=provider(), store=graph, tenant_id=OTHER_TENANT)
    mine = await graph.find_entities(TENANT)
    theirs = await graph.find_entities(OTHER_TENANT)
    assert len(mine) == len(theirs) == 3
    assert {entity.tenant_id for entity in mine} == {TENANT}
    assert not {entity.id for entity in mine} & {entity.id for entity in theirs}


async def test_the_event_log_replays_into_empty_stores_exactly() -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    log = InMemoryEventLog()
    await build_graph(
        DOCUMENT,
        provider=provider(),
        store=graph,
        tenant_id=TENANT,
        embedding_provider=FakeEmbeddingProvider(dimension=DIMENSION),
        vector_store=vectors,
        event_log=log,
    )
    assert await log.last_sequence() == 2
    rebuilt_graph, rebuilt_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    await replay(log, GraphProjection(rebuilt_graph), VectorProjection(rebuilt_vectors))
    assert await snapshot(rebuilt_graph, rebuilt_vectors) == await snapshot(graph, vectors)


# -- refused before any model call ----------------------------------------------


@pytest.mark.parametrize("only", ["embedding_provider", "vector_store"])
async def test_an_embedding_provider_without_a_vector_store_is_refused_first(only: str) -> None:
    model = provider()
    collaborators: dict[str, Any] = {
        "embedding_provider": FakeEmbeddingProvider(dimension=DIMENSION),
        "vector_store": InMemoryVectorStore(dimension=DIMENSION),
    }
    with pytest.raises(ValueError, match="embedding_provider and vector_store"):
        await build_graph(
            DOCUMENT,
            provider=model,
            store=InMemoryGraphStore(),
            tenant_id=TENANT,
            **{only: collaborators[only]},
        )
    assert model.calls == ()


async def test_mismatched_dimensions_are_refused_before_any_model_call() -> None:
    model = provider()
    with pytest.raises(DimensionMismatchError) as raised:
        await build_graph(
            DOCUMENT,
            provider=model,
            store=InMemoryGraphStore(),
            tenant_id=TENANT,
            embedding_provider=FakeEmbeddingProvider(dimension=768),
            vector_store=InMemoryVectorStore(dimension=DIMENSION),
        )
    assert (raised.value.expected, raised.value.actual) == (DIMENSION, 768)
    assert model.calls == ()


async def test_an_unknown_domain_is_refused_before_any_model_call() -> None:
    model = provider()
    with pytest.raises(UnknownDomainError, match="general"):
        await build_graph(
            DOCUMENT, provider=model, store=InMemoryGraphStore(), tenant_id=TENANT, domain="poetry"
        )
    assert model.calls == ()


# -- failures write nothing -------------------------------------------------------

TWO_CHUNKS = SlidingWindowChunker(size=40, overlap=0, min_size=0)
LONG = SourceDocument(
    id=SourceId("long"), text="Ada Lovelace was first. " + "Broken chunk follows here."
)


async def test_a_failed_chunk_raises_partial_extraction_and_writes_nothing() -> None:
    graph = InMemoryGraphStore()
    model = FakeLlmProvider(by_substring={"Lovelace": ANSWER}, default={"entities": "broken"})
    with pytest.raises(PartialExtractionError) as raised:
        await build_graph(LONG, provider=model, store=graph, tenant_id=TENANT, chunker=TWO_CHUNKS)
    assert (raised.value.failed_chunks, raised.value.total_chunks) == (1, 2)
    assert isinstance(raised.value.__cause__, MalformedCompletionError)
    assert await graph.find_entities(TENANT) == []


async def test_skip_failed_chunks_keeps_the_rest_and_counts_the_failure() -> None:
    graph = InMemoryGraphStore()
    model = FakeLlmProvider(by_substring={"Lovelace": ANSWER}, default={"entities": "broken"})
    report = await build_graph(
        LONG,
        provider=model,
        store=graph,
        tenant_id=TENANT,
        chunker=TWO_CHUNKS,
        skip_failed_chunks=True,
    )
    assert (report.chunks, report.failed_chunks, report.entities) == (2, 1, 3)
    assert len(await graph.find_entities(TENANT)) == 3


async def test_a_malformed_answer_for_the_only_chunk_names_the_model() -> None:
    graph = InMemoryGraphStore()
    model = FakeLlmProvider(
        model="acme/extractor-2", default={"entities": "broken"}, by_substring={}
    )
    with pytest.raises(MalformedCompletionError, match="acme/extractor-2"):
        await build_graph(
            DOCUMENT, provider=model, store=graph, tenant_id=TENANT, skip_failed_chunks=True
        )
    assert await graph.find_entities(TENANT) == []


async def test_allow_partial_keeps_even_nothing() -> None:
    model = FakeLlmProvider(default={"entities": "broken"}, by_substring={})
    report = await build_graph(
        DOCUMENT, provider=model, store=InMemoryGraphStore(), tenant_id=TENANT, allow_partial=True
    )
    assert (report.chunks, report.failed_chunks, report.entities) == (1, 1, 0)


async def test_a_failed_embedding_leaves_both_stores_untouched() -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    log = InMemoryEventLog()
    with pytest.raises(EmbeddingProviderError):
        await build_graph(
            DOCUMENT,
            provider=provider(),
            store=graph,
            tenant_id=TENANT,
            embedding_provider=FakeEmbeddingProvider(dimension=DIMENSION, fail_on="Babbage"),
            vector_store=vectors,
            event_log=log,
        )
    assert await graph.find_entities(TENANT) == []
    assert await log.last_sequence() == 0


# -- domains ---------------------------------------------------------------------


async def test_auto_asks_the_model_for_the_domain_and_uses_it() -> None:
    model = FakeLlmProvider(script=[{"domain": "news", "confidence": 0.8}, ANSWER])
    report = await build_graph(
        DOCUMENT, provider=model, store=InMemoryGraphStore(), tenant_id=TENANT, domain=AUTO
    )
    assert (report.domain, report.domain_confidence, report.entities) == ("news", 0.8, 3)
    assert len(model.calls) == 2


async def test_auto_falls_back_to_general_with_zero_confidence() -> None:
    model = FakeLlmProvider(script=[{"domain": "poetry", "confidence": 0.9}, ANSWER])
    report = await build_graph(
        DOCUMENT, provider=model, store=InMemoryGraphStore(), tenant_id=TENANT, domain=AUTO
    )
    assert (report.domain, report.domain_confidence) == ("general", 0.0)


async def test_a_named_domain_is_used_with_full_confidence() -> None:
    model = provider()
    report = await build_graph(
        DOCUMENT, provider=model, store=InMemoryGraphStore(), tenant_id=TENANT, domain="academic"
    )
    assert (report.domain, report.domain_confidence) == ("academic", 1.0)
    [(_, system_prompt)] = model.calls
    assert system_prompt is not None
    assert "academic" in system_prompt.lower()


async def test_the_collaborators_it_was_handed_are_left_open() -> None:
    model, embeddings = provider(), FakeEmbeddingProvider(dimension=DIMENSION)
    await build_graph(
        DOCUMENT,
        provider=model,
        store=InMemoryGraphStore(),
        tenant_id=TENANT,
        embedding_provider=embeddings,
        vector_store=InMemoryVectorStore(dimension=DIMENSION),
    )
    assert not model.closed
    assert not embeddings.closed


def test_auto_reads_as_what_it_is() -> None:
    assert repr(AUTO) == "AUTO"


class _MiscountingEmbeddings(FakeEmbeddingProvider):
    """A provider that breaks its port's contract: one vector too few."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return (await super().embed(texts))[:-1]


class _ShortVectorEmbeddings(FakeEmbeddingProvider):
    """A provider that breaks its port's contract: vectors shorter than it says."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [vector[:-1] for vector in await super().embed(texts)]


@pytest.mark.parametrize(
    ("embeddings", "error"),
    [
        (_MiscountingEmbeddings(dimension=DIMENSION), EmbeddingProviderError),
        (_ShortVectorEmbeddings(dimension=DIMENSION), DimensionMismatchError),
    ],
    ids=["wrong-count", "wrong-length"],
)
async def test_a_provider_that_breaks_its_contract_fails_before_any_write(
    embeddings: FakeEmbeddingProvider, error: type[Exception]
) -> None:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    with pytest.raises(error):
        await build_graph(
            DOCUMENT,
            provider=provider(),
            store=graph,
            tenant_id=TENANT,
            embedding_provider=embeddings,
            vector_store=vectors,
        )
    assert await graph.find_entities(TENANT) == []


async def test_a_bare_string_for_the_document_is_refused_before_any_model_call() -> None:
    model = provider()
    with pytest.raises(ValueError, match="document must be a SourceDocument, got str"):
        await build_graph(
            TEXT,  # type: ignore[arg-type]
            provider=model,
            store=InMemoryGraphStore(),
            tenant_id=TENANT,
        )
    assert model.calls == ()
