"""A query's rare words, and which candidates hold them (ADR 0116)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.lexical import word_match_similarity, word_rarity_matches
from redstring.testing.factories import make_entity


def test_the_holder_of_the_rare_word_outranks_the_holders_of_the_common_one() -> None:
    """The rare "cowle" is held by one of four candidates, "liam" by three: its holder wins."""
    rare = make_entity(name="Alaiyah Cowle")
    common = [make_entity(name=f"Liam {surname}") for surname in ("Klemm", "Noble", "Howie")]
    scores = word_rarity_matches("liam cowle", [rare, *common])
    assert all(scores[rare.id] > scores[each.id] for each in common)


def test_the_weights_are_literals() -> None:
    """Four candidates: "ada" held by two (log 5/3), "byron" by one (log 5/2).

    The one holding both scores 1.0; "Ada King" holds "ada" only, and its
    "king" is compared with "byron", which share no letter (0.0).
    """
    both = make_entity(name="Ada Byron")
    ada = make_entity(name="Ada King")
    others = [make_entity(name="Zed Quux"), make_entity(name="Mary Shelley")]
    scores = word_rarity_matches("ada byron", [both, ada, *others])
    assert scores[both.id] == 1.0
    ada_weight, byron_weight = math.log(5 / 3), math.log(5 / 2)
    assert scores[ada.id] == pytest.approx(ada_weight / (ada_weight + byron_weight))


def test_an_initial_holds_the_words_it_begins() -> None:
    """The initial "j" is held by "John Smith" and "Jane Doe" (2 of 3), "smith" by one.

    Jane Doe holds the initial and nothing like "smith": her score is the
    initial's share of the weight.
    """
    john, jane = make_entity(name="John Smith"), make_entity(name="Jane Doe")
    other = make_entity(name="Mary Smyth")
    scores = word_rarity_matches("j smith", [john, jane, other])
    assert scores[john.id] == 1.0
    j_weight, smith_weight = math.log(4 / 3), math.log(4 / 2)
    assert scores[jane.id] == pytest.approx(j_weight / (j_weight + smith_weight))
    initialled = make_entity(name="J Smith")
    assert word_rarity_matches("john smith", [initialled, other])[initialled.id] == 1.0


def test_a_word_alike_counts_by_what_it_has_beyond_the_median() -> None:
    """No one holds "smith": "Smyth" counts by how far its likeness tops the median's.

    The three best likenesses are Smyth's, Smart's and Doe's; the median is
    Smart's, so Smyth scores `(s - m) / (1 - m)` and the other two nothing.
    """
    smyth, doe = make_entity(name="Mary Smyth"), make_entity(name="Jane Doe")
    smart = make_entity(name="Ann Smart")
    alike = word_match_similarity("smith", "Mary Smyth")
    middle = sorted(word_match_similarity("smith", each) for each in ("Jane Doe", "Ann Smart"))[1]
    assert word_match_similarity("smith", "Jane Doe") < middle < alike
    scores = word_rarity_matches("smith", [smyth, doe, smart])
    assert scores[smyth.id] == pytest.approx((alike - middle) / (1 - middle))
    assert scores[doe.id] == scores[smart.id] == 0.0


def test_a_two_letter_word_of_the_query_counts_for_nothing() -> None:
    """The particle "of" is left out: "City of Lord Anantha" gains nothing by holding it."""
    holder, other = make_entity(name="City of Lord Anantha"), make_entity(name="Tokyo")
    assert word_rarity_matches("of", [holder, other]) == {holder.id: 0.0, other.id: 0.0}
    with_particle = word_rarity_matches("capital of japan", [holder, other])
    assert with_particle == word_rarity_matches("capital japan", [holder, other])


def test_an_alias_holds_words_as_the_name_does() -> None:
    aliased = make_entity(name="Augusta King", properties={"aliases": ["Ada Lovelace"]})
    plain = make_entity(name="Augusta Byron")
    scores = word_rarity_matches("lovelace", [aliased, plain])
    assert scores[aliased.id] == 1.0
    assert scores[plain.id] < 1.0


def test_a_word_every_candidate_holds_tells_nothing() -> None:
    """Every candidate holds every query word: all score 0.0, none is preferred."""
    group = [make_entity(name=f"Ada {surname}") for surname in ("King", "Byron")]
    assert set(word_rarity_matches("ada", group).values()) == {0.0}


def test_nothing_to_compare_scores_nothing() -> None:
    entity = make_entity(name="Ada")
    assert word_rarity_matches("Ada", []) == {}
    assert word_rarity_matches(" , ", [entity]) == {entity.id: 0.0}


def test_names_without_words_hold_nothing() -> None:
    """Names that fold to no word: every query word is unheld everywhere."""
    bare, other = make_entity(name="!!!"), make_entity(name="?")
    assert word_rarity_matches("ada", [bare, other]) == {bare.id: 0.0, other.id: 0.0}


def test_an_entity_given_twice_is_one_candidate() -> None:
    """Counted twice, "Mary Smyth" would move the median of the likenesses to "smith".

    Once, the median is "Ann Smart"'s likeness; twice, it would be halfway
    between hers and Smyth's, and Smyth's score would fall.
    """
    smyth, doe = make_entity(name="Mary Smyth"), make_entity(name="Jane Doe")
    smart = make_entity(name="Ann Smart")
    assert word_rarity_matches("smith", [smyth, smyth, doe, smart]) == word_rarity_matches(
        "smith", [smyth, doe, smart]
    )


words = st.text(alphabet="abcdeé", min_size=1, max_size=6)
names = st.lists(words, min_size=1, max_size=3).map(" ".join)


@given(names, st.lists(names, min_size=1, max_size=6))
@example("ada", ["ada"])
@example("ada ada", ["ada", "bob"])
@example("é", ["e", "é"])
def test_every_score_is_on_zero_to_one(query: str, candidates: list[str]) -> None:
    entities = [make_entity(name=name) for name in candidates]
    scores = word_rarity_matches(query, entities)
    assert set(scores) == {entity.id for entity in entities}
    assert all(0.0 <= score <= 1.0 for score in scores.values())


@pytest.mark.parametrize("query", [3, None, b"ada"])
def test_a_query_that_is_not_a_string_is_refused_naming_it(query: object) -> None:
    with pytest.raises(ValueError, match=repr(query)):
        word_rarity_matches(query, [make_entity()])  # type: ignore[arg-type]


def test_a_candidate_that_is_not_an_entity_is_refused_before_any_is_scored() -> None:
    """A bad item after a good one: named, and nothing half-scored comes back."""
    with pytest.raises(ValueError, match="'Ada'"):
        word_rarity_matches("ada", [make_entity(), "Ada"])  # type: ignore[list-item]
