"""The name index a server-backed store holds: counts, ties, removal and compaction."""

from __future__ import annotations

from uuid import UUID

from redstring.domain.ids import EntityId
from redstring.graph.name_index import NameIndex
from redstring.testing.factories import make_entity


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
