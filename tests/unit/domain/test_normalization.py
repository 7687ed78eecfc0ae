import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.normalization import normalize_name


@given(st.text())
@example("")
@example("   ")
@example("\t\n")
@example("\u3000Ada\u00a0\u2003Lovelace\x1f")
def test_normalize_name_is_total_and_idempotent(name: str) -> None:
    once = normalize_name(name)

    assert normalize_name(once) == once


@given(st.text())
@example(" a  b ")
@example("a\t\n b")
@example("\u00a0x\u2028y\u3000")
def test_normalized_names_have_no_outer_or_repeated_whitespace_and_only_plain_spaces(
    name: str,
) -> None:
    normalized = normalize_name(name)

    assert normalized == normalized.strip()
    assert "  " not in normalized
    assert all(character == " " or not character.isspace() for character in normalized)


@given(st.text())
def test_normalized_names_are_casefolded(name: str) -> None:
    normalized = normalize_name(name)

    assert normalized == normalized.casefold()


@pytest.mark.parametrize("name", ["", "   ", "\t\n", "\u00a0\u3000"])
def test_an_all_whitespace_name_normalizes_to_the_empty_string(name: str) -> None:
    assert normalize_name(name) == ""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Straße", "strasse"),
        ("  Ada   LOVELACE\t", "ada lovelace"),
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
        ("Ada\nLovelace", "ada lovelace"),
    ],
)
def test_normalize_name_casefolds_strips_and_collapses_whitespace(name: str, expected: str) -> None:
    assert normalize_name(name) == expected
