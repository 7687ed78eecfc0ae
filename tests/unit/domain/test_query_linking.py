"""Entities named inside a query, typos tolerated, and how a relationship type fits a query."""

from __future__ import annotations

from redstring.domain.query_linking import link_query, type_fit
from redstring.testing.factories import make_entity


def test_an_entity_named_in_the_query_is_linked_with_its_span() -> None:
    ada = make_entity(name="Ada Lovelace")
    query = "Who is the friend of Ada Lovelace?"
    [link] = link_query(query, [ada, make_entity(name="Alan Turing")])
    assert link.entity == ada
    assert link.score == 1.0
    assert query[link.start : link.end] == "Ada Lovelace"


def test_a_typo_the_lexical_channel_tolerates_still_links() -> None:
    ada = make_entity(name="Ada Lovelace")
    [link] = link_query("Who is the friend of Ada Lovelacs?", [ada])
    assert link.entity == ada
    assert 0.9 <= link.score < 1.0


def test_an_attribute_value_that_is_an_entity_is_linked() -> None:
    hobby = make_entity(name="microscopy", entity_type="hobby")
    [link] = link_query("Who is the person whose hobby is microscopy?", [hobby])
    assert link.entity == hobby


def test_namesakes_are_both_kept_and_a_worse_name_on_the_same_span_is_dropped() -> None:
    first, second = make_entity(name="Genevie Corey"), make_entity(name="Genevie Corey")
    near = make_entity(name="Genevie Conroy")
    links = link_query("Who is the son of Genevie Corey?", [near, first, second])
    assert {link.entity.id for link in links} == {first.id, second.id}


def test_a_shorter_name_inside_a_longer_linked_one_is_dropped() -> None:
    city, york = make_entity(name="New York City"), make_entity(name="York")
    links = link_query("Flights to New York City", [york, city])
    assert [link.entity for link in links] == [city]


def test_a_short_word_links_only_when_spelled_exactly() -> None:
    ng = make_entity(name="Ngo")
    assert link_query("Who is Nga?", [ng]) == []
    assert [link.entity for link in link_query("Who is Ngo?", [ng])] == [ng]


def test_nothing_is_linked_when_no_span_is_alike() -> None:
    assert link_query("Who wrote the program?", [make_entity(name="Ada Lovelace")]) == []


def test_a_type_fits_a_query_word_it_equals_contains_or_nearly_spells() -> None:
    assert type_fit("Who is the son of Ada?", "son") == 1.0
    assert type_fit("Who is the granddaughter of Ada?", "daughter") == 0.9
    assert type_fit("Who is the sons of Ada?", "son") == 0.9
    assert type_fit("Who does Ada work for?", "works_for") == 0.9
    assert type_fit("Who is the friend of Ada?", "sister") == 0.0


def test_a_candidate_listed_twice_is_linked_once() -> None:
    ada = make_entity(name="Ada Lovelace")
    links = link_query("Who is the friend of Ada Lovelace?", [ada, ada])
    assert [link.entity for link in links] == [ada]


def test_a_types_filler_words_fit_no_query_word() -> None:
    # Every question says "of"; "mother_of" fits only by "mother".
    assert type_fit("Who is the friend of Ada?", "mother_of") == 0.0
    assert type_fit("Who is the mother of Ada?", "is_mother_of") == 1.0
    assert type_fit("Who is married to Ada?", "is_married_to") == 1.0
    # A type's filler is not read inside a query's word ("has" in "chase").
    assert type_fit("Who did Ada chase?", "has_child") == 0.0
    # Nor is a query's filler: "the" is not read inside "mother".
    assert type_fit("Who is the friend of Ada?", "mother") == 0.0
    assert type_fit("What is a whale?", "is_a") == 0.0
