import unicodedata
from typing import Any

import jellyfish
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.blocking import (
    DEFAULT_STRATEGIES,
    PREFIX_LENGTH,
    BlockingKeyStrategy,
    blocking_keys_for,
    entity_type_key,
    prefix_key,
    prefix_key_for_name,
    query_blocking_keys,
    soundex_key,
    soundex_key_for_name,
)
from redstring.domain.entity import Entity
from redstring.domain.normalization import normalize_name
from redstring.testing.factories import make_entity

#: Names and types an entity can hold: not blank, no NUL (hypothesis omits surrogates).
storable_name = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1).filter(
    str.strip
)


def entity(name: str = "Ada Lovelace", entity_type: str = "person", **overrides: Any) -> Entity:
    return make_entity(name=name, entity_type=entity_type, blocking_keys=None, **overrides)


def test_blocking_key_strategy_values_are_a_pinned_wire_format() -> None:
    assert {member.name: member.value for member in BlockingKeyStrategy} == {
        "PREFIX": "prefix",
        "ENTITY_TYPE": "entity_type",
        "SOUNDEX": "soundex",
    }


def test_the_default_strategies_are_all_of_them() -> None:
    assert frozenset(BlockingKeyStrategy) == DEFAULT_STRATEGIES


def test_the_prefix_length_is_five() -> None:
    assert PREFIX_LENGTH == 5


def test_the_prefix_key_is_the_first_five_normalized_characters_namespaced_p() -> None:
    assert prefix_key(entity("  ADA   Lovelace")) == "p:ada l"


def test_a_name_shorter_than_the_prefix_is_kept_whole() -> None:
    assert prefix_key(entity("Li")) == "p:li"


def test_the_prefix_key_ignores_an_extractors_normalized_name() -> None:
    assert prefix_key(entity("Ada Lovelace", normalized_name="countess")) == "p:ada l"


def test_the_type_key_is_the_normalized_type_namespaced_t() -> None:
    assert entity_type_key(entity(entity_type="  Research  Lab ")) == "t:research lab"


def test_the_soundex_key_codes_the_whole_normalized_name_namespaced_s() -> None:
    # A (kept), d=3, l=4, v=1 (a, o, e, a, e are dropped; repeats collapse).
    assert soundex_key(entity("Ada Lovelace")) == "s:A341"


def test_the_whole_name_is_coded_not_the_first_token() -> None:
    assert soundex_key(entity("Ada Lovelace")) != soundex_key(entity("Ada"))


@pytest.mark.parametrize("name", ["12345", "1843", "李小龙", "王菲", "!!! ---", "١٢٣"])
def test_a_name_with_no_ascii_letters_has_no_soundex_key(name: str) -> None:
    assert soundex_key(entity(name)) is None


def test_digits_are_dropped_rather_than_coded() -> None:
    assert soundex_key(entity("1st")) == soundex_key(entity("st"))


def test_leading_spaces_do_not_reach_the_soundex_code() -> None:
    assert soundex_key(entity(" ada")) == soundex_key(entity("Ada")) == "s:A300"


def test_an_accented_name_shares_a_soundex_key_with_its_unaccented_spelling() -> None:
    assert soundex_key(entity("Muñoz")) == soundex_key(entity("Munoz")) == "s:M520"


def test_a_compatibility_character_decomposes_into_letters_that_are_coded() -> None:
    # NFKD turns the ligature "ﬁ" into "fi".
    assert soundex_key(entity("ﬁsher")) == soundex_key(entity("Fisher"))


def test_the_default_strategies_give_three_keys_for_a_latin_name() -> None:
    assert blocking_keys_for(entity("Ada Lovelace", "Person")) == frozenset(
        {"p:ada l", "s:A341", "t:person"}
    )


@pytest.mark.parametrize("name", ["12345", "李小龙"])
def test_a_name_without_a_soundex_key_still_gets_prefix_and_type_keys(name: str) -> None:
    keys = blocking_keys_for(entity(name, "person"))

    assert keys == frozenset({prefix_key(entity(name)), "t:person"})
    assert len(keys) == 2


@pytest.mark.parametrize("name", ["12345", "李小龙"])
def test_a_strategy_after_a_missing_soundex_key_still_contributes(name: str) -> None:
    # An explicit order: the default set iterates in hash order, which
    # varies between runs, so it does not always reach a strategy after soundex.
    keys = blocking_keys_for(
        entity(name, "person"), [BlockingKeyStrategy.SOUNDEX, BlockingKeyStrategy.PREFIX]
    )

    assert keys == frozenset({prefix_key(entity(name))})


@pytest.mark.parametrize(
    ("strategies", "expected"),
    [
        ([], frozenset()),
        ([BlockingKeyStrategy.PREFIX], frozenset({"p:ada l"})),
        ([BlockingKeyStrategy.SOUNDEX], frozenset({"s:A341"})),
        ([BlockingKeyStrategy.ENTITY_TYPE], frozenset({"t:person"})),
        (
            [BlockingKeyStrategy.PREFIX, BlockingKeyStrategy.ENTITY_TYPE],
            frozenset({"p:ada l", "t:person"}),
        ),
        (["soundex", "prefix"], frozenset({"s:A341", "p:ada l"})),
    ],
)
def test_only_the_requested_strategies_contribute_keys(
    strategies: list[BlockingKeyStrategy], expected: frozenset[str]
) -> None:
    assert blocking_keys_for(entity("Ada Lovelace", "person"), strategies) == expected


