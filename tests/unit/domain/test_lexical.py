"""Scoring an entity against a free-text query, without a text index."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jellyfish
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import JaroWinkler, Levenshtein

from redstring.domain.lexical import (
    PROPERTY_WEIGHT,
    WORD_MATCH_WEIGHT,
    lexical_score,
    lexical_scores,
    name_similarity,
    word_match_similarity,
)
from redstring.domain.names import entity_names
from redstring.testing.factories import make_entity

if TYPE_CHECKING:
    from redstring.domain.entity import Entity

#: What a folded ASCII text is made of: small letters, digits, single spaces.
_FOLDED_ASCII = st.text(alphabet="abcdez09 ", max_size=80).map(lambda text: " ".join(text.split()))
#: Names for a reference check: ASCII, accents, and scripts that romanize.
_NAMES = st.text(alphabet="AdaLove é-µμЖж北 ,", min_size=1, max_size=14).filter(str.strip)


def test_an_exact_name_scores_one() -> None:
    assert lexical_score("Ada Lovelace", make_entity(name="Ada Lovelace")) == 1.0


def test_casing_and_whitespace_are_not_differences() -> None:
    """`string_similarity` normalizes both sides; this pins that it is reached."""
    assert lexical_score("ada  LOVELACE", make_entity(name="Ada Lovelace")) == 1.0


def test_a_runtime_built_query_scores_the_same_as_a_literal() -> None:
    """CPython interns literals, so a literal-only suite cannot see `is` for `==`.

    The query here is built at runtime and is a distinct object from any
    literal in the module.
    """
    literal = "Ada Lovelace"
    built = " ".join(["Ada", "Lovelace"])
    assert built is not literal  # the distinctness is the point
    assert lexical_score(built, make_entity(name=literal)) == 1.0


def test_an_abbreviation_beats_an_unrelated_name() -> None:
    """The case embeddings are worst at, and the reason this channel exists."""
    acme = lexical_score("Acme Corp", make_entity(name="ACME Corporation"))
    other = lexical_score("Acme Corp", make_entity(name="Zebra Holdings"))
    assert acme > other


def test_a_property_can_match_but_scores_below_the_same_match_on_the_name() -> None:
    """The weighting is the claim -- a name match is stronger evidence."""
    on_name = lexical_score("Ada Lovelace", make_entity(name="Ada Lovelace"))
    on_property = lexical_score(
        "Ada Lovelace",
        make_entity(name="Zebra Holdings", properties={"also_known_as": "Ada Lovelace"}),
    )
    assert on_property == pytest.approx(PROPERTY_WEIGHT)
    assert on_property < on_name
    assert on_property > 0.0


def test_a_non_string_property_is_skipped_rather_than_coerced() -> None:
    """`properties` is free-form JSON: ints, lists and dicts all appear.

    Coercing them to `str` would invent matches against "7" and "['a']" that
    no caller asked for -- the same reading `ports/vector_store.py` applies to
    a non-string `entity_type`.
    """
    entity = make_entity(name="Zebra", properties={"count": 7, "tags": ["ada"], "d": {}})
    assert lexical_score("ada", entity) == pytest.approx(
        lexical_score("ada", make_entity(name="Zebra"))
    )


def test_normalized_name_is_scored_when_it_differs_from_the_name() -> None:
    """The extractor's `normalized_name` is scored too.

    The field is whatever the extractor wrote; it can carry a form the name
    does not, and ignoring it would discard the extractor's own work.
    """
    entity = make_entity(name="A. Lovelace", normalized_name="ada lovelace")
    assert lexical_score("Ada Lovelace", entity) == 1.0


def test_the_best_field_wins_rather_than_the_fields_summing() -> None:
    """Summing would let many mediocre fields outrank an exact name match.

    It would also push the result above 1.0.
    """
    entity = make_entity(
        name="Ada Lovelace",
        properties={"a": "Ada Lovelace", "b": "Ada Lovelace", "c": "Ada Lovelace"},
    )
    assert lexical_score("Ada Lovelace", entity) == 1.0


def test_the_score_stays_within_zero_and_one() -> None:
    entity = make_entity(name="Ada Lovelace", properties={"a": "Ada Lovelace"})
    assert 0.0 <= lexical_score("Ada Lovelace", entity) <= 1.0


@given(_FOLDED_ASCII, _FOLDED_ASCII)
@example("a", "b")
@example("ab", "ba")
@example("a", "")
@example("martha", "marhta")
@example("dwayne", "duane")
@example("a" * 64 + "b", "a" * 65)  # past one 64-bit word, rapidfuzz works in blocks
@example("abcde " * 40, "abcde " * 39 + "abcdz")
def test_ascii_texts_are_compared_exactly_as_jellyfish_compares_them(left: str, right: str) -> None:
    """Folded ASCII pairs go to rapidfuzz for speed (ADR 0043): every value must be jellyfish's."""
    if left or right:  # two empty texts are equal, and equal texts never reach either
        assert JaroWinkler.similarity(left, right) == jellyfish.jaro_winkler_similarity(left, right)
    assert Levenshtein.distance(left, right) == jellyfish.levenshtein_distance(left, right)


