"""The BM25 tokenizer: the words of `fold_name`, computed one character at a time."""

from __future__ import annotations

from uuid import UUID

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.bm25 import id_halves, idf, query_terms, term_frequencies, tokenize
from redstring.domain.normalization import fold_name


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40))
@example("Élan, ÉLAN; ﬁsh-and-chips_2 Straße İstanbul")
@example("Москва 北京 ǅ ᾈ")
@example("")
def test_tokens_are_the_words_of_fold_name(text: str) -> None:
    assert tokenize(text) == fold_name.__wrapped__(text).split()


def test_punctuation_breaks_words_and_accents_fold() -> None:
    assert tokenize("O'Brien's café, Zürich!") == ["o", "brien", "s", "cafe", "zurich"]
    assert tokenize("Ærø") == ["ærø"]
    assert tokenize("?!") == []


def test_frequencies_count_each_term_and_the_length_counts_them_all() -> None:
    assert term_frequencies("Apple apple, pie") == ({"apple": 2, "pie": 1}, 3)


def test_query_terms_are_distinct_and_sorted() -> None:
    assert query_terms("pie Apple apple") == ["apple", "pie"]


def test_idf_is_lucenes() -> None:
    assert idf(2, 3) == 0.47000362924573563
    assert idf(3, 3) == 0.13353139262452257


def test_id_halves_split_the_uuid_integer() -> None:
    assert id_halves(UUID(int=(5 << 64) | 7)) == (5, 7)
