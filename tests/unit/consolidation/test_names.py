"""Names as consolidation folds and compares them."""

from __future__ import annotations

import jellyfish
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.consolidation.names import (
    INITIAL_MATCH,
    damerau_edits,
    fold,
    jaro_winkler,
    name_form,
    name_similarity,
    token_similarity,
)


def test_fold_drops_accents_case_and_punctuation_but_joins_hyphens() -> None:
    assert fold("  Doe,  JOHN ") == "doe john"
    assert fold("Muñoz") == "munoz"
    assert fold("Lillie-Hinrichs") == "lilliehinrichs"
    assert fold("O'Brien") == "obrien"
    assert fold("!!!") == ""


@given(st.text())
@example("")
@example("\u0301")
def test_fold_is_total_and_idempotent(text: str) -> None:
    folded = fold(text)
    assert fold(folded) == folded


def test_a_title_is_set_aside_but_never_every_token() -> None:
    assert name_form("Dr John Doe").tokens == ("john", "doe")
    assert name_form("Dr").tokens == ("dr",)


def test_one_token_or_few_letters_make_a_weak_name() -> None:
    assert name_form("Smith").is_weak
    assert name_form("Al Wu").is_weak
    assert name_form("Ada Li").is_weak is False
    assert name_form("John Smith").is_weak is False


def test_reordered_and_titled_names_are_equal() -> None:
    assert name_similarity(name_form("Doe, John"), name_form("Dr John Doe")) == 1.0


def test_an_initial_matches_the_token_it_starts_in_written_order() -> None:
    assert name_similarity(name_form("J. Doe"), name_form("John Doe")) == pytest.approx(
        (INITIAL_MATCH + 1.0) / 2
    )
    assert name_similarity(name_form("W. Mason"), name_form("Mason Worsley")) < 0.5


def test_a_missing_token_costs_a_tenth() -> None:
    assert name_similarity(name_form("Doe"), name_form("John Doe")) == pytest.approx(0.9)


def test_empty_names_are_not_alike() -> None:
    assert name_similarity(name_form("!!"), name_form("!!")) == 0.0


@given(st.text(min_size=1), st.text(min_size=1))
@example("a", "b")
def test_similarity_is_symmetric_and_bounded(left: str, right: str) -> None:
    a, b = name_form(left), name_form(right)
    assert 0.0 <= name_similarity(a, b) <= 1.0
    assert name_similarity(a, b) == pytest.approx(name_similarity(b, a))


def test_surname_comma_given_reads_as_given_surname() -> None:
    assert name_form("Doe, John").tokens == ("john", "doe")
    assert name_form("Doe, J.").text == "j doe"
    assert name_form("Acme, Inc, Ltd").tokens == ("acme", "inc", "ltd")
    assert name_form(", John").tokens == ("john",)


def test_two_one_token_names_score_as_their_tokens() -> None:
    assert name_similarity(name_form("Jon"), name_form("John")) == token_similarity("jon", "john")
    assert name_similarity(name_form("Lima"), name_form("LIMA")) == 1.0


_TEXTS = st.text(alphabet=st.sampled_from("abcde xyzé-ñ\u0301ß"), max_size=12)


@given(_TEXTS, _TEXTS)
@example("", "")
@example("a", "")
@example("ab", "ba")
@example("martha", "marhta")
@example("é", "e")
@example("a" * 70, "a" * 69 + "b")  # past rapidfuzz's 64-character block
def test_the_string_measures_are_jellyfishs_whichever_library_computes_them(
    left: str, right: str
) -> None:
    assert jaro_winkler(left, right) == jellyfish.jaro_winkler_similarity(left, right)
    assert damerau_edits(left, right) == jellyfish.damerau_levenshtein_distance(left, right)


_TOKENS = st.text(alphabet=st.sampled_from("abжзиy"), min_size=2, max_size=6)


@given(_TOKENS, _TOKENS, _TOKENS, _TOKENS)
@example("ab", "жз", "ab", "жзи")  # one token of each not ASCII
@example("ab", "yy", "ab", "yab")  # all ASCII: rapidfuzz's measure
@example("жз", "ab", "ab", "жз")  # reordered: the sorted texts are measured too
def test_two_token_names_score_the_best_of_jellyfishs_measures_ascii_or_not(
    a: str, b: str, c: str, d: str
) -> None:
    left, right = name_form(f"{a} {b}"), name_form(f"{c} {d}")
    if left.sorted_text == right.sorted_text:
        assert name_similarity(left, right) == 1.0
        return
    aligned = max(
        token_similarity(a, c) + token_similarity(b, d),
        token_similarity(a, d) + token_similarity(b, c),
    )
    assert name_similarity(left, right) == max(
        jellyfish.jaro_winkler_similarity(left.text, right.text),
        jellyfish.jaro_winkler_similarity(left.sorted_text, right.sorted_text),
        aligned / 2,
    )