@settings(max_examples=300)
@given(
    _NAMES,
    _NAMES,
    st.none() | _NAMES,
    st.lists(_NAMES, max_size=2),
    st.dictionaries(st.sampled_from(["city", "title"]), _NAMES, max_size=2),
)
@example("Ada", "Ada", None, [], {})
@example("ada lovelace", "Lovelace Ada", None, [], {})
@example("µ", "x", "µ", ["μ"], {})
@example("Lovelace", "Byron", None, ["Ada Lovelace"], {"title": "Lovelace"})
@example("Zz", "Ada", "ada", [], {"city": "Zz"})
def test_the_score_is_the_best_of_what_its_docstring_lists(
    query: str, name: str, normalized: str | None, aliases: list[str], others: dict[str, str]
) -> None:
    """Whatever the shortcuts, the value is the documented maximum, to the last bit."""
    fields: dict[str, object] = {"name": name, "properties": {**others, "aliases": aliases}}
    if normalized is not None:
        fields["normalized_name"] = normalized
    entity = make_entity(**fields)
    expected = max(
        max(name_similarity(query, each), WORD_MATCH_WEIGHT * word_match_similarity(query, each))
        for each in entity_names(entity)
    )
    for value in entity.properties.values():
        if isinstance(value, str):
            expected = max(expected, PROPERTY_WEIGHT * name_similarity(query, value))
    assert lexical_score(query, entity) == expected


# -- lexical_scores: the same floats as lexical_score, entity by entity ---------------

#: Names for the batch: ASCII words (some repeated, some one edit apart),
#: spacing and punctuation, and a few outside ASCII.
_BATCH_NAMES = st.one_of(
    st.lists(st.sampled_from(["ada", "Ada", "adda", "lovelace", "Lovelace", "byron", "b"]),
             min_size=1, max_size=4).map(" ".join),
    st.text(alphabet="Ada Lovelace,.-'  09", min_size=1, max_size=20).filter(str.strip),
    _NAMES,
)  # fmt: skip


@st.composite
def _scored_entities(draw: st.DrawFn) -> list[Entity]:
    entities = []
    for _ in range(draw(st.integers(0, 12))):
        name = draw(_BATCH_NAMES)
        fields: dict[str, object] = {"name": name}
        extra = draw(st.sampled_from(["none", "aliases", "property", "normalized", "upper"]))
        if extra == "aliases":
            fields["properties"] = {"aliases": [draw(_BATCH_NAMES), 7]}
        elif extra == "property":
            fields["properties"] = {"city": draw(_BATCH_NAMES), "count": 3}
        elif extra == "normalized":
            fields["normalized_name"] = draw(_BATCH_NAMES)
        elif extra == "upper":
            fields["normalized_name"] = name.upper()
        entities.append(make_entity(**fields))
    return entities


def _batch(names: list[str], **fields: object) -> list[Entity]:
    return [make_entity(name=name, **fields) for name in names]


@settings(max_examples=300)
@given(query=_BATCH_NAMES, entities=_scored_entities())
# No entity, and fewer than the batch takes (each is then scored in turn).
@example(query="Ada", entities=[])
@example(query="Ada Lovelace", entities=_batch(["Ada", "Lovelace", "Ada Byron"]))
# The fewest the batch takes: an exact match, a reordering, a bare word, a miss.
@example(
    query="Lovelace, Ada",
    entities=_batch(["Ada Lovelace", "Lovelace Ada", "Lovelace", "Byron"]),
)
# A query that folds to nothing, names that fold to nothing, and a name
# outside ASCII among ASCII ones.
@example(query="--", entities=_batch(["Ada", "--", "Ada Byron", "Жa", ",."]))
@example(query="Ada", entities=_batch([",", "Ada", "Ada Ada", "a d a", "Ада"]))
# Names that all fold outside ASCII: every name in turn, the query too.
@example(query="Ada", entities=_batch(["Ада", "Жж", "北京", "Αθήνα"]))
# A query outside ASCII: every name in turn.
@example(query="Ада", entities=_batch(["Ada", "Ада", "Adda", "Byron"]))
# Names past `MAX_NAME_CHARS`, and an upper-case `normalized_name`.
@example(query="ada " * 70, entities=_batch(["Ada " * 70, "ada " * 80, "b " * 90, "Ada"]))
@example(
    query="ada byron",
    entities=_batch(["Ada Byron", "Ada  Byron", "ada", "Byron"], normalized_name="ADA BYRON"),
)
def test_scoring_together_gives_each_entitys_own_score_bit_for_bit(
    query: str, entities: list[Entity]
) -> None:
    expected = [lexical_score(query, entity) for entity in entities]
    assert [repr(score) for score in lexical_scores(query, entities)] == [
        repr(score) for score in expected
    ]


def test_scoring_together_keeps_the_literal_scores_of_a_surname_and_a_reordering() -> None:
    entities = _batch(["Ada Lovelace", "Lovelace, Ada", "Augusta Ada King", "Grace Hopper"])
    scores = lexical_scores("Lovelace", entities)
    assert scores[:2] == [WORD_MATCH_WEIGHT, WORD_MATCH_WEIGHT]
    assert lexical_scores("Ada Lovelace", entities)[:2] == [1.0, 1.0]
    assert scores[3] < 0.5
