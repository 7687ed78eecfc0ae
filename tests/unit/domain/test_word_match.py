"""A query naming part of a name: its words found among the name's words."""

from __future__ import annotations

import jellyfish
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.lexical import WORD_MATCH_WEIGHT, lexical_score, word_match_similarity
from redstring.domain.normalization import fold_name
from redstring.testing.factories import make_entity


def test_a_bare_surname_finds_the_full_name_at_one() -> None:
    assert word_match_similarity("Cowden", "Campbell Cowden") == 1.0


def test_words_of_the_name_the_query_does_not_mention_cost_nothing() -> None:
    assert word_match_similarity("ada", "Ada Augusta King Lovelace") == 1.0


def test_each_query_word_counts_once_in_the_mean() -> None:
    """One word found (1.0), one sharing no letter with any word (0.0): their mean."""
    assert word_match_similarity("cowden zzzzzz", "Campbell Cowden") == 0.5


def test_a_side_without_words_scores_zero() -> None:
    assert word_match_similarity("", "Ada") == 0.0
    assert word_match_similarity("Ada", " , ") == 0.0


def test_a_bare_surname_scores_the_full_name_at_the_word_weight() -> None:
    """Above a short name merely like the surname, below the name it equals."""
    full = lexical_score("Cowden", make_entity(name="Campbell Cowden"))
    alike = lexical_score("Cowden", make_entity(name="Cowen Li"))
    exact = lexical_score("Cowden", make_entity(name="Cowden"))
    assert full == pytest.approx(WORD_MATCH_WEIGHT)
    assert alike < full < exact == 1.0


def test_an_alias_is_matched_word_by_word_too() -> None:
    entity = make_entity(name="Zebra", properties={"aliases": ["Campbell Cowden"]})
    assert lexical_score("Cowden", entity) == pytest.approx(WORD_MATCH_WEIGHT)


def test_a_property_is_not_matched_word_by_word() -> None:
    """A property is scored whole, at `PROPERTY_WEIGHT`, as the plan specifies."""
    entity = make_entity(name="Zebra", properties={"city": "Campbell Cowden"})
    assert lexical_score("Cowden", entity) < WORD_MATCH_WEIGHT * 0.7


@given(st.text(max_size=30), st.text(max_size=30))
@example("", "")
@example("a", "a b")
@example("a" * 300, "a" * 300 + " b")
def test_the_word_match_is_a_similarity(query: str, name: str) -> None:
    score = word_match_similarity(query, name)
    assert 0.0 <= score <= 1.0


def _reference_word_match(query: str, name: str) -> float:
    """The docstring's definition, with jellyfish and no shortcut."""
    wanted, words = sorted(fold_name(query).split()), sorted(fold_name(name).split())
    if not wanted or not words:
        return 0.0
    total = 0.0
    for each in wanted:
        best = 0.0
        for word in words:
            edits = 1.0 - jellyfish.levenshtein_distance(each, word) / max(len(each), len(word))
            best = max(best, float(jellyfish.jaro_winkler_similarity(each, word) + edits) / 2)
        total += best
    return total / len(wanted)


@given(
    st.text(alphabet="abcAB -", max_size=16),
    st.text(alphabet="abcAB -", max_size=16),
)
@example("ab ba", "ba ab")
@example("abc abd", "abd")
@example("a-b", "B A")
def test_an_ascii_word_match_is_the_documented_mean_to_the_last_bit(query: str, name: str) -> None:
    """ASCII words take a shortcut (a word found scores 1.0 unscored) and rapidfuzz."""
    assert word_match_similarity(query, name) == _reference_word_match(query, name)
