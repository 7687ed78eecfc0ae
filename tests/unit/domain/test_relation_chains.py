"""A query's relation chain: English kinship terms, composed and ordered as the query says them."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.relation_chains import (
    BASIC_RELATIONS,
    MAX_GREATS,
    StatedRelation,
    Step,
    read_relation_chain,
    relation_of_type,
)

P, C, S, M, F = (Step(name) for name in BASIC_RELATIONS)
MOTHER, FATHER = Step("parent", "female"), Step("parent", "male")
DAUGHTER, SON = Step("child", "female"), Step("child", "male")
SISTER, BROTHER = Step("sibling", "female"), Step("sibling", "male")
WIFE, HUSBAND = Step("spouse", "female"), Step("spouse", "male")


def only(query: str) -> tuple[tuple[Step, ...], ...]:
    [term] = read_relation_chain(query).terms
    return term


@pytest.mark.parametrize(
    ("phrase", "spellings"),
    [
        ("the mother of X", ((MOTHER,),)),
        ("X's mum", ((MOTHER,),)),
        ("X's dad", ((FATHER,),)),
        ("the parents of X", ((P,),)),
        ("the children of X", ((C,),)),
        ("X's kid", ((C,),)),
        ("X's kids", ((C,),)),
        ("the sons of X", ((SON,),)),
        ("X's pal", ((F,),)),
        ("the husband of X", ((HUSBAND,),)),
        ("the spouse of X", ((M,),)),
        ("the sibling of X", ((S,),)),
        ("the grandparent of X", ((P, P),)),
        ("X's grandma", ((P, MOTHER),)),
        ("X's grandmum", ((P, MOTHER),)),
        ("the granddaddy of X", ((P, FATHER),)),
        ("the great-grandmother of X", ((P, P, MOTHER),)),
        ("the great great grandson of X", ((C, C, C, SON),)),
        ("the grandchildren of X", ((C, C),)),
        ("the aunt of X", ((P, SISTER), (P, S, WIFE))),
        ("the uncles of X", ((P, BROTHER), (P, S, HUSBAND))),
        ("the great-uncle of X", ((P, P, BROTHER), (P, P, S, HUSBAND))),
        ("the grand-aunt of X", ((P, P, SISTER), (P, P, S, WIFE))),
        ("the niece of X", ((S, DAUGHTER), (M, S, DAUGHTER))),
        ("the great-nephew of X", ((S, C, SON), (M, S, C, SON))),
        ("the cousin of X", ((P, S, C),)),
        ("the female cousin of X", ((P, S, DAUGHTER),)),
        ("the male second cousin of X", ((P, P, S, C, SON),)),
        ("the second cousins of X", ((P, P, S, C, C),)),
        ("the grand uncles of X", ((P, P, BROTHER), (P, P, S, HUSBAND))),
        (
            "the first cousin once removed of X",
            ((P, S, C, C), (P, P, S, C)),
        ),
        ("the cousin two times removed of X", ((P, S, C, C, C), (P, P, P, S, C))),
        ("the father-in-law of X", ((M, FATHER),)),
        ("X's dads-in-law", ((M, FATHER),)),
        ("the son-in-law of X", ((C, HUSBAND),)),
        ("the daughter in law of X", ((C, WIFE),)),
        ("the sister-in-law of X", ((M, SISTER), (S, WIFE))),
        ("the female friend of X", ((Step("friend", "female"),),)),
    ],
)
def test_each_term_is_spelled_as_steps_over_the_basic_relations(
    phrase: str, spellings: tuple[tuple[Step, ...], ...]
) -> None:
    assert only(phrase) == spellings


def test_of_reads_the_outer_relation_first_and_the_possessive_the_inner() -> None:
    of = read_relation_chain("Who is the sister of the uncle of the son of Drema Chi?")
    possessive = read_relation_chain("Drema Chi's son's uncle's sister: who is that?")
    assert of.terms == possessive.terms
    assert [term[0][-1] for term in of.terms] == [SON, BROTHER, SISTER]


def test_each_span_is_the_text_its_term_was_read_from() -> None:
    query = "Name the person with job site engineer\u2019s Great-Grandma's Brother-in-law."
    chain = read_relation_chain(query)
    assert [query[start:end] for start, end in chain.spans] == [
        "Great-Grandma",
        "Brother-in-law",
    ]
    assert chain.terms[0] == ((P, P, MOTHER),)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "Who wrote Hamlet?",
        "the great of X",
        "the in-law of X",
        "the friend-in-law of X",
        "the great-friend of X",
        "the great-cousin of X",
        "the second of X",
    ],
)
def test_words_that_compose_no_relation_give_no_term(query: str) -> None:
    assert read_relation_chain(query).terms == ()


@given(greats=st.integers(min_value=0, max_value=MAX_GREATS + 3))
@example(greats=MAX_GREATS)
@example(greats=MAX_GREATS + 1)
def test_a_run_of_great_is_bounded(greats: int) -> None:
    terms = read_relation_chain("the " + "great-" * greats + "grandson of X").terms
    if greats > MAX_GREATS:
        assert terms == ()
    else:
        assert terms == (((*([C] * (greats + 1)), SON),),)


@given(st.text(max_size=80))
@example("'s 's of of")
@example("great great")
@example("female")
@example("first cousin once")
@example("cousin twice")
@example("son in")
def test_any_text_reads_without_error_and_spans_lie_inside_it(query: str) -> None:
    chain = read_relation_chain(query)
    assert len(chain.terms) == len(chain.spans)
    for start, end in chain.spans:
        assert 0 <= start < end <= len(query)
    for term in chain.terms:
        assert term
        assert all(step.relation in BASIC_RELATIONS for spelling in term for step in spelling)


@pytest.mark.parametrize(
    ("relationship_type", "stated"),
    [
        ("mother", StatedRelation(MOTHER)),
        ("has_mother", StatedRelation(MOTHER)),
        ("MOTHER_OF", StatedRelation(MOTHER, reversed=True)),
        ("is the mother of", StatedRelation(MOTHER, reversed=True)),
        ("parent", StatedRelation(P)),
        ("child_of", StatedRelation(C, reversed=True)),
        ("is a friend of", StatedRelation(F, reversed=True)),
        ("Sons", StatedRelation(SON)),
        ("spouse", StatedRelation(M)),
        ("married_to", StatedRelation(M)),
        ("grandmother", None),
        ("mother_in_law", None),
        ("works_for", None),
        ("hobby", None),
        ("of", None),
    ],
)
def test_a_type_states_a_basic_relation_when_its_only_word_is_a_form_of_it(
    relationship_type: str, stated: StatedRelation | None
) -> None:
    assert relation_of_type(relationship_type) == stated


def test_terms_read_inside_the_given_spans_are_left_out() -> None:
    query = "Who is the mother of Will Son?"
    chain = read_relation_chain(query)
    assert [query[start:end] for start, end in chain.spans] == ["Son", "mother"]
    name = (query.index("Will"), len(query) - 1)
    kept = chain.outside([name])
    assert kept.terms == (((MOTHER,),),)
    assert [query[start:end] for start, end in kept.spans] == ["mother"]
    # A span that only touches a term's edge leaves it in.
    assert chain.outside([(0, query.index("mother"))]) == chain
    assert chain.outside([]) == chain


@pytest.mark.parametrize("bad", [None, 3, b"the son of X", ["the son of X"]])
def test_a_query_or_type_that_is_no_string_is_a_value_error_naming_it(bad: object) -> None:
    with pytest.raises(ValueError, match="query must be a string"):
        read_relation_chain(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="relationship_type must be a string"):
        relation_of_type(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [(1,), (1, 2, 3), ("1", 2), (True, 2), [1, 2], None])
def test_a_span_that_is_no_pair_of_integers_is_a_value_error_naming_it(bad: object) -> None:
    chain = read_relation_chain("Who is the son of X?")
    with pytest.raises(ValueError, match="span must be"):
        chain.outside([bad])  # type: ignore[list-item]
