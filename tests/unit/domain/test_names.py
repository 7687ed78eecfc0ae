"""Folding and the name index's units."""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.lexical import PROPERTY_WEIGHT, lexical_score, name_similarity
from redstring.domain.names import (
    MAX_NAME_CHARS,
    entity_name_units,
    entity_name_words,
    entity_names,
    name_units,
    query_name_units,
    unit_overlap,
    word_units,
)
from redstring.domain.normalization import fold_name, latin_name, normalize_name
from redstring.testing.factories import make_entity

if TYPE_CHECKING:
    from redstring.domain.entity import Entity


@pytest.mark.parametrize(
    ("name", "folded"),
    [
        ("José  Muñoz", "jose munoz"),
        ("Smith, John", "smith john"),
        ("O'Brien", "o brien"),
        ("ﬁsh", "fish"),
        ("Straße", "strasse"),
        ("ÅNGSTRÖM", "angstrom"),
        ("北京市", "北京市"),
        ("...", ""),
        ("   ", ""),
        ("a\x01b", "a b"),
    ],
)
def test_fold_name_drops_case_accents_and_punctuation(name: str, folded: str) -> None:
    assert fold_name(name) == folded


@given(st.text(max_size=30))
@example("")
@example("Ⅻ ﬁ")
@example("A\u0301")
def test_folding_is_idempotent_and_never_longer_in_words(text: str) -> None:
    once = fold_name(text)
    assert fold_name(once) == once
    assert once == " ".join(once.split())


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=30))
@example("AZaz09")
@example("@[`{/:")  # the neighbours of the letters and digits
@example("a\x00b\x1fc\x7fd")
@example("x_y-z")
def test_ascii_folds_as_the_unicode_rule_folds(text: str) -> None:
    """ASCII takes a byte-table shortcut; a combining mark sends the same text the long way."""
    assert fold_name(text) == fold_name(text + "\u0301")


@pytest.mark.parametrize(
    ("name", "latin"),
    [
        ("Москва", "moskva"),
        ("Αθήνα", "athina"),
        ("Øresund", "oresund"),
        ("Łódź", "lodz"),
        ("北京", "beijing"),
        ("José  Muñoz", "jose munoz"),
        ("Ada Lovelace", "ada lovelace"),
        ("«Москва»", "moskva"),
        ("", ""),
    ],
)
def test_latin_name_romanizes_what_folding_keeps_outside_ascii(name: str, latin: str) -> None:
    assert latin_name(name) == latin


@given(st.text(max_size=30))
@example("")
@example("Ⅻ ﬁ")
@example("Ελλάδα")
@example("北京 市")
def test_the_latin_form_is_ascii_folded_and_the_fold_of_any_ascii_name(text: str) -> None:
    latin = latin_name(text)
    assert latin.isascii()
    assert fold_name(latin) == latin
    if fold_name(text).isascii():
        assert latin == fold_name(text)


def test_a_name_in_another_script_shares_units_with_its_romanization() -> None:
    """The Cyrillic "Москва" indexes the units of "moskva" too, so either finds the other."""
    assert name_units("Moskva") <= name_units("Москва")
    assert name_units("Ada Lovelace") == {
        unit for word in ("ada", "lovelace") for unit in name_units(word)
    }


def test_a_name_in_another_script_is_scored_by_its_romanization() -> None:
    romanized = name_similarity("Москва", "Moskva")
    assert romanized == 1.0
    assert name_similarity("Россия", "Russia") > name_similarity("Россия", "Germany")
    assert lexical_score("Германия", make_entity(name="Germany")) > lexical_score(
        "Германия", make_entity(name="Russia")
    )


def test_normalize_name_is_not_folded() -> None:
    """Ids are derived from `normalize_name`: it must keep accents and punctuation."""
    assert normalize_name("José  Muñoz, Jr.") == "josé muñoz, jr."


def test_a_one_letter_word_has_two_units_and_a_longer_word_one_more_than_its_letters() -> None:
    assert name_units("A") == {"  a", " a "}
    assert name_units("Ada") == {"  a", " ad", "ada", "da "}
    assert name_units("") == set()


@given(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12))
@example("aaaa")
@example("x")
def test_every_word_has_at_least_two_distinct_units(word: str) -> None:
    if fold_name(word):
        assert len(name_units(word)) >= 2


def test_only_the_first_characters_of_a_huge_name_are_indexed() -> None:
    huge = "ada " + "x" * 1_000_000
    assert name_units(huge) == name_units(huge[:MAX_NAME_CHARS])


def test_entity_names_are_the_name_normalized_name_and_string_aliases() -> None:
    entity = make_entity(
        name="Mumbai",
        normalized_name="mumbai city",
        properties={"aliases": ["Bombay", 7, ["Bambai"], "बम्बई"], "other": "Kolkata"},
    )
    assert list(entity_names(entity)) == ["Mumbai", "mumbai city", "Bombay", "बम्बई"]
    bare = make_entity(name="Mumbai", properties={"aliases": "Bombay"})
    assert list(entity_names(bare)) == ["Mumbai", "mumbai"]
    assert "bay" in entity_name_units(entity)
    assert "bay" not in entity_name_units(bare)


def test_query_units_are_sorted_and_distinct_and_a_non_string_is_refused() -> None:
    assert query_name_units("ab ab") == ["  a", " ab", "ab "]
    with pytest.raises(ValueError, match="query"):
        query_name_units(7)  # type: ignore[arg-type]


