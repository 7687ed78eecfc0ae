"""Retrieval quality on a fixed slice of the bench's labelled sets, held above floors.

The slice is what `bench/quality.py --embedder fake --sets febrl4,mentions
--size 300 --no-baselines` measures: 300 seeded FEBRL4 links against all
4,999 A records, and 300 seeded FEBRL3 mention forms against the 1,999
originals, through the public `Retriever` in LEXICAL mode. The floors
watch the lexical channel, the one a code change can break without a model
noticing; hybrid and semantic figures need the real embedder and live in the
bench, not in CI.
"""

from __future__ import annotations

import asyncio

import pytest
from bench.datasets import LabelledSet, Person, Query, Record, load_set, mention_forms
from bench.quality import Report, evaluate, new_embedder, rank_of

from redstring import RetrievalMode

# Floors a regression cannot slip under, on the slice above. Each is what
# main measured, rounded down to the hundredth (counts: what main measured,
# as a ceiling). A change that lifts a figure raises its floor here in the
# same commit; one that lowers a figure says why in its commit body.
#
# (group, method, metric) -> at least this. "candidates" is the lexical
# channel's candidate recall.
FLOORS: dict[tuple[str, str, str], float] = {
    ("febrl4", "lexical", "r1"): 0.81,
    ("febrl4", "lexical", "r10"): 0.90,
    ("febrl4", "lexical", "mrr10"): 0.84,
    ("febrl4", "candidates", "recall"): 0.98,
    ("mentions", "lexical", "r10"): 0.99,
    ("mentions/title", "lexical", "r10"): 1.0,
    ("mentions/surname", "lexical", "r1"): 0.95,
    ("mentions/surname", "lexical", "r10"): 1.0,
    ("mentions/initial", "lexical", "r10"): 0.98,
    ("mentions/reversed", "lexical", "r10"): 1.0,
}

# (group) -> at most this many LEXICAL answers that are empty although the
# query shares a whole word with its answer.
EMPTY_SHARING_A_WORD_CEILINGS: dict[str, int] = {
    "febrl4": 0,
    "mentions": 0,
}

SLICE = 300


@pytest.fixture(scope="module")
def report() -> Report:
    async def measure() -> Report:
        embedder = await new_embedder("fake")
        whole = Report()
        for name in ("febrl4", "mentions"):
            part = await evaluate(
                load_set(name, size=SLICE),
                [embedder],
                baselines=False,
                names=["fake"],
                modes=[RetrievalMode.LEXICAL],
            )
            whole.rows += part.rows
            whole.candidates += part.candidates
        return whole

    return asyncio.run(measure())


def figure(report: Report, group: str, method: str, metric: str) -> float:
    if method == "candidates":
        candidate = report.candidate(group)
        assert candidate is not None, group
        return float(getattr(candidate, metric))
    row = report.row(group, method, "-")
    assert row is not None, (group, method)
    return float(getattr(row, metric))


@pytest.mark.parametrize(("group", "method", "metric"), sorted(FLOORS))
def test_retrieval_stays_above_its_floor(
    report: Report, group: str, method: str, metric: str
) -> None:
    assert figure(report, group, method, metric) >= FLOORS[(group, method, metric)]


@pytest.mark.parametrize("group", sorted(EMPTY_SHARING_A_WORD_CEILINGS))
def test_empty_lexical_answers_for_queries_sharing_a_word_do_not_grow(
    report: Report, group: str
) -> None:
    candidate = report.candidate(group)
    assert candidate is not None
    assert candidate.empty_sharing_token <= EMPTY_SHARING_A_WORD_CEILINGS[group]


def test_the_slice_is_the_one_the_floors_were_measured_on(report: Report) -> None:
    counts = {row.group: row.queries for row in report.rows if row.method == "lexical"}
    assert counts["febrl4"] == 300
    assert counts["mentions"] == 300
    assert (
        sum(counts[f"mentions/{form}"] for form in ("title", "surname", "initial", "reversed"))
        == 300
    )


# -- the harness itself ---------------------------------------------------------------


def test_rank_of_is_one_based_and_stops_at_ten() -> None:
    keys = [f"k{index}" for index in range(12)]
    assert rank_of(keys, frozenset({"k0"})) == 1
    assert rank_of(keys, frozenset({"k9"})) == 10
    assert rank_of(keys, frozenset({"k10"})) is None
    assert rank_of(keys, frozenset({"k3", "k1"})) == 2
    assert rank_of([], frozenset({"k0"})) is None


def test_metrics_are_counted_per_query_against_every_right_answer() -> None:
    records = (
        Record(key="a", name="ada lovelace", entity_type="person"),
        Record(key="b", name="grace hopper", entity_type="person"),
        Record(key="c", name="alan turing", entity_type="person"),
    )
    queries = (
        Query(text="ada lovelace", gold=frozenset({"a"})),  # exact: first on every channel
        Query(text="grace hoper", gold=frozenset({"b"})),  # a typo the keys still reach
        Query(text="zzzz", gold=frozenset({"c"})),  # nothing lexical, and no meaning
        Query(text="alan turing", gold=frozenset({"b", "c"})),  # either answer counts
    )
    labelled = LabelledSet("tiny", records, queries, source="literals")

    async def measure() -> Report:
        embedder = await new_embedder("fake")
        return await evaluate(labelled, [embedder], names=["fake"])

    report = asyncio.run(measure())
    lexical = report.row("tiny", "lexical", "-")
    assert lexical is not None
    assert (lexical.queries, lexical.r1, lexical.r10, lexical.empty) == (4, 0.75, 0.75, 1)
    assert lexical.mrr10 == 0.75
    candidate = report.candidate("tiny")
    assert candidate is not None
    assert candidate.recall == 0.75
    assert candidate.none == 1
    assert candidate.empty_sharing_token == 0
    scan = report.row("tiny", "jw-scan", "-")
    assert scan is not None
    assert scan.empty == 0  # a full scan always answers


def test_mention_forms_are_the_four_prose_forms() -> None:
    person = Person(
        key="rec-7-org",
        cluster="rec-7",
        given_name="mitchell",
        surname="green",
        name="mitchell green",
        date_of_birth="",
        suburb="",
    )
    forms = mention_forms(person)
    assert forms["surname"] == "Green"
    assert forms["initial"] == "M. Green"
    assert forms["reversed"] == "Green, Mitchell"
    assert forms["title"].endswith(" Mitchell Green")
    assert forms["title"].split()[0] in ("Dr", "Mr", "Mrs", "Ms", "Prof")


def test_a_mention_without_a_given_name_has_only_the_surname_form() -> None:
    person = Person(
        key="rec-8-org", cluster="rec-8", given_name="", surname="green",
        name="green", date_of_birth="", suburb="",
    )  # fmt: skip
    assert mention_forms(person) == {"surname": "Green"}


def test_a_set_cut_is_the_same_in_every_run_and_keeps_every_record() -> None:
    first, second = load_set("nicknames", size=50), load_set("nicknames", size=50)
    assert first.queries == second.queries
    assert len(first.queries) == 50
    assert first.records == load_set("nicknames").records


@pytest.mark.parametrize("size", [0, -1, True, 2.5])
def test_a_bad_size_is_refused_naming_it(size: object) -> None:
    with pytest.raises(ValueError, match="size"):
        load_set("febrl4", size=size)  # type: ignore[arg-type]


def test_an_unknown_set_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown set 'geonames'"):
        load_set("geonames")
