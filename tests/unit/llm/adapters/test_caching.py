"""CachingEmbeddingProvider: the model's vectors, each distinct recent text embedded once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring import (
    CachingEmbeddingProvider,
    EmbeddingProvider,
    EmbeddingProviderError,
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    PassageEmbedder,
    Retriever,
    import_entities,
)
from redstring.testing.factories import TENANT, make_entity
from redstring.testing.support import property_settings, run

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSION = 4


def fake(**overrides: object) -> FakeEmbeddingProvider:
    return FakeEmbeddingProvider(dimension=DIMENSION, **overrides)  # type: ignore[arg-type]


async def test_a_text_held_is_answered_without_the_model_and_each_new_one_asked_once() -> None:
    inner = fake()
    cached = CachingEmbeddingProvider(inner)
    assert (cached.model, cached.dimension) == (inner.model, DIMENSION)
    first = await cached.embed(["ada", "bob", "ada"])
    assert first == await inner.embed(["ada", "bob", "ada"])
    assert await cached.embed(["bob", "cy", "ada"]) == await inner.embed(["bob", "cy", "ada"])
    # The two calls of the cache, then the two comparisons made straight to the model.
    assert inner.calls == (("ada", "bob"), ("ada", "bob", "ada"), ("cy",), ("bob", "cy", "ada"))
    assert cached.held == 3
    assert await cached.embed([]) == []


async def test_the_text_used_longest_ago_goes_first_and_size_zero_holds_nothing() -> None:
    inner = fake()
    cached = CachingEmbeddingProvider(inner, size=2)
    await cached.embed(["a", "b"])
    await cached.embed(["a"])  # "a" is now the newest
    await cached.embed(["c"])  # so "b" goes
    await cached.embed(["a", "c", "b"])
    assert inner.calls == (("a", "b"), ("c",), ("b",))
    assert cached.held == 2
    nothing = CachingEmbeddingProvider(inner, size=0)
    await nothing.embed(["a"])
    await nothing.embed(["a"])
    assert (inner.calls[-2:], nothing.held) == ((("a",), ("a",)), 0)


async def test_a_caller_changing_a_vector_changes_nothing_held() -> None:
    cached = CachingEmbeddingProvider(fake())
    [vector] = await cached.embed(["ada"])
    expected = list(vector)
    vector[0] = 99.0
    assert await cached.embed(["ada"]) == [expected]


async def test_a_failed_call_keeps_nothing() -> None:
    inner = fake(fail_on="bad")
    cached = CachingEmbeddingProvider(inner)
    with pytest.raises(EmbeddingProviderError):
        await cached.embed(["good", "bad"])
    assert cached.held == 0


class Miscounting:
    """A model that answers one vector short, or one component short."""

    def __init__(self, *, short_vector: bool) -> None:
        self.short_vector = short_vector

    @property
    def model(self) -> str:
        return "miscounting"

    @property
    def dimension(self) -> int:
        return DIMENSION

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.short_vector:
            return [[1.0] * (DIMENSION - 1) for _ in texts]
        return [[1.0] * DIMENSION for _ in texts][1:]


@pytest.mark.parametrize(
    ("short_vector", "message"),
    [(False, "returned 1 vectors for 2 texts"), (True, "3 components for 'a', not 4")],
)
async def test_a_model_answering_the_wrong_shape_is_refused_by_name(
    short_vector: bool, message: str
) -> None:
    cached = CachingEmbeddingProvider(Miscounting(short_vector=short_vector))
    with pytest.raises(EmbeddingProviderError, match=rf"'miscounting': .*{message}"):
        await cached.embed(["a", "b"])
    assert cached.held == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"embeddings": object()}, "embeddings"),
        ({"size": -1}, "size"),
        ({"size": True}, "size"),
        ({"size": "3"}, "size"),
        ({"size": 10**7}, "size"),
    ],
)
def test_bad_arguments_are_refused_by_name(arguments: dict[str, object], message: str) -> None:
    given = {"embeddings": fake(), **arguments}
    with pytest.raises(ValueError, match=message):
        CachingEmbeddingProvider(**given)  # type: ignore[arg-type]


async def test_texts_that_are_not_a_sequence_of_strings_are_refused() -> None:
    cached = CachingEmbeddingProvider(fake())
    with pytest.raises(ValueError, match="texts"):
        await cached.embed("ada")
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        await cached.embed(["ada", 3])  # type: ignore[list-item]


class PassageForm(FakeEmbeddingProvider):
    """A fake with a passage form of its own: the vector of `"passage: " + text`."""

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.embed([f"passage: {text}" for text in texts])


async def test_passages_go_to_the_models_passage_form_or_its_embed_and_are_never_held() -> None:
    with_form = PassageForm(dimension=DIMENSION)
    cached = CachingEmbeddingProvider(with_form)
    assert isinstance(cached, PassageEmbedder)
    assert isinstance(cached, EmbeddingProvider)
    assert await cached.embed_passages(["ada"]) == await with_form.embed(["passage: ada"])
    plain = fake()
    assert await CachingEmbeddingProvider(plain).embed_passages(["ada"]) == await plain.embed(
        ["ada"]
    )
    assert cached.held == 0


async def test_a_retriever_asked_the_same_query_twice_embeds_it_once() -> None:
    inner = fake()
    cached = CachingEmbeddingProvider(inner)
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    await import_entities(
        [make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage")],
        graph=graph,
        embeddings=inner,
        vectors=vectors,
    )
    retriever = Retriever(graph=graph, embeddings=cached, vectors=vectors)
    before = len(inner.calls)
    first = await retriever.retrieve("Ada Lovelase", TENANT)
    assert await retriever.retrieve("Ada Lovelase", TENANT) == first
    assert inner.calls[before:] == (("Ada Lovelase",),)


batches = st.lists(st.lists(st.sampled_from("abcde"), max_size=4), max_size=6)


@property_settings(60)
@given(asked=batches, size=st.integers(0, 3))
@example(asked=[["a", "b", "c"], ["a"], ["b", "c", "a"]], size=2)
def test_every_answer_is_the_models_and_at_most_size_texts_are_held(
    asked: list[list[str]], size: int
) -> None:
    async def scenario() -> None:
        inner = fake()
        cached = CachingEmbeddingProvider(inner, size=size)
        for batch in asked:
            assert await cached.embed(batch) == await fake().embed(batch)
            assert cached.held <= size
        # Each model call asked only texts it was not holding, each once.
        for call in inner.calls:
            assert len(call) == len(set(call))

    run(scenario())
