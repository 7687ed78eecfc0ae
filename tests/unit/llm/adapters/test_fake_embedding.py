"""The hash-based embedding model is deterministic, order-preserving and meaningless."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.exceptions import ClosedError, EmbeddingProviderError
from redstring.domain.vector import cosine_similarity
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.lifetime import LifetimeCompliance

texts = st.text(max_size=30)
SMALL = 16


def test_the_fake_satisfies_the_embedding_provider_and_lifetime_ports() -> None:
    provider = FakeEmbeddingProvider()

    assert isinstance(provider, EmbeddingProvider)
    assert isinstance(provider, AsyncClosable)


def test_the_defaults_are_fake_hash_v1_at_768_dimensions() -> None:
    provider = FakeEmbeddingProvider()

    assert (provider.model, provider.dimension) == ("fake/hash-v1", 768)


@given(dimension=st.integers(min_value=1, max_value=1024), batch=st.lists(texts, max_size=4))
@example(dimension=1, batch=[""])
@example(dimension=1024, batch=["Ada", "Ada"])
async def test_every_vector_has_the_configured_dimension(dimension: int, batch: list[str]) -> None:
    vectors = await FakeEmbeddingProvider(dimension=dimension).embed(batch)

    assert len(vectors) == len(batch)
    assert all(len(vector) == dimension for vector in vectors)


@given(st.lists(texts, min_size=1, max_size=6))
@example(["Ada", "Babbage"])
@example(["Ada", "Ada", ""])
async def test_the_vectors_come_back_in_input_order(batch: list[str]) -> None:
    provider = FakeEmbeddingProvider(dimension=SMALL)

    one_by_one = [(await provider.embed([text]))[0] for text in batch]

    assert await provider.embed(batch) == one_by_one
    assert await provider.embed(batch[::-1]) == one_by_one[::-1]


@given(texts)
@example("")
@example("\ud800")
async def test_identical_texts_get_identical_vectors_from_any_instance(text: str) -> None:
    first = (await FakeEmbeddingProvider(dimension=SMALL).embed([text]))[0]
    second = (await FakeEmbeddingProvider(dimension=SMALL).embed([text]))[0]

    assert first == second
    assert cosine_similarity(first, second) == pytest.approx(1.0)


@given(texts, texts)
@example("Ada", "ada")
@example("Ada", "Ada ")
@example("", " ")
async def test_different_texts_get_unrelated_vectors(left: str, right: str) -> None:
    if left == right:
        return
    vectors = await FakeEmbeddingProvider(dimension=384).embed([left, right])

    assert vectors[0] != vectors[1]
    assert abs(cosine_similarity(vectors[0], vectors[1])) < 0.3


@given(texts)
@example("")
@example("\x00")
async def test_components_are_finite_non_zero_float32_values_on_the_unit_range(text: str) -> None:
    (vector,) = await FakeEmbeddingProvider(dimension=SMALL).embed([text])

    assert all(isinstance(x, float) and math.isfinite(x) and 0 < abs(x) <= 1 for x in vector)
    assert all(float(np.float32(x)) == x for x in vector)


async def test_a_vector_follows_the_documented_hash_of_the_utf8_bytes() -> None:
    (vector,) = await FakeEmbeddingProvider(dimension=4).embed(["Ada Muñoz"])

    digest = hashlib.shake_256("Ada Muñoz".encode()).digest(8)
    half = (2**16 - 1) / 2
    expected = [(raw - half) / half for raw in struct.unpack("<4H", digest)]
    assert vector == pytest.approx(expected, rel=1e-6)


async def test_a_vector_is_the_same_in_another_process_with_another_hash_seed() -> None:
    script = (
        "import asyncio, json\n"
        "from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider\n"
        "print(json.dumps(asyncio.run(FakeEmbeddingProvider(dimension=8).embed(['Ada']))))\n"
    )
    environment = {**os.environ, "PYTHONHASHSEED": "12345"}

    completed = subprocess.run(  # noqa: ASYNC221 - a one-off child process in a test
        [sys.executable, "-c", script], capture_output=True, check=True, env=environment
    )

    assert json.loads(completed.stdout) == await FakeEmbeddingProvider(dimension=8).embed(["Ada"])


async def test_an_empty_batch_returns_no_vectors_and_records_no_call() -> None:
    provider = FakeEmbeddingProvider()

    assert await provider.embed([]) == []
    assert provider.calls == ()


async def test_every_non_empty_call_is_recorded_as_its_texts_in_order() -> None:
    provider = FakeEmbeddingProvider(dimension=SMALL)

    await provider.embed(["Ada", "Babbage"])
    await provider.embed([])
    await provider.embed(("Lovelace",))

    assert provider.calls == (("Ada", "Babbage"), ("Lovelace",))


async def test_a_text_containing_fail_on_raises_an_error_naming_the_model_and_is_recorded() -> None:
    provider = FakeEmbeddingProvider(model="m/flaky", dimension=SMALL, fail_on="boom")

    assert len(await provider.embed(["Ada"])) == 1
    with pytest.raises(EmbeddingProviderError, match=r"'m/flaky'.*texts\[1\].*'boom'") as caught:
        await provider.embed(["Ada", "kaboom!"])

    assert caught.value.model == "m/flaky"
    assert provider.calls == (("Ada",), ("Ada", "kaboom!"))


@pytest.mark.parametrize("dimension", [0, -1, True, False, 1.5, "3", None, 65_537])
def test_a_dimension_that_is_not_a_positive_int_is_refused_naming_it(dimension: object) -> None:
    with pytest.raises(ValueError, match=rf"^dimension must be .*{re.escape(repr(dimension))}$"):
        FakeEmbeddingProvider(dimension=dimension)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["", "  ", None])
def test_a_blank_model_name_is_refused(model: object) -> None:
    with pytest.raises(ValueError, match="model must be a non-blank string"):
        FakeEmbeddingProvider(model=model)  # type: ignore[arg-type]


def test_a_fail_on_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(ValueError, match="fail_on must be a string or None"):
        FakeEmbeddingProvider(fail_on=3)  # type: ignore[arg-type]


async def test_an_item_that_is_not_a_string_is_refused_naming_its_index() -> None:
    provider = FakeEmbeddingProvider(dimension=SMALL)

    with pytest.raises(ValueError, match=r"texts\[2\] must be a string, got b'Ada'"):
        await provider.embed(["Ada", "Babbage", b"Ada"])  # type: ignore[list-item]

    assert provider.calls == ()


async def test_a_bare_string_is_refused_rather_than_embedded_character_by_character() -> None:
    provider = FakeEmbeddingProvider(dimension=SMALL)

    with pytest.raises(ValueError, match="texts must be a sequence of strings"):
        await provider.embed("Ada")

    assert provider.calls == ()


async def test_mutating_a_returned_vector_does_not_change_a_later_one() -> None:
    provider = FakeEmbeddingProvider(dimension=SMALL)
    (first,) = await provider.embed(["Ada"])
    expected = list(first)

    first[0] = 0.0

    assert (await provider.embed(["Ada"]))[0] == expected


class TestFakeEmbeddingProviderLifetime(LifetimeCompliance):
    port = EmbeddingProvider

    def new_adapter(self) -> FakeEmbeddingProvider:
        return FakeEmbeddingProvider(dimension=SMALL)


async def test_a_closed_fake_embeds_nothing_and_records_no_call() -> None:
    provider = FakeEmbeddingProvider(model="fake/closed", dimension=SMALL)
    await provider.close()

    with pytest.raises(ClosedError, match=r"FakeEmbeddingProvider\(model='fake/closed'\)"):
        await provider.embed(["Ada"])

    assert provider.calls == ()
    assert (provider.model, provider.dimension) == ("fake/closed", SMALL)


async def test_the_context_manager_does_not_swallow_an_exception() -> None:
    provider = FakeEmbeddingProvider(fail_on="Ada")

    with pytest.raises(EmbeddingProviderError):
        async with provider:
            await provider.embed(["Ada"])

    assert provider.closed


@pytest.mark.parametrize("model", [f"fake{chr(0xD800)}", "fake\x00"])
def test_a_model_name_no_event_could_hold_is_refused_naming_it(model: str) -> None:
    with pytest.raises(ValueError, match="model contains"):
        FakeEmbeddingProvider(model=model)