def test_an_unknown_strategy_is_rejected() -> None:
    with pytest.raises(ValueError, match="phonetic"):
        blocking_keys_for(entity(), ["phonetic"])  # type: ignore[list-item]


@pytest.mark.parametrize("strategies", ["prefix", 3, None])
def test_strategies_that_are_not_an_iterable_of_strategies_are_refused(strategies: Any) -> None:
    with pytest.raises(ValueError, match=r"^strategies must be an iterable of strategies, got "):
        blocking_keys_for(entity(), strategies)


@given(storable_name, storable_name)
@example("person", "person")
@example("p:ada", "Ada")
@example("ada l", "ada l")
def test_a_type_key_never_equals_a_prefix_or_soundex_key(name: str, entity_type: str) -> None:
    subject = entity(name, entity_type)

    assert entity_type_key(subject) != prefix_key(subject)
    assert entity_type_key(subject) != soundex_key(subject)
    assert prefix_key(subject) != soundex_key(subject)


@given(storable_name, storable_name)
@example("李小龙", "person")
@example("12345", "company")
def test_every_entity_has_a_prefix_and_a_type_key(name: str, entity_type: str) -> None:
    subject = entity(name, entity_type)
    keys = blocking_keys_for(subject)

    assert prefix_key(subject) in keys
    assert entity_type_key(subject) in keys
    assert len(prefix_key(subject)) > len("p:")
    assert len(keys) in {2, 3}


@given(storable_name, storable_name)
def test_names_equal_after_normalization_share_every_key(name: str, entity_type: str) -> None:
    shouting = f"  {name.upper()}  "
    if shouting.casefold().split() == name.casefold().split():
        assert blocking_keys_for(entity(shouting, entity_type)) == blocking_keys_for(
            entity(name, entity_type)
        )


def test_prefix_key_for_name_agrees_with_the_entity_form() -> None:
    """The two spellings are one function; a copy is how they drift."""
    entity = make_entity(name="Ada Lovelace")
    assert prefix_key_for_name("Ada Lovelace") == prefix_key(entity)


def test_soundex_key_for_name_agrees_with_the_entity_form() -> None:
    entity = make_entity(name="Ada Lovelace")
    assert soundex_key_for_name("Ada Lovelace") == soundex_key(entity)


def test_soundex_key_for_name_is_none_when_nothing_can_be_coded() -> None:
    """Same empty case as the entity form: digits code to nothing."""
    assert soundex_key_for_name("12345") is None


def test_query_blocking_keys_carries_prefix_and_soundex() -> None:
    keys = query_blocking_keys("Ada Lovelace")
    assert prefix_key_for_name("Ada Lovelace") in keys
    assert soundex_key_for_name("Ada Lovelace") in keys


def test_query_blocking_keys_never_carries_a_type_key() -> None:
    """A type key blocks an entire type -- often the whole tenant.

    The type key exists so an entity is never unblockable. As a *query* key it
    is the opposite: it matches every entity of that type, so candidate
    generation would degrade into a full scan the moment a query happened to
    share a type. `entity_types` is applied as a filter, not as a key.
    """
    keys = query_blocking_keys("Ada Lovelace")
    assert not any(key.startswith("t:") for key in keys)


def test_query_blocking_keys_drops_an_absent_soundex() -> None:
    """A query that codes to nothing yields the prefix key alone, not a None."""
    assert query_blocking_keys("12345") == [prefix_key_for_name("12345")]


def test_query_blocking_keys_has_no_duplicates() -> None:
    """`find_by_blocking_keys` keys its result by key; a repeat is a wasted query."""
    keys = query_blocking_keys("Ada Lovelace")
    assert len(keys) == len(set(keys))


@given(st.text(max_size=30))
@example("12345")
@example("Ada Lovelace")
@example("")
@example("   ")
def test_query_blocking_keys_is_the_prefix_key_then_the_soundex_key_when_there_is_one(
    query: str,
) -> None:
    """The exact answer, so a dropped, added or reordered key is caught.

    `test_query_blocking_keys_has_no_duplicates` cannot fail while the `p:` and
    `s:` namespaces differ; this pins what the function returns instead.
    """
    soundex = soundex_key_for_name(query)
    expected = [prefix_key_for_name(query)] + ([soundex] if soundex is not None else [])
    assert query_blocking_keys(query) == expected


@given(storable_name)
@example("Müñoz")
@example("ﬁsh 12 Ǆ")  # compatibility forms decompose into ASCII letters
@example("Straße")  # "ß" is a letter but not an ASCII one, and NFKD keeps it
@example("[`@{")  # the neighbours of the ASCII letters
@example("李小龙")
def test_the_soundex_key_codes_exactly_the_ascii_letters_of_the_decomposed_name(name: str) -> None:
    """The definition, written out: NFKD of the normalized name, its ASCII letters, coded."""
    decomposed = unicodedata.normalize("NFKD", normalize_name(name))
    letters = "".join(c for c in decomposed if c.isascii() and c.isalpha())
    expected = "s:" + jellyfish.soundex(letters) if letters else None
    assert soundex_key_for_name(name) == expected


@given(storable_name, storable_name)
@example("Ada Lovelace", "Person")
@example("12345", "person")
def test_the_default_keys_are_each_strategys_key(name: str, entity_type: str) -> None:
    held = entity(name, entity_type)
    keys = {prefix_key(held), soundex_key(held), entity_type_key(held)} - {None}
    assert blocking_keys_for(held) == keys
    values: list[Any] = [str(strategy) for strategy in DEFAULT_STRATEGIES]  # values, not members
    assert blocking_keys_for(held, values) == keys