def test_an_alias_scores_at_the_name_weight_and_a_bare_string_one_at_property_weight() -> None:
    listed = make_entity(name="Mumbai", properties={"aliases": ["Bombay"]})
    bare = make_entity(name="Mumbai", properties={"aliases": "Bombay"})
    assert lexical_score("Bombay", listed) == 1.0
    assert lexical_score("Bombay", bare) == pytest.approx(
        max(PROPERTY_WEIGHT, name_similarity("Bombay", "Mumbai"))
    )


def test_name_similarity_forgives_order_accents_and_punctuation_only() -> None:
    assert name_similarity("Lovelace, Ada", "ada lovelace") == 1.0
    assert name_similarity("Müñoz", "MUNOZ") == 1.0
    assert name_similarity("", "") == 1.0
    assert name_similarity("", "Ada") == 0.0
    # The mean of Jaro-Winkler (0.96667) and 1 - 1/7 (0.85714), as literals.
    assert name_similarity("Babbage", "Babage") == pytest.approx(0.91190, abs=1e-4)


def test_a_huge_query_is_scored_from_its_first_characters() -> None:
    entity = make_entity(name="Ada Lovelace")
    huge = "Ada Lovelace" + "x" * 1_000_000
    assert lexical_score(huge, entity) == lexical_score(huge[:MAX_NAME_CHARS], entity)


def _units_of_every_name(entity: Entity) -> frozenset[str]:
    """The definition `entity_name_units` must match: each name's units, unioned."""
    units: set[str] = set()
    for name in entity_names(entity):
        units |= name_units(name)
    return frozenset(units)


_NAMES = st.text(
    alphabet=st.sampled_from(["a", "B", "é", "\u0301", " ", "\t", "\u00a0", "ß", "K", "-", "x"]),
    min_size=1,
    max_size=300,
).filter(lambda name: not name.isspace())


@given(_NAMES, st.none() | _NAMES)
@example(" " * 252 + "ada lovelace", None)  # normalizing moves words past the cut
@example("Ada Lovelace", "zed")  # a normalized name unlike the name is indexed
@example("ADA", None)
def test_entity_units_are_the_union_of_each_names_units(name: str, normalized: str | None) -> None:
    entity = make_entity(name=name)
    if normalized is not None:
        entity = entity.model_copy(update={"normalized_name": normalized})
    assert entity_name_units(entity) == _units_of_every_name(entity)
    assert entity_name_units(entity) >= name_units(name)


_ANY_SCRIPT = st.text(
    alphabet=st.sampled_from(["a", "B", "é", "\u0301", " ", "ß", "Ж", "北", "ﬁ", "'", "µ", "ǅ"]),
    min_size=1,
    max_size=300,
).filter(lambda name: not name.isspace())


@given(
    _ANY_SCRIPT,
    st.none() | _ANY_SCRIPT,
    st.none() | st.lists(_ANY_SCRIPT | st.integers(-3, 3), min_size=2, max_size=3),
)
@example("Москва", None, None)  # outside ASCII: the romanized words too
@example("x" * 300 + " ada", "x" * 300 + " ada", None)  # normalized, but past the cut
@example("Ada Lovelace", "ada lovelace", None)  # normalized exactly: nothing added
@example("Ada Lovelace", "zed", None)
@example("Banana nana", None, ["Anna", 7, "..."])  # repeated units, a non-string alias
@example("...", "...", None)  # no word at all
def test_an_entitys_words_carry_exactly_its_units(
    name: str, normalized: str | None, aliases: list[str | int] | None
) -> None:
    entity = make_entity(name=name, properties={} if aliases is None else {"aliases": aliases})
    if normalized is not None:
        entity = entity.model_copy(update={"normalized_name": normalized})
    words = entity_name_words(entity)
    assert frozenset(chain.from_iterable(map(word_units, words))) == entity_name_units(entity)
    assert entity_name_words(entity, normalize_name(name)) == words


def test_a_words_units_keep_their_order_and_repeats() -> None:
    assert word_units("ana") == ("  a", " an", "ana", "na ")
    assert word_units("anana").count("ana") == 2


def test_unit_overlap_is_one_for_the_same_name_and_zero_without_units() -> None:
    assert unit_overlap("ada  LOVELACE", make_entity(name="Ada Lovelace")) == 1.0
    assert unit_overlap("...", make_entity(name="Ada Lovelace")) == 0.0
    assert unit_overlap("Lovelace", make_entity(name="Ada Lovelace")) > unit_overlap(
        "Lovelace", make_entity(name="Augusta Ada Lovelace")
    )


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
@example("Ada  LOVELACE\t")
@example("O'Brien, J.")
def test_an_ascii_names_normalization_folds_and_romanizes_as_the_name_does(name: str) -> None:
    """Why `lexical_score` need not fold such a `normalized_name` again."""
    assert fold_name(normalize_name(name)) == fold_name(name)
    assert latin_name(normalize_name(name)) == latin_name(name)


def test_outside_ascii_normalizing_can_change_the_romanization() -> None:
    """Why `lexical_score` folds a non-ASCII name's normalized form too."""
    assert latin_name(normalize_name("µ")) != latin_name("µ")
    # The micro sign's normalized name is the Greek mu, romanized "m".
    assert lexical_score("m", make_entity(name="µ")) == 1.0
