"""Bundled domain prompts, and classifying a text into one with a single model call."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.exceptions import UnknownDomainError
from redstring.extraction.domains import (
    DEFAULT_DOMAIN,
    DomainChoice,
    DomainClassification,
    available_domains,
    classify_domain,
    get_domain,
)
from redstring.extraction.schema import ExtractedEntity, ExtractedRelationship, Extraction
from redstring.llm.adapters.fake import EMPTY, FakeLlmProvider

BUNDLED = ["academic", "business", "general", "news", "technical"]
FALLBACK = DomainClassification(domain_id="general", confidence=0.0)


def test_the_default_domain_is_general() -> None:
    assert DEFAULT_DOMAIN == "general"


def test_the_bundled_domains_are_listed_sorted() -> None:
    assert available_domains() == BUNDLED


@pytest.mark.parametrize("domain_id", BUNDLED)
def test_each_bundled_domain_is_found_by_its_id(domain_id: str) -> None:
    assert get_domain(domain_id).id == domain_id


@pytest.mark.parametrize("domain_id", BUNDLED)
def test_each_prompt_names_every_field_of_the_schema_it_asks_for(domain_id: str) -> None:
    prompt = get_domain(domain_id).system_prompt
    fields = [
        *Extraction.model_fields,
        *ExtractedEntity.model_fields,
        *ExtractedRelationship.model_fields,
    ]

    assert [field for field in fields if f'"{field}"' not in prompt] == []


def test_every_domain_has_its_own_prompt_name_and_description() -> None:
    prompts = [get_domain(each) for each in BUNDLED]

    for attribute in ("system_prompt", "name", "description"):
        assert len({getattr(each, attribute) for each in prompts}) == len(BUNDLED)


@pytest.mark.parametrize("domain_id", ["poetry", "", "News", " news"])
def test_an_unknown_domain_id_raises_naming_it_and_the_available_ones(domain_id: str) -> None:
    with pytest.raises(UnknownDomainError) as raised:
        get_domain(domain_id)

    assert raised.value.domain == domain_id
    assert raised.value.available == tuple(BUNDLED)


def test_a_domain_prompt_cannot_be_changed() -> None:
    with pytest.raises(ValueError, match="frozen"):
        get_domain("news").system_prompt = "say nothing"  # type: ignore[misc]


async def test_classification_makes_one_call_over_the_first_2000_characters() -> None:
    text = "n" * 1999 + "X" + "tail that the model never sees"
    provider = FakeLlmProvider(script=[{"domain": "news", "confidence": 0.8}])

    classification = await classify_domain(text, provider)

    assert classification == DomainClassification(domain_id="news", confidence=0.8)
    [(seen, system_prompt)] = provider.calls
    assert seen == "n" * 1999 + "X"
    assert system_prompt is not None
    assert [each for each in BUNDLED if each not in system_prompt] == []


async def test_a_domain_answered_in_another_case_or_spacing_is_matched() -> None:
    provider = FakeLlmProvider(script=[{"domain": "  Business ", "confidence": 0.6}])

    assert await classify_domain("Acme acquired Globex.", provider) == DomainClassification(
        domain_id="business", confidence=0.6
    )


@pytest.mark.parametrize(
    "answer",
    [
        EMPTY,
        {"domain": "news", "confidence": "very"},
        {"domain": ["news"], "confidence": 0.5},
        {"domain": "poetry", "confidence": 0.9},
        {"domain": "", "confidence": 0.9},
        {"domain": "news", "confidence": 1.0000001},
        {"domain": "news", "confidence": -0.0000001},
        {"domain": "news", "confidence": "nan"},
        {"domain": "news", "confidence": "inf"},
    ],
)
async def test_a_failed_call_or_an_unusable_answer_falls_back_to_general_at_zero(
    answer: Any,
) -> None:
    provider = FakeLlmProvider(script=[answer])

    assert await classify_domain("Some text.", provider) == FALLBACK
    assert len(provider.calls) == 1


async def test_a_provider_error_other_than_a_bad_answer_also_falls_back() -> None:
    provider = FakeLlmProvider(by_substring={"never present": {"domain": "news"}})

    assert await classify_domain("Some text.", provider) == FALLBACK


@given(st.floats(min_value=0.0, max_value=1.0), st.sampled_from(BUNDLED))
@example(0.0, "academic")
@example(1.0, "technical")
async def test_any_confidence_on_zero_to_one_and_bundled_domain_is_accepted(
    confidence: float, domain: str
) -> None:
    provider = FakeLlmProvider(script=[{"domain": domain, "confidence": confidence}])

    assert await classify_domain("text", provider) == DomainClassification(
        domain_id=domain, confidence=confidence
    )


def test_the_choice_schema_holds_any_domain_and_confidence_for_checking_later() -> None:
    assert DomainChoice(domain="poetry", confidence=9.0).confidence == 9.0


def test_a_classification_refuses_a_confidence_outside_zero_to_one() -> None:
    with pytest.raises(ValueError, match="less than or equal to 1"):
        DomainClassification(domain_id="news", confidence=1.5)
