"""The name index: counts, ties, removal, compaction, and each way its lookup takes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import chain
from typing import TYPE_CHECKING, Final
from uuid import UUID

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.ids import EntityId
from redstring.domain.names import (
    MIN_SHARED_UNITS,
    entity_name_units,
    query_name_units,
    word_units,
)
from redstring.graph import name_index
from redstring.graph.name_index import NameIndex, UnitPostings
from redstring.testing.factories import make_entity

if TYPE_CHECKING:
    from collections.abc import Iterator

    from redstring.domain.entity import Entity


def _id(number: int) -> EntityId:
    return EntityId(UUID(int=number))


def test_candidates_rank_by_shared_units_then_by_id_and_skip_removed_rows() -> None:
    index = NameIndex()
    low, high, far = _id(1), _id(2), _id(3)
    index.put(make_entity(id=high, name="Ada Lovelace"), revision=1)
    index.put(make_entity(id=low, name="Ada Lovelace"), revision=2)
    index.put(make_entity(id=far, name="Ada"), revision=3)
    assert index.find(["  a", " ad", "ada", "  l", " lo"], limit=3) == [low, high, far]
    assert index.find(["  a", " ad", "ada", "  l", " lo"], limit=1) == [low]
    index.remove(low)
    assert index.find(["  a", " ad", "ada", "  l", " lo"], limit=3) == [high, far]
    assert index.revision_of(high) == 1
    assert len(index) == 2


def test_a_unit_shared_alone_is_not_enough_and_unknown_units_find_nothing() -> None:
    index = NameIndex()
    index.put(make_entity(id=_id(1), name="Ada"), revision=1)
    assert index.find(["  a"], limit=5) == []
    assert index.find(["zzz", "yyy"], limit=5) == []
    assert index.find(["  a", " ad"], limit=0) == []


def test_replacing_entities_again_and_again_compacts_and_keeps_the_latest() -> None:
    index = NameIndex()
    first, second = _id(1), _id(2)
    index.put(make_entity(id=second, name="Grace Hopper"), revision=1)
    for revision in range(2, 1_200):
        index.put(make_entity(id=first, name="Ada Lovelace"), revision=revision)
    index.put(make_entity(id=first, name="Grace Hopper"), revision=1_201)
    assert len(index.ids) < 1_100
    assert index.find(["  g", " gr", "gra"], limit=5) == [first, second]
    assert index.find(["  a", " ad", "ada"], limit=5) == []
    assert index.revision_of(first) == 1_201
    assert index.revision_of(second) == 1


# The lookup has two ways (counting every posting, or the staged walk) and the
# walk two ways of testing rows against a unit's postings (reading them whole,
# or searching them); these modes force each, whatever the index's size.
_MODES: Final[dict[str, dict[str, int]]] = {
    "count": {},
    "walk, searching": {"_COUNT_ALL_BELOW": 0, "_READ_WHOLE_UP_TO": 0},
    "walk, reading whole": {"_COUNT_ALL_BELOW": 0, "_READ_WHOLE_UP_TO": 1 << 30},
    "walk, as shipped": {"_COUNT_ALL_BELOW": 0},
}


@contextmanager
def _mode(name: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for setting, value in _MODES[name].items():
            patch.setattr(name_index, setting, value)
        yield


def _expected(held: dict[EntityId, Entity], query: str, limit: int) -> list[EntityId]:
    """The contract, by brute force: shared distinct units, at least two, then `str(id)`."""
    units = set(query_name_units(query))
    shared = {
        entity_id: len(entity_name_units(entity) & units) for entity_id, entity in held.items()
    }
    ranked = sorted(
        (entity_id for entity_id, count in shared.items() if count >= MIN_SHARED_UNITS),
        key=lambda entity_id: (-shared[entity_id], str(entity_id)),
    )
    return ranked[:limit]


# Ids that differ in the high half, the low half, or both in opposite orders,
# so that a tie broken on one half alone, or on the halves swapped, shows.
_IDS: Final = [
    EntityId(UUID(int=(high << 64) | low))
    for high, low in [(0, 5), (0, 1), (1, 0), (2, 3), (1, 7), (0, 2), (3, 0)]
]
_WORDS: Final = ["ab", "aab", "abab", "ba", "bab", "abba", "b", "aa", "abc"]
_names = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join)
# Each step writes an id's entity (a name) or removes it (`None`).
_steps = st.lists(st.tuples(st.integers(0, len(_IDS) - 1), st.none() | _names), max_size=14)


@given(steps=_steps, query=_names, limit=st.integers(0, 9), mode=st.sampled_from(list(_MODES)))
# Ties at the cut: three equal names, the two smallest ids win.
@example(
    steps=[(2, "ab ba"), (0, "ab ba"), (1, "ab ba")], query="ab ba", limit=2, mode="walk, searching"
)
@example(steps=[(2, "ab ba"), (0, "ab ba"), (1, "ab ba")], query="ab ba", limit=2, mode="count")
# A row retired by a replace and one by a remove, both still in the postings.
@example(
    steps=[(0, "abab ba"), (1, "abab ba"), (0, "b"), (1, None), (2, "abab")],
    query="abab ba",
    limit=3,
    mode="walk, reading whole",
)
# More asked for than there are candidates, each count its own stage.
@example(
    steps=[(0, "abab bab aab"), (1, "abab bab"), (2, "abab"), (3, "b")],
    query="abab bab aab",
    limit=9,
    mode="walk, as shipped",
)
# A row searched for past the last posting of a unit it lacks.
@example(
    steps=[(0, "ab"), (1, "ab"), (2, "ab"), (3, "ab ba"), (4, "ba")],
    query="ab ba",
    limit=5,
    mode="walk, searching",
)
# Exactly `limit` rows by the end of a stage.
@example(
    steps=[(0, "abab bab"), (1, "abab bab"), (2, "abab")],
    query="abab bab",
    limit=2,
    mode="walk, searching",
)
def test_a_lookup_finds_what_counting_every_entity_finds(
    steps: list[tuple[int, str | None]], query: str, limit: int, mode: str
) -> None:
    index = NameIndex()
    held: dict[EntityId, Entity] = {}
    for revision, (number, name) in enumerate(steps):
        entity_id = _IDS[number]
        if name is None:
            index.remove(entity_id)
            held.pop(entity_id, None)
        else:
            held[entity_id] = make_entity(id=entity_id, name=name)
            index.put(held[entity_id], revision)
    with _mode(mode):
        assert index.find(query_name_units(query), limit) == _expected(held, query, limit)


@pytest.mark.parametrize("mode", list(_MODES))
def test_a_unit_held_by_most_rows_is_searched_and_still_counted(mode: str) -> None:
    # 3,000 rows share "smith"; the query's rare words reach a few. A row
    # must still be credited with the common unit it holds.
    index = NameIndex()
    held: dict[EntityId, Entity] = {}
    names = ["Jo Smith", "Zyx Smith", "Zyx Qwv", "Zyx Qwv Smith", "Zyx Smit"]
    for number in range(3_000):
        name = names[number] if number < len(names) else f"Al{number % 10} Smith"
        entity = make_entity(id=EntityId(UUID(int=10_000 - number)), name=name)
        held[entity.id] = entity
        index.put(entity, revision=number)
    index.remove(EntityId(UUID(int=10_000 - 3)))
    del held[EntityId(UUID(int=10_000 - 3))]
    with _mode(mode):
        for query, limit in [("Zyx Qwv Smith", 3), ("Zyx Qwv Smith", 40), ("Zyx Smith", 2)]:
            assert index.find(query_name_units(query), limit) == _expected(held, query, limit)


def test_two_threads_looking_up_at_once_each_get_the_full_answer() -> None:
    index = NameIndex()
    held: dict[EntityId, Entity] = {}
    for number in range(400):
        entity = make_entity(id=_id(number + 1), name=f"Ada{number % 7} Lovelace{number % 5}")
        held[entity.id] = entity
        index.put(entity, revision=number)
    query = "Ada3 Lovelace2"
    expected = _expected(held, query, 30)
    units = query_name_units(query)
    with _mode("walk, as shipped"), ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda _: index.find(units, 30), range(200)))
    assert all(answer == expected for answer in answers)


def _postings(index: UnitPostings) -> dict[str, list[int]]:
    return {unit: list(rows) for unit, rows in index.postings.items()}


_ROW_WORDS = st.lists(st.sampled_from(["ana", "anana", "a", "nan", "b", "ab", "ba"]), max_size=4)


@given(rows=st.lists(_ROW_WORDS, min_size=2, max_size=30), start=st.integers(0, 4))
@example(rows=[[], []], start=0)  # rows without a word: no postings at all
@example(rows=[["anana", "anana"], ["ana"]], start=3)  # a unit repeated in a word, across words
@example(rows=[["ab"], [], ["ba", "ab"]], start=1)  # a row without a word between two with
def test_posting_a_batchs_words_in_bulk_posts_what_posting_each_row_does(
    rows: list[list[str]], start: int
) -> None:
    bulk, one_by_one = UnitPostings(), UnitPostings()
    for index in (bulk, one_by_one):
        index._add_rows(list(range(start + len(rows))))
        for row in range(start):  # earlier rows, so that postings are extended, not new
            index._post(row, set(word_units("ana")) | set(word_units(f"b{row}")))
    for row, words in enumerate(rows, start):
        one_by_one._post(row, set(chain.from_iterable(map(word_units, words))))
    words = [word for row_words in rows for word in row_words]
    bulk._post_words_in_bulk(words, [len(row_words) for row_words in rows], start)
    assert _postings(bulk) == _postings(one_by_one)
