"""A context's budget keeps whole sentences, best first; its relation paths are joined."""

from __future__ import annotations

import pytest

from redstring.domain.context import (
    RelationPath,
    ScoredPassage,
    fit_to_budget,
    sentence_prefix,
    trim_chunk,
)
from redstring.testing.factories import (
    OTHER_TENANT,
    TENANT,
    make_chunk,
    make_entity,
    make_relationship,
)


def passage(text: str, score: float, start: int = 0) -> ScoredPassage:
    return ScoredPassage(chunk=make_chunk(text, start=start), score=score, bm25=score)


def test_a_sentence_prefix_ends_at_the_last_sentence_end_within_the_limit() -> None:
    text = "Ada wrote. Babbage built it! Who paid? Nobody"
    assert sentence_prefix(text, 100) == 38
    assert sentence_prefix(text, 38) == 38
    assert sentence_prefix(text, 37) == 28
    assert sentence_prefix(text, 9) == 0


def test_a_full_stop_inside_a_number_or_before_a_letter_is_no_sentence_end() -> None:
    assert sentence_prefix("It cost 3.5 pounds", 18) == 0
    assert sentence_prefix("See example.com today. Yes", 26) == 22


def test_a_closing_quote_belongs_to_its_sentence_and_a_line_break_ends_one() -> None:
    assert sentence_prefix('He said "go." Then', 18) == 13
    assert sentence_prefix("A heading\nBody text", 19) == 9


def test_a_trimmed_chunk_keeps_its_start_and_moves_its_end() -> None:
    chunk = make_chunk("One. Two.", start=40)
    trimmed = trim_chunk(chunk, 4)
    assert (trimmed.text, trimmed.start, trimmed.end, trimmed.id) == ("One.", 40, 44, chunk.id)
    assert trim_chunk(chunk, 9) is chunk


def test_the_budget_keeps_passages_best_first_and_trims_the_last_at_a_sentence_end() -> None:
    first = passage("Ada wrote notes.", 3.0)  # 16 characters
    second = passage("Babbage built it. It never ran.", 2.0)  # 31 characters
    kept = fit_to_budget([first, second], 35)
    assert [p.chunk.text for p in kept] == ["Ada wrote notes.", "Babbage built it."]
    assert kept[1].score == 2.0
    assert kept[1].bm25 == 2.0


def test_a_passage_with_no_sentence_end_in_the_budget_is_skipped_and_a_later_one_fits() -> None:
    long = passage("A very long passage without an early stop at all. End.", 3.0)
    short = passage("Short one.", 1.0)
    kept = fit_to_budget([long, short], 12)
    assert [p.chunk.text for p in kept] == ["Short one."]


def test_a_budget_exactly_the_size_of_the_passages_keeps_them_whole() -> None:
    a, b = passage("One.", 2.0), passage("Two.", 1.0)
    assert fit_to_budget([a, b], 8) == [a, b]
    assert fit_to_budget([a, b], 7) == [a]


def test_a_budget_spent_exactly_stops_the_scan() -> None:
    first = passage("Ada wrote notes.", 3.0)  # 16 characters: the whole budget
    kept = fit_to_budget([first, passage("Babbage.", 2.0)], 16)
    assert kept == [first]


def test_a_relation_path_joins_each_pair_of_its_entities_in_one_tenant() -> None:
    ann, bea, cy = (make_entity(name=name) for name in ("Ann", "Bea", "Cy"))
    mother = make_relationship(ann, bea, relationship_type="mother")
    child = make_relationship(cy, bea, relationship_type="mother")
    path = RelationPath(entities=[ann, bea, cy], relationships=[mother, child])
    assert [entity.name for entity in path.entities] == ["Ann", "Bea", "Cy"]
    assert RelationPath(entities=[ann]).relationships == []
    with pytest.raises(ValueError, match="a path of 3 entities needs 2 relationships, got 1"):
        RelationPath(entities=[ann, bea, cy], relationships=[mother])
    with pytest.raises(ValueError, match=f"relationship {child.id} joins .* not entities 0 and 1"):
        RelationPath(entities=[ann, bea, cy], relationships=[child, mother])
    there = cy.model_copy(update={"tenant_id": OTHER_TENANT})
    with pytest.raises(ValueError, match=f"{cy.id} is of tenant {OTHER_TENANT}, not {TENANT}"):
        RelationPath(entities=[ann, bea, there], relationships=[mother, child])
    with pytest.raises(ValueError, match="at least 1"):
        RelationPath(entities=[])
