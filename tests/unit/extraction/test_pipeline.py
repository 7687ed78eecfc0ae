"""The pipeline extracts every chunk, merges entities across chunks and resolves relationships."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel

from redstring.domain.entity import ExtractionMethod
from redstring.domain.exceptions import (
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
)
from redstring.domain.ids import SourceId
from redstring.domain.normalization import normalize_name
from redstring.domain.source import SourceDocument
from redstring.extraction.chunking import Chunk, SlidingWindowChunker
from redstring.extraction.mapping import entity_id_for, relationship_id_for
from redstring.extraction.pipeline import ExtractionPipeline, ExtractionResult
from redstring.llm.adapters.fake import EMPTY, EmptyAnswer, FakeLlmProvider
from redstring.testing.factories import OTHER_TENANT, TENANT

if TYPE_CHECKING:
    from collections.abc import Mapping

DOC = SourceId("doc-1")
PROMPT = "Extract people."


class ParagraphChunker:
    """One chunk per paragraph, each keeping the blank line that ends it."""

    def chunk(self, text: str) -> list[Chunk]:
        chunks: list[Chunk] = []
        start = 0
        while start < len(text):
            cut = text.find("\n\n", start)
            end = len(text) if cut == -1 else cut + 2
            chunks.append(Chunk(index=len(chunks), text=text[start:end], start=start, end=end))
            start = end
        return chunks


class DelayedProvider:
    """Answers as `inner` does, but paragraph `P<i>` waits longer the lower `i` is.

    Later chunks therefore finish first. Records the most calls in flight at once.
    """

    def __init__(self, inner: FakeLlmProvider, *, paragraphs: int) -> None:
        self._inner = inner
        self._paragraphs = paragraphs
        self.in_flight = 0
        self.peak = 0

    @property
    def model(self) -> str:
        return self._inner.model

    async def extract[S: BaseModel](
        self, text: str, schema: type[S], *, system_prompt: str | None = None
    ) -> S:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            index = int(text.split()[0].removeprefix("P"))
            await asyncio.sleep(0.002 * (self._paragraphs - index))
            return await self._inner.extract(text, schema, system_prompt=system_prompt)
        finally:
            self.in_flight -= 1


class ExplodingProvider:
    """Raises a `RuntimeError`, which is not a model failure, on text containing "boom"."""

    model = "fake/exploding"

    async def extract[S: BaseModel](
        self, text: str, schema: type[S], *, system_prompt: str | None = None
    ) -> S:
        await asyncio.sleep(0)
        if "boom" in text:
            raise RuntimeError("the network cable was cut")
        return schema.model_validate({})


def document(*paragraphs: str) -> SourceDocument:
    return SourceDocument(id=DOC, text="\n\n".join(paragraphs))


def person(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "entity_type": "person", **fields}


def edge(source: str, target: str, kind: str = "knew", **fields: Any) -> dict[str, Any]:
    return {"source_name": source, "target_name": target, "relationship_type": kind, **fields}


def said(*entities: dict[str, Any], relationships: tuple[dict[str, Any], ...] = ()) -> Any:
    return {"entities": list(entities), "relationships": list(relationships)}


async def run(
    answers: Mapping[str, dict[str, Any] | EmptyAnswer],
    doc: SourceDocument,
    *,
    tenant: Any = TENANT,
    concurrency: int = 1,
) -> ExtractionResult:
    provider = FakeLlmProvider(model="m/test", by_substring=answers)
    pipeline = ExtractionPipeline(provider, chunker=ParagraphChunker(), concurrency=concurrency)
    return await pipeline.run(doc, tenant_id=tenant, system_prompt=PROMPT)


@pytest.mark.parametrize("concurrency", [0, -1])
def test_a_concurrency_below_one_is_refused_naming_it(concurrency: int) -> None:
    with pytest.raises(ValueError, match=f"got {concurrency}"):
        ExtractionPipeline(FakeLlmProvider(script=[]), concurrency=concurrency)


async def test_a_short_document_is_one_chunk_under_the_default_chunker() -> None:
    provider = FakeLlmProvider(model="m/test", script=[said(person("Ada"), person("Charles"))])
    doc = SourceDocument(id=DOC, text="Ada met Charles.")

    result = await ExtractionPipeline(provider).run(doc, tenant_id=TENANT, system_prompt=PROMPT)

    assert result.chunks == 1
    assert provider.calls == (("Ada met Charles.", PROMPT),)
    assert [entity.name for entity in result.entities] == ["Ada", "Charles"]


async def test_every_chunk_is_sent_in_full_with_the_system_prompt() -> None:
    doc = document("P0 Ada.", "P1 Charles.", "P2 nobody.")
    provider = FakeLlmProvider(by_substring={"P": said()})
    pipeline = ExtractionPipeline(provider, chunker=ParagraphChunker())

    result = await pipeline.run(doc, tenant_id=TENANT, system_prompt=PROMPT)

    assert provider.calls == (
        ("P0 Ada.\n\n", PROMPT),
        ("P1 Charles.\n\n", PROMPT),
        ("P2 nobody.", PROMPT),
    )
    assert result.chunks == 3


async def test_a_relationship_is_built_between_the_entities_its_names_resolve_to() -> None:
    answer = said(
        person("Ada Lovelace"),
        person("Charles Babbage"),
        relationships=(
            edge(
                " ada  LOVELACE",
                "Charles Babbage",
                "worked_with",
                description="Notes",
                confidence=0.5,
            ),
        ),
    )

    result = await run({"P0": answer}, document("P0 Ada worked with Charles."))

    ada = entity_id_for(TENANT, DOC, "person", "Ada Lovelace")
    charles = entity_id_for(TENANT, DOC, "person", "Charles Babbage")
    [relationship] = result.relationships
    assert relationship.id == relationship_id_for(TENANT, DOC, "worked_with", ada, charles)
    assert (relationship.source_entity_id, relationship.target_entity_id) == (ada, charles)
    assert (relationship.tenant_id, relationship.source_id, relationship.model) == (
        TENANT,
        DOC,
        "m/test",
    )
    assert relationship.extraction_method is ExtractionMethod.LLM
    assert (relationship.relationship_type, relationship.description) == ("worked_with", "Notes")
    assert relationship.confidence == 0.5
    assert (result.dropped_rows, result.unresolved_relationships) == (0, 0)


async def test_the_same_name_in_two_chunks_merges_into_one_entity() -> None:
    answers = {
        "P0": said(person("Ada", confidence=0.6, properties={"a": 1, "b": 1})),
        "P1": said(
            person("ADA ", confidence=0.9, description="Mathematician", properties={"b": 2})
        ),
        "P2": said(person("ada", confidence=0.7, description="Countess", properties={"c": 3})),
    }

    result = await run(answers, document("P0 Ada.", "P1 ADA.", "P2 ada."))

    [entity] = result.entities
    assert entity.id == entity_id_for(TENANT, DOC, "person", "Ada")
    assert entity.name == "Ada"
    assert entity.confidence == 0.9
    assert entity.description == "Mathematician"
    assert entity.properties == {"a": 1, "b": 2, "c": 3}


async def test_entities_keep_the_order_they_were_first_seen_in() -> None:
    answers = {
        "P0": said(person("Charles"), person("Ada")),
        "P1": said(person("Mary"), person("Charles")),
    }

    result = await run(answers, document("P0", "P1"))

    assert [entity.name for entity in result.entities] == ["Charles", "Ada", "Mary"]


async def test_the_same_document_in_two_tenants_gets_different_ids_and_a_rerun_the_same() -> None:
    answers = {
        "P0": said(person("Ada"), person("Charles"), relationships=(edge("Ada", "Charles"),))
    }
    doc = document("P0 Ada knew Charles.")

    first, again, other = [
        await run(answers, doc, tenant=tenant) for tenant in (TENANT, TENANT, OTHER_TENANT)
    ]

    assert first == again
    assert {entity.id for entity in first.entities}.isdisjoint(e.id for e in other.entities)
    assert first.relationships[0].id != other.relationships[0].id
    assert {entity.tenant_id for entity in other.entities} == {OTHER_TENANT}


async def test_a_bad_entity_row_before_a_good_one_is_dropped_and_counted() -> None:
    answers = {"P0": said(person("  "), person("Ada"))}

    result = await run(answers, document("P0"))

    assert [entity.name for entity in result.entities] == ["Ada"]
    assert result.dropped_rows == 1


@pytest.mark.parametrize(
    ("failing_answer", "error_type"),
    [
        (EMPTY, EmptyCompletionError),
        ({"entities": "Ada"}, MalformedCompletionError),
    ],
)
async def test_a_failed_chunk_before_a_good_one_is_recorded_and_the_rest_kept(
    failing_answer: dict[str, Any] | EmptyAnswer, error_type: type[LlmProviderError]
) -> None:
    answers = {"P0": failing_answer, "P1": said(person("Ada"))}

    result = await run(answers, document("P0 broken", "P1 Ada"))

    [failure] = result.failed_chunks
    assert failure.index == 0
    assert isinstance(failure.error, error_type)
    assert result.chunks == 2
    assert [entity.name for entity in result.entities] == ["Ada"]


async def test_an_error_that_is_not_a_model_failure_propagates() -> None:
    pipeline = ExtractionPipeline(ExplodingProvider(), chunker=ParagraphChunker(), concurrency=2)

    with pytest.raises(RuntimeError, match="cable"):
        await pipeline.run(
            document("P0 fine", "P1 boom", "P2 fine", "P3 fine"),
            tenant_id=TENANT,
            system_prompt=PROMPT,
        )


async def test_a_relationship_naming_an_entity_from_another_chunk_resolves() -> None:
    answers = {
        "P0": said(person("Ada")),
        "P1": said(person("Charles"), relationships=(edge("Charles", "ada", "admired"),)),
    }

    result = await run(answers, document("P0", "P1"))

    [relationship] = result.relationships
    assert relationship.source_entity_id == entity_id_for(TENANT, DOC, "person", "Charles")
    assert relationship.target_entity_id == entity_id_for(TENANT, DOC, "person", "Ada")
    assert result.unresolved_relationships == 0


async def test_a_relationship_whose_end_matches_no_entity_is_counted_unresolved() -> None:
    rows = (edge("Ada", "Nobody"), edge("Nobody", "Ada"), edge("Ada", "Charles"))
    answers = {"P0": said(person("Ada"), person("Charles"), relationships=rows)}

    result = await run(answers, document("P0"))

    assert [r.target_entity_id for r in result.relationships] == [
        entity_id_for(TENANT, DOC, "person", "Charles")
    ]
    assert result.unresolved_relationships == 2
    assert result.dropped_rows == 0


async def test_an_end_naming_an_entity_of_a_failed_chunk_is_unresolved() -> None:
    answers = {
        "P0": EMPTY,
        "P1": said(person("Charles"), relationships=(edge("Charles", "Ada"),)),
    }

    result = await run(answers, document("P0 Ada", "P1 Charles"))

    assert (len(result.relationships), result.unresolved_relationships) == (0, 1)


@pytest.mark.parametrize(
    "bad",
    [
        edge("Ada", "Charles", " "),
        edge("Ada", "Charles", confidence=1.01),
        edge("Ada", "Charles", description="a" + chr(0)),
    ],
)
async def test_a_relationship_row_failing_validation_before_a_good_one_is_dropped_and_counted(
    bad: dict[str, Any],
) -> None:
    rows = (bad, edge("Charles", "Ada", "admired"))
    answers = {"P0": said(person("Ada"), person("Charles"), relationships=rows)}

    result = await run(answers, document("P0"))

    assert [r.relationship_type for r in result.relationships] == ["admired"]
    assert result.dropped_rows == 1
    assert result.unresolved_relationships == 0


@pytest.mark.parametrize("types", [("person", "ship"), ("ship", "person")])
async def test_a_name_shared_by_two_entities_resolves_to_the_lowest_id(
    types: tuple[str, str],
) -> None:
    rows = (edge("Charles", "Ada"),)
    entities = [{"name": "Ada", "entity_type": kind} for kind in types]
    answers = {"P0": said(*entities, person("Charles"), relationships=rows)}

    result = await run(answers, document("P0"))

    candidates = [entity_id_for(TENANT, DOC, kind, "Ada") for kind in types]
    [relationship] = result.relationships
    assert relationship.target_entity_id == min(candidates, key=str)


async def test_a_relationship_found_twice_merges_keeping_the_highest_confidence() -> None:
    answers = {
        "P0": said(
            person("Ada"),
            person("Charles"),
            relationships=(edge("Ada", "Charles", confidence=0.4),),
        ),
        "P1": said(
            relationships=(edge("ada", "charles", " KNEW", confidence=0.8, description="Friends"),)
        ),
        "P2": said(relationships=(edge("Ada", "Charles", confidence=0.6, description="Rivals"),)),
    }

    result = await run(answers, document("P0", "P1", "P2"))

    [relationship] = result.relationships
    assert relationship.confidence == 0.8
    assert relationship.description == "Friends"
    assert relationship.relationship_type == "knew"


def _answers_for(paragraphs: int) -> dict[str, dict[str, Any] | EmptyAnswer]:
    """Answers with a failure, a bad row, duplicates and relationships across chunks."""
    answers: dict[str, dict[str, Any] | EmptyAnswer] = {}
    for index in range(paragraphs):
        answers[f"P{index} "] = said(
            person(f"Person {index}", confidence=0.5 + index / 100, properties={"seen": index}),
            person("Ada", confidence=index / 10, description=f"seen in {index}"),
            person("" if index % 2 else f"Ship {index}"),
            relationships=(edge(f"Person {index}", f"Person {index + 1}"), edge("Ada", "Person 0")),
        )
    answers["P2 "] = EMPTY
    return answers


@pytest.mark.parametrize("concurrency", [2, 3, 10])
async def test_running_chunks_concurrently_gives_the_same_result_as_one_at_a_time(
    concurrency: int,
) -> None:
    paragraphs = 7
    doc = document(*(f"P{index} text" for index in range(paragraphs)))
    results = []
    providers = []
    for each in (1, concurrency):
        provider = DelayedProvider(
            FakeLlmProvider(by_substring=_answers_for(paragraphs)), paragraphs=paragraphs
        )
        pipeline = ExtractionPipeline(provider, chunker=ParagraphChunker(), concurrency=each)
        results.append(await pipeline.run(doc, tenant_id=TENANT, system_prompt=PROMPT))
        providers.append(provider)

    serial, concurrent = results
    assert concurrent.entities == serial.entities
    assert concurrent.relationships == serial.relationships
    assert [(f.index, str(f.error)) for f in concurrent.failed_chunks] == [
        (f.index, str(f.error)) for f in serial.failed_chunks
    ]
    assert (concurrent.chunks, concurrent.dropped_rows, concurrent.unresolved_relationships) == (
        serial.chunks,
        serial.dropped_rows,
        serial.unresolved_relationships,
    )
    assert (serial.chunks, len(serial.failed_chunks), serial.dropped_rows) == (7, 1, 3)
    assert [p.peak for p in providers] == [1, min(concurrency, paragraphs)]


names = st.sampled_from(["Ada", "ada", " ADA ", "Charles", "charles babbage", "Mary"])


@given(st.lists(st.lists(names, max_size=4), min_size=1, max_size=4))
@example([["Ada"]])
@example([["Ada"], ["ADA"], [" ada"]])
@example([[], []])
async def test_there_is_one_entity_per_distinct_normalized_name_with_its_derived_id(
    chunks: list[list[str]],
) -> None:
    answers = {f"P{i} ": said(*(person(name) for name in chunk)) for i, chunk in enumerate(chunks)}
    doc = document(*(f"P{i} text" for i in range(len(chunks))))

    result = await run(answers, doc)

    first_seen = list(dict.fromkeys(normalize_name(name) for chunk in chunks for name in chunk))
    assert [normalize_name(entity.name) for entity in result.entities] == first_seen
    assert [entity.id for entity in result.entities] == [
        entity_id_for(TENANT, DOC, "person", name) for name in first_seen
    ]
    assert result.chunks == len(chunks)


async def test_the_sliding_window_chunker_feeds_the_pipeline_end_to_end() -> None:
    text = " ".join(["Ada"] * 30 + ["Charles"] * 30)
    provider = FakeLlmProvider(
        by_substring={"Charles": said(person("Charles")), "Ada": said(person("Ada"))}
    )
    chunker = SlidingWindowChunker(size=100, overlap=10, min_size=10)
    pipeline = ExtractionPipeline(provider, chunker=chunker, concurrency=2)

    result = await pipeline.run(
        SourceDocument(id=DOC, text=text), tenant_id=TENANT, system_prompt=PROMPT
    )

    assert result.chunks == len(chunker.chunk(text)) > 1
    assert {entity.name for entity in result.entities} == {"Ada", "Charles"}
