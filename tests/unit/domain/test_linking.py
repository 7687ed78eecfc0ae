from itertools import pairwise

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.linking import (
    MAX_NAME_WORDS,
    KnownNames,
    NameSpan,
    TextWord,
    find_names,
    first_words,
    name_key,
    names_by_key,
    starts_proper,
    text_words,
    written_lowercase,
)


def test_text_words_fold_each_word_and_keep_its_offsets() -> None:
    assert text_words("Müñoz, O'Brien_x 42") == [
        TextWord("munoz", 0, 5),
        TextWord("o", 7, 8),
        TextWord("brien", 9, 14),
        TextWord("x", 15, 16),
        TextWord("42", 17, 19),
    ]


def test_a_word_that_folds_to_two_keeps_its_span_for_both() -> None:
    # The ligature "ﬁ" is one character that folds to two letters; "㍱" folds to two words.
    text = "x \u3371"
    folded = [word.folded for word in text_words(text)]
    assert folded[0] == "x"
    assert all(word.start == 2 and word.end == 3 for word in text_words(text)[1:])


def test_names_match_whole_words_only() -> None:
    text = "Paris, Parisville and paris."
    spans = find_names(text, {"paris"})
    assert [(span.start, span.end) for span in spans] == [(0, 5), (22, 27)]
    assert [text[span.start : span.end] for span in spans] == ["Paris", "paris"]


def test_the_longest_name_at_a_position_wins_and_matches_never_overlap() -> None:
    text = "She left New York City for York."
    spans = find_names(text, {"new york", "new york city", "york", "city for york"})
    assert spans == [NameSpan("new york city", 9, 22), NameSpan("york", 27, 31)]


def test_a_name_that_does_not_complete_falls_back_to_a_shorter_one() -> None:
    spans = find_names("New York state", {"new york city", "new"})
    assert spans == [NameSpan("new", 0, 3)]


def test_accents_case_and_punctuation_fold_away() -> None:
    text = "In SÃO-PAULO and são paulo"
    assert [s.start for s in find_names(text, {name_key("São Paulo")})] == [3, 17]


def test_proper_only_needs_a_word_not_written_in_lowercase_nor_digits_alone() -> None:
    text = "the capital of Of, 42 Street, 3M and 東京"
    names = {"of", "42 street", "3m", "東京"}
    assert [span.folded for span in find_names(text, names)] == [
        "of",
        "of",
        "42 street",
        "3m",
        "東京",
    ]
    assert [span.folded for span in find_names(text, names, proper_only=True)] == [
        "of",
        "3m",
        "東京",
    ]


def test_starts_proper_is_false_only_for_a_lowercase_start() -> None:
    assert starts_proper("Paris")
    assert starts_proper("3M")
    assert starts_proper("東京")
    assert not starts_proper("paris")
    assert not starts_proper("1868")


def test_a_name_longer_than_the_word_limit_is_never_found() -> None:
    words = [f"w{i}" for i in range(MAX_NAME_WORDS + 1)]
    text = " ".join(words)
    assert find_names(text, {" ".join(words)}) == []
    assert find_names(text, {" ".join(words[:MAX_NAME_WORDS])}) == [
        NameSpan(" ".join(words[:MAX_NAME_WORDS]), 0, len(" ".join(words[:MAX_NAME_WORDS])))
    ]


def test_a_name_with_no_words_is_ignored() -> None:
    assert find_names("a - b", {"", "-"}) == []


def test_precomputed_words_give_the_same_spans() -> None:
    text = "Ada met Ada Lovelace"
    assert find_names(text, {"ada lovelace", "ada"}, words=text_words(text)) == find_names(
        text, {"ada lovelace", "ada"}
    )


def test_first_words_are_the_distinct_folded_words_and_proper_ones_on_request() -> None:
    assert first_words(["Ada met ada", "Bob"]) == {"ada", "met", "bob"}
    assert first_words(["Ada met ada", "Bob"], proper_only=True) == {"ada", "bob"}


def test_names_by_key_groups_items_once_per_folded_name() -> None:
    grouped = names_by_key([("Ada", 1), ("ADA", 1), ("ada", 2), ("-", 3), ("Bob", 4)])
    assert grouped == {"ada": [1, 2], "bob": [4]}


@given(st.lists(st.sampled_from(["Ada", "Lovelace", "met", "ada", "Bob", ",", "é"]), min_size=2))
@example(["Ada", "Lovelace"])
def test_every_span_folds_to_its_name_and_spans_are_ordered_and_disjoint(parts: list[str]) -> None:
    text = " ".join(parts)
    spans = find_names(text, {"ada", "ada lovelace", "bob", "e"})
    for span in spans:
        assert name_key(text[span.start : span.end]) == span.folded
    for before, after in pairwise(spans):
        assert before.end <= after.start


def test_a_name_that_does_not_complete_and_has_no_shorter_one_matches_nothing() -> None:
    assert find_names("New Jersey", {"new york"}) == []


def test_known_names_ignore_a_blank_key_and_keep_each_item_once() -> None:
    known: KnownNames[int] = KnownNames()
    known.add("", 1)
    known.add("ada", 2)
    known.add("ada", 2)
    assert known.items_of("") == []
    assert known.items_of("ada") == [2]
    assert known.find("Ada") == [NameSpan("ada", 0, 3)]


def test_written_lowercase_is_a_lowercase_first_letter() -> None:
    assert written_lowercase("database administrator")
    assert written_lowercase("iPhone")
    assert not written_lowercase("Paris")
    assert not written_lowercase("3M")
    assert not written_lowercase("東京")
    assert not written_lowercase("")


def test_known_names_find_a_name_written_in_lowercase_at_a_lowercase_word() -> None:
    known: KnownNames[str] = KnownNames()
    known.add("database administrator", "job", lowercase=True)
    known.add("apple", "fruit", lowercase=True)
    known.add("apple", "company")
    known.add("paris", "city")
    text = "a database administrator ate an apple in paris; Apple, Paris, Database Administrator"
    spans = known.find(text, proper_only=True)
    said = [(text[span.start : span.end], span.folded) for span in spans]
    assert said == [
        ("database administrator", "database administrator"),
        ("apple", "apple"),
        ("Apple", "apple"),
        ("Paris", "paris"),
        ("Database Administrator", "database administrator"),
    ]
    # Said in lowercase, "apple" stands only for what is written so.
    assert known.items_of("apple", lowercase=True) == ["fruit"]
    assert known.items_of("apple") == ["fruit", "company"]
    assert known.items_of("paris", lowercase=True) == []
    # Without `proper_only`, every name is found wherever it is said.
    assert len(known.find(text)) == 6


def test_a_lowercase_word_falls_back_to_a_shorter_name_written_in_lowercase() -> None:
    known: KnownNames[str] = KnownNames()
    known.add("new york", "city")
    known.add("new", "adjective", lowercase=True)
    # "new york" is not written in lowercase, so at "new" only "new" may match.
    assert known.find("new york", proper_only=True) == [NameSpan("new", 0, 3)]
    assert known.find("New york", proper_only=True) == [NameSpan("new york", 0, 8)]
