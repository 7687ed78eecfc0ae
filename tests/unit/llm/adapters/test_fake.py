"""The scripted language model answers as told and fails like a real one."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from redstring.domain.exceptions import (
    ClosedError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
)
from redstring.llm.adapters.fake import EMPTY, FakeLlmProvider
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider
from redstring.testing.lifetime import LifetimeCompliance


class Person(BaseModel):
    name: str
    tags: list[str] = []
    properties: dict[str, Any] = {}


def person(name: str, *tags: str) -> dict[str, Any]:
    return {"name": name, "tags": list(tags)}


names = st.text(max_size=20)


def test_the_fake_satisfies_the_llm_provider_and_lifetime_ports() -> None:
    provider = FakeLlmProvider(script=[])

    assert isinstance(provider, LlmProvider)
    assert isinstance(provider, AsyncClosable)


def test_the_default_model_name_is_fake_canned_v1() -> None:
    assert FakeLlmProvider(script=[]).model == "fake/canned-v1"


def test_empty_has_a_repr_that_names_it_and_survives_a_deep_copy() -> None:
    assert repr(EMPTY) == "EMPTY"
    assert copy.deepcopy(EMPTY) is EMPTY


@given(st.lists(names, max_size=5))
@example([])
async def test_a_script_is_answered_in_order_then_reports_exhaustion(
    script_names: list[str],
) -> None:
    provider = FakeLlmProvider(model="m/scripted", script=[person(n) for n in script_names])

    answers = [(await provider.extract("any text", Person)).name for _ in script_names]

    assert answers == script_names
    with pytest.raises(LlmProviderError, match=r"'m/scripted'.*script exhausted") as caught:
        await provider.extract("any text", Person)
    assert caught.value.model == "m/scripted"


async def test_by_substring_answers_with_the_first_key_in_mapping_order_found_in_the_text() -> None:
    provider = FakeLlmProvider(
        by_substring={"Lovelace": person("first"), "Ada": person("second")},
    )

    assert (await provider.extract("Ada Lovelace", Person)).name == "first"
    assert (await provider.extract("Ada Byron", Person)).name == "second"


async def test_by_substring_matches_the_text_and_never_the_system_prompt() -> None:
    provider = FakeLlmProvider(by_substring={"Ada": person("Ada")}, default=person("default"))

    answer = await provider.extract("Babbage", Person, system_prompt="Ada")

    assert answer.name == "default"


async def test_by_substring_falls_back_to_the_default_when_no_key_occurs() -> None:
    provider = FakeLlmProvider(by_substring={"Ada": person("Ada")}, default=person("nobody"))

    assert (await provider.extract("Charles Babbage", Person)).name == "nobody"


async def test_by_substring_without_a_default_raises_naming_the_model_when_no_key_occurs() -> None:
    provider = FakeLlmProvider(model="m/keyed", by_substring={"Ada": person("Ada")})

    with pytest.raises(LlmProviderError, match=r"'m/keyed'.*no by_substring key") as caught:
        await provider.extract("Charles Babbage", Person)
    assert type(caught.value) is LlmProviderError


@pytest.mark.parametrize(
    "provider",
    [
        FakeLlmProvider(model="m/empty", script=[EMPTY]),
        FakeLlmProvider(model="m/empty", by_substring={"Ada": EMPTY}),
        FakeLlmProvider(model="m/empty", by_substring={}, default=EMPTY),
    ],
    ids=["script", "by_substring", "default"],
)
async def test_an_empty_answer_raises_empty_completion_error_naming_the_model(
    provider: FakeLlmProvider,
) -> None:
    with pytest.raises(EmptyCompletionError, match="'m/empty'") as caught:
        await provider.extract("Ada", Person)
    assert caught.value.model == "m/empty"


@pytest.mark.parametrize(
    "payload",
    [{}, {"name": 3}, {"name": "Ada", "tags": "not a list"}],
    ids=["missing-field", "wrong-type", "wrong-nested-type"],
)
async def test_an_answer_that_fails_the_schema_raises_malformed_completion_error(
    payload: dict[str, Any],
) -> None:
    provider = FakeLlmProvider(model="m/strict", script=[payload])

    with pytest.raises(MalformedCompletionError, match="'m/strict'") as caught:
        await provider.extract("Ada", Person)
    assert caught.value.model == "m/strict"
    assert "Person" in caught.value.detail
    assert isinstance(caught.value.__cause__, ValidationError)


def test_giving_neither_script_nor_by_substring_is_refused() -> None:
    with pytest.raises(ValueError, match=r"exactly one of script or by_substring.*neither"):
        FakeLlmProvider()


def test_giving_both_script_and_by_substring_is_refused() -> None:
    with pytest.raises(ValueError, match=r"exactly one of script or by_substring.*both"):
        FakeLlmProvider(script=[], by_substring={})


def test_a_default_alongside_a_script_is_refused() -> None:
    with pytest.raises(ValueError, match="default applies only to by_substring"):
        FakeLlmProvider(script=[], default=person("Ada"))


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"script": [person("Ada"), "Ada"]}, r"script\[1\]"),
        ({"by_substring": {"Ada": None}}, r"by_substring\['Ada'\]"),
        ({"by_substring": {}, "default": ["Ada"]}, "default"),
    ],
    ids=["script", "by_substring", "default"],
)
def test_an_answer_that_is_neither_a_mapping_nor_empty_is_refused_where_it_stands(
    arguments: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValueError, match=f"{named} must be a mapping or EMPTY"):
        FakeLlmProvider(**arguments)


def test_a_bare_string_as_the_script_is_refused() -> None:
    with pytest.raises(ValueError, match="script must be a sequence"):
        FakeLlmProvider(script="Ada")  # type: ignore[arg-type]


def test_a_by_substring_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match="by_substring must be a mapping"):
        FakeLlmProvider(by_substring=[("Ada", person("Ada"))])  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["", 3])
def test_a_by_substring_key_that_is_not_a_non_empty_string_is_refused(key: object) -> None:
    with pytest.raises(ValueError, match="by_substring keys must be non-empty strings"):
        FakeLlmProvider(by_substring={key: person("Ada")})  # type: ignore[dict-item]


@pytest.mark.parametrize("model", ["", "   ", None])
def test_a_blank_model_name_is_refused(model: object) -> None:
    with pytest.raises(ValueError, match="model must be a non-blank string"):
        FakeLlmProvider(model=model, script=[])  # type: ignore[arg-type]


async def test_text_that_is_not_a_string_and_a_schema_that_is_not_a_model_are_refused() -> None:
    provider = FakeLlmProvider(script=[person("Ada")])

    with pytest.raises(ValueError, match="text must be a string"):
        await provider.extract(b"Ada", Person)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="schema must be a pydantic model class"):
        await provider.extract("Ada", dict)  # type: ignore[type-var]
    assert provider.calls == ()


async def test_mutating_an_answer_after_construction_does_not_change_later_answers() -> None:
    scripted = person("Ada", "mathematician")
    keyed = person("Ada", "mathematician")
    fallback = person("Ada", "mathematician")
    by_script = FakeLlmProvider(script=[scripted])
    by_key = FakeLlmProvider(by_substring={"Ada": keyed}, default=fallback)

    for answer in (scripted, keyed, fallback):
        answer["name"] = "Mallory"
        answer["tags"].append("forger")

    expected = Person(name="Ada", tags=["mathematician"])
    assert await by_script.extract("Ada", Person) == expected
    assert await by_key.extract("Ada", Person) == expected
    assert await by_key.extract("Babbage", Person) == expected


async def test_mutating_a_returned_model_does_not_change_a_later_answer() -> None:
    answer = {"name": "Ada", "tags": ["mathematician"], "properties": {"aliases": ["Byron"]}}
    provider = FakeLlmProvider(by_substring={"Ada": answer})

    first = await provider.extract("Ada", Person)
    first.tags.append("forger")
    first.properties["aliases"].append("Mallory")
    second = await provider.extract("Ada", Person)

    assert second.tags == ["mathematician"]
    assert second.properties == {"aliases": ["Byron"]}


async def test_every_call_is_recorded_with_its_system_prompt_even_when_it_fails() -> None:
    provider = FakeLlmProvider(script=[person("Ada"), EMPTY])

    await provider.extract("first", Person, system_prompt="be terse")
    with pytest.raises(EmptyCompletionError):
        await provider.extract("second", Person)
    with pytest.raises(LlmProviderError):
        await provider.extract("third", Person, system_prompt="")

    assert provider.calls == (("first", "be terse"), ("second", None), ("third", ""))


class TestFakeLlmProviderLifetime(LifetimeCompliance):
    port = LlmProvider

    def new_adapter(self) -> FakeLlmProvider:
        return FakeLlmProvider(script=[person("Ada")])


async def test_a_closed_fake_answers_nothing_and_records_no_call() -> None:
    provider = FakeLlmProvider(model="fake/closed", script=[person("Ada")])
    await provider.close()

    with pytest.raises(ClosedError, match=r"FakeLlmProvider\(model='fake/closed'\) is closed"):
        await provider.extract("Ada", Person)

    assert provider.calls == ()


async def test_the_context_manager_does_not_swallow_an_exception() -> None:
    provider = FakeLlmProvider(script=[EMPTY])

    with pytest.raises(EmptyCompletionError):
        async with provider:
            await provider.extract("Ada", Person)

    assert provider.closed


@pytest.mark.parametrize("model", [f"fake{chr(0xD800)}", "fake\x00"])
def test_a_model_name_no_event_could_hold_is_refused_naming_it(model: str) -> None:
    with pytest.raises(ValueError, match="model contains"):
        FakeLlmProvider(model=model, script=[])
