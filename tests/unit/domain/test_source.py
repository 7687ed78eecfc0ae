from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from redstring.domain.ids import SourceId
from redstring.domain.source import SourceDocument

UNSAFE = pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "lone-surrogate"])


def document(**overrides: Any) -> SourceDocument:
    fields: dict[str, Any] = {"id": SourceId("doc-1"), "text": "Ada met Babbage.", **overrides}
    return SourceDocument(**fields)


def test_a_document_keeps_its_id_and_text_as_given() -> None:
    source = document(text="  Ada met Babbage.\n")

    assert source.id == "doc-1"
    assert source.text == "  Ada met Babbage.\n"
    assert (source.uri, source.title, source.published_at, source.metadata) == (
        None,
        None,
        None,
        {},
    )


@pytest.mark.parametrize("text", ["", " ", "\t\n\r "])
def test_blank_text_is_rejected_with_a_value_error_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match="text must not be blank"):
        document(text=text)


@pytest.mark.parametrize("source_id", ["", "   "])
def test_a_blank_id_is_rejected_with_a_value_error_naming_it(source_id: str) -> None:
    with pytest.raises(ValueError, match="id must not be blank"):
        document(id=source_id)


def test_a_naive_published_at_is_rejected_with_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="published_at must be timezone-aware"):
        document(published_at=datetime(1843, 9, 1, 12, 0))


def test_a_naive_iso_string_for_published_at_is_rejected() -> None:
    with pytest.raises(ValueError, match="published_at"):
        document(published_at="1843-09-01T12:00:00")


@pytest.mark.parametrize(
    "tz", [UTC, timezone(timedelta(hours=-5)), timezone(timedelta(0))], ids=str
)
def test_an_aware_published_at_is_accepted_as_given(tz: timezone) -> None:
    published = datetime(1843, 9, 1, 12, 0, tzinfo=tz)

    assert document(published_at=published).published_at == published


@UNSAFE
@pytest.mark.parametrize("field", ["id", "text", "uri", "title"])
def test_unstorable_text_is_rejected_in_every_string_field(field: str, bad: str) -> None:
    with pytest.raises(ValueError, match=field):
        document(**{field: f"x{bad}y"})


@UNSAFE
@pytest.mark.parametrize(
    "metadata",
    [
        lambda bad: {"author": f"A{bad}"},
        lambda bad: {f"auth{bad}or": "Ada"},
        lambda bad: {"tags": ["ok", [f"x{bad}"]]},
    ],
    ids=["value", "key", "nested-list"],
)
def test_unstorable_text_anywhere_in_metadata_is_rejected(metadata: Any, bad: str) -> None:
    with pytest.raises(ValueError, match="metadata"):
        document(metadata=metadata(bad))


def test_a_document_is_frozen() -> None:
    source = document()

    with pytest.raises(ValidationError, match="frozen"):
        source.text = "other"  # type: ignore[misc]


def test_an_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="language"):
        document(language="en")
