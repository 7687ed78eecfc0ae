import copy
import pickle
from typing import Any
from uuid import UUID

import pytest

from redstring.domain.exceptions import (
    DimensionMismatchError,
    EmbeddingProviderError,
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
    MissingEntityError,
    PartialExtractionError,
    RedstringError,
    RefusedCompletionError,
    UnknownDomainError,
)
from redstring.domain.ids import EntityId, TenantId

ENTITY = EntityId(UUID("00000000-0000-4000-8000-00000000000e"))
TENANT = TenantId(UUID("00000000-0000-4000-8000-000000000007"))

#: (error class, keyword arguments, attributes it must keep, text its message must contain).
CASES: list[tuple[type[RedstringError], dict[str, Any], dict[str, Any], list[str]]] = [
    (
        DimensionMismatchError,
        {"expected": 768, "actual": 8},
        {"expected": 768, "actual": 8},
        ["768", "8"],
    ),
    (
        MissingEntityError,
        {"entity_id": ENTITY, "tenant_id": TENANT},
        {"entity_id": ENTITY, "tenant_id": TENANT},
        [str(ENTITY), str(TENANT)],
    ),
    (
        UnknownDomainError,
        {"domain": "astrology", "available": ["legal", "medical"]},
        {"domain": "astrology", "available": ("legal", "medical")},
        ["astrology", "legal", "medical"],
    ),
    (
        PartialExtractionError,
        {"source_id": "doc-9", "failed_chunks": 2, "total_chunks": 7},
        {"source_id": "doc-9", "failed_chunks": 2, "total_chunks": 7},
        ["doc-9", "2", "7"],
    ),
    (
        LlmProviderError,
        {"model": "fake/canned-v1", "reason": "timed out"},
        {"model": "fake/canned-v1", "reason": "timed out"},
        ["fake/canned-v1", "timed out"],
    ),
    (
        EmptyCompletionError,
        {"model": "fake/canned-v1"},
        {"model": "fake/canned-v1"},
        ["fake/canned-v1", "empty"],
    ),
    (
        MalformedCompletionError,
        {"model": "fake/canned-v1", "detail": "entities: field required"},
        {"model": "fake/canned-v1", "detail": "entities: field required"},
        ["fake/canned-v1", "entities: field required"],
    ),
    (
        RefusedCompletionError,
        {"model": "fake/canned-v1", "refusal": "I cannot help with that"},
        {"model": "fake/canned-v1", "refusal": "I cannot help with that"},
        ["fake/canned-v1", "I cannot help with that"],
    ),
    (
        EmbeddingProviderError,
        {"model": "fake/hash-v1", "reason": "3 vectors for 4 texts"},
        {"model": "fake/hash-v1", "reason": "3 vectors for 4 texts"},
        ["fake/hash-v1", "3 vectors for 4 texts"],
    ),
]
IDS = [case[0].__name__ for case in CASES]


@pytest.mark.parametrize(("error_class", "kwargs", "attributes", "mentions"), CASES, ids=IDS)
def test_an_error_keeps_its_identifiers_and_names_them_in_its_message(
    error_class: type[RedstringError],
    kwargs: dict[str, Any],
    attributes: dict[str, Any],
    mentions: list[str],
) -> None:
    error = error_class(**kwargs)

    for name, value in attributes.items():
        assert getattr(error, name) == value
    for text in mentions:
        assert text in str(error)


@pytest.mark.parametrize(("error_class", "kwargs", "attributes", "mentions"), CASES, ids=IDS)
def test_every_error_is_a_redstring_error_and_not_a_value_error(
    error_class: type[RedstringError],
    kwargs: dict[str, Any],
    attributes: dict[str, Any],
    mentions: list[str],
) -> None:
    with pytest.raises(RedstringError) as caught:
        raise error_class(**kwargs)

    assert not isinstance(caught.value, ValueError)


@pytest.mark.parametrize(("error_class", "kwargs", "attributes", "mentions"), CASES, ids=IDS)
def test_identifiers_are_keyword_only(
    error_class: type[RedstringError],
    kwargs: dict[str, Any],
    attributes: dict[str, Any],
    mentions: list[str],
) -> None:
    with pytest.raises(TypeError, match="positional"):
        error_class(*kwargs.values())


def test_a_dimension_mismatch_message_states_expected_and_actual() -> None:
    message = str(DimensionMismatchError(expected=768, actual=8))

    assert "expected 768" in message
    assert "got 8" in message


@pytest.mark.parametrize(
    "error_class", [EmptyCompletionError, MalformedCompletionError, RefusedCompletionError]
)
def test_every_completion_failure_is_an_llm_provider_error(
    error_class: type[RedstringError],
) -> None:
    assert issubclass(error_class, LlmProviderError)


def test_embedding_failures_are_not_llm_failures() -> None:
    assert not issubclass(EmbeddingProviderError, LlmProviderError)


def test_unknown_domain_keeps_an_immutable_copy_of_what_was_available() -> None:
    available = ["legal"]

    error = UnknownDomainError(domain="astrology", available=available)
    available.append("medical")

    assert error.available == ("legal",)


@pytest.mark.parametrize(
    "error",
    [
        DimensionMismatchError(expected=768, actual=8),
        MalformedCompletionError(model="fake/canned-v1", detail="missing entities"),
        RedstringError("plain"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_an_error_survives_pickle_and_copy_with_its_attributes(error: RedstringError) -> None:
    """Keyword-only constructors defeat the default reduce; errors cross processes."""
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert type(clone) is type(error)
        assert str(clone) == str(error)
        assert vars(clone) == vars(error)
