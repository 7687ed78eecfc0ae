"""Ranking many profiles' candidates at once gives what ranking them one at a time gives."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from redstring.consolidation.candidates import candidate_pairs, rank_each
from redstring.consolidation.ranking import rank_together

_KEYS = st.sets(st.sampled_from("abcdefgh"), max_size=5)


@settings(max_examples=300, deadline=None)
@given(
    keys_of=st.lists(_KEYS, max_size=14),
    pick=st.sets(st.integers(0, 13)),
    limit=st.integers(1, 4),
    max_block=st.integers(1, 8),
    budget=st.integers(1, 12),
    chunk=st.integers(1, 20),
    threads=st.integers(1, 3),
)
@example(
    # Ties everywhere: equal block sizes (keys break them by text), equal
    # counts (the lowest position wins), a first block past the budget.
    keys_of=[{"a", "b"}, {"a", "b"}, {"a", "c"}, {"b", "c"}, {"c"}],
    pick={0, 1, 2, 3, 4},
    limit=2,
    max_block=8,
    budget=1,
    chunk=1,
    threads=2,  # one-member chunks, ranked side by side
)
@example(
    keys_of=[set(), {"a"}, {"a"}], pick={0, 1}, limit=1, max_block=1, budget=1, chunk=3, threads=1
)
def test_ranking_together_equals_ranking_one_at_a_time(
    keys_of: list[set[str]],
    pick: set[int],
    limit: int,
    max_block: int,
    budget: int,
    chunk: int,
    threads: int,
) -> None:
    counting = sorted(n for n in pick if n < len(keys_of))
    options = {"limit": limit, "max_block": max_block, "budget": budget}
    together = rank_together(keys_of, counting, chunk=chunk, threads=threads, **options)
    assert together == rank_each(keys_of, counting, **options)


@pytest.mark.parametrize("rank", [rank_together, rank_each])
def test_a_bad_setting_or_position_is_refused_by_name(rank: Any) -> None:
    keys_of = [{"a"}, {"a"}]
    options = {"limit": 1, "max_block": 2, "budget": 2}
    with pytest.raises(ValueError, match="position 2 is not one of the 2"):
        rank(keys_of, [0, 2], **options)
    with pytest.raises(ValueError, match="position -1"):
        rank(keys_of, [-1], **options)
    with pytest.raises(ValueError, match="max_block must be at least 1, got 0"):
        rank(keys_of, [0], **{**options, "max_block": 0})
    assert rank(keys_of, [1, 0], **options) == [[0], [1]]


@pytest.mark.parametrize("threads", [0, -2, 33, True, "2", 1.5])
def test_threads_must_be_a_count(threads: object) -> None:
    with pytest.raises(ValueError, match="threads must be an int from 1 to 32"):
        rank_together([{"a"}, {"a"}], [0], limit=1, max_block=2, budget=2, threads=threads)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads must be an int from 1 to 32"):
        candidate_pairs([], threads=threads)  # type: ignore[arg-type]
