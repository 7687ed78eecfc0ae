import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.similarity import string_similarity


@given(st.text(), st.text())
@example("", "")
@example("", "Ada")
@example("a", "b")
def test_similarity_is_on_zero_to_one(left: str, right: str) -> None:
    assert 0.0 <= string_similarity(left, right) <= 1.0


@given(st.text(), st.text())
@example("Acme Corp", "ACME Corporation")
@example("dixon", "dicksonx")
def test_similarity_does_not_depend_on_argument_order(left: str, right: str) -> None:
    # Jaro-Winkler is symmetric; jellyfish's implementation was sampled
    # (300k random pairs) before relying on it. Compared with a tolerance
    # so that a summation-order difference is not mistaken for asymmetry.
    assert string_similarity(left, right) == pytest.approx(string_similarity(right, left))


@given(st.text())
@example("")
@example("   ")
def test_a_name_is_fully_similar_to_itself(name: str) -> None:
    assert string_similarity(name, name) == 1.0


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Ada Lovelace", "  ada   LOVELACE "),
        ("Straße", "STRASSE"),
        ("", "   "),
        ("\t\n", ""),
    ],
)
def test_names_equal_after_normalization_score_exactly_one(left: str, right: str) -> None:
    assert string_similarity(left, right) == 1.0


@pytest.mark.parametrize(("left", "right"), [("", "Ada"), ("   ", "Ada"), ("Ada", "\t")])
def test_an_empty_name_against_a_non_empty_one_scores_zero(left: str, right: str) -> None:
    assert string_similarity(left, right) == 0.0


@given(st.text(min_size=1), st.text(min_size=1))
def test_different_normalized_names_score_below_one(left: str, right: str) -> None:
    # A Jaro-Winkler score of 1 requires identical strings.
    if left.casefold().split() != right.casefold().split():
        assert string_similarity(left, right) < 1.0


def test_a_spelling_variant_scores_above_an_unrelated_name() -> None:
    variant = string_similarity("Acme Corp", "ACME Corporation")
    unrelated = string_similarity("Acme Corp", "Zebra Holdings")

    assert variant > unrelated


def test_a_shared_prefix_scores_above_the_same_letters_later() -> None:
    # The Winkler bonus rewards agreement at the start of the name.
    assert string_similarity("Lovelace", "Lovelance") > string_similarity("Lovelace", "Rovelace")
