"""Transitive closure."""

from __future__ import annotations

import pytest

from redstring.consolidation.clustering import DisjointSets, closure


def test_closure_joins_chains_and_leaves_singletons_out() -> None:
    assert closure(6, [(4, 5), (1, 0), (2, 1)]) == [[0, 1, 2], [4, 5]]


def test_union_reports_whether_sets_were_apart_and_roots_are_smallest() -> None:
    sets = DisjointSets(3)
    assert sets.union(2, 1)
    assert not sets.union(1, 2)
    assert sets.find(2) == 1


def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError, match="size"):
        DisjointSets(-1)


def test_find_compresses_a_chain_to_its_root() -> None:
    sets = DisjointSets(3)
    sets.union(1, 2)
    sets.union(0, 1)
    assert [sets.find(item) for item in (2, 2, 1)] == [0, 0, 0]
