"""Tiered merges of a tenant's posting segments: where a merge starts, and what it keeps."""

from __future__ import annotations

import numpy as np
import pytest

from redstring.chunks.postings import (
    ENTRY,
    FANOUT,
    MAX_SEGMENTS,
    SEGMENT_LIST,
    PostingCache,
    PostingChanges,
    WritePlan,
    live_entries,
    merge_start,
    merged,
    tier,
)
from redstring.domain.bm25 import tokenize

F = FANOUT  # 16


@pytest.mark.parametrize(
    ("size", "expected"),
    [(0, 0), (1, 0), (F - 1, 0), (F, 1), (F * F - 1, 1), (F * F, 2), (F**3, 3)],
)
def test_a_segment_of_n_entries_sits_at_tier_floor_log_fanout_n(size: int, expected: int) -> None:
    assert tier(size) == expected


@pytest.mark.parametrize(
    ("sizes", "start"),
    [
        ([5], 0),
        ([1] * (F - 1), F - 2),  # fifteen segments of tier 0: the new one is only appended
        ([1] * F, 0),  # sixteen: merged into one
        ([F * F] + [1] * F, 1),  # the newest sixteen merge; the large one is left alone
        ([F * F] * (F - 1) + [1] * F, F - 1),  # merged into F entries, below the others' tier
        ([F] * (F - 1) + [1] * F, 0),  # merged into F entries, which completes a run of tier 1
        ([1000, 9, 1], 2),
        ([10_000] * (MAX_SEGMENTS + 1), 0),  # past the cap everything merges
    ],
)
def test_a_merge_starts_where_sixteen_newest_segments_share_a_tier(
    sizes: list[int], start: int
) -> None:
    assert merge_start(sizes) == start


def entries(*triples: tuple[int, int, int]) -> bytes:
    return np.array(list(triples), dtype=ENTRY).tobytes()


def test_a_partial_merge_keeps_removals_of_older_entries_and_cancels_its_own() -> None:
    newer = [entries((5, 1, 3)), entries((-6, 0, 0), (-3, 0, 0))]  # adds 5, removes 5 and 2

    partial = np.frombuffer(merged(newer, oldest=False), dtype=ENTRY).tolist()
    whole = np.frombuffer(merged(newer, oldest=True), dtype=ENTRY).tolist()

    assert partial == [(-3, 0, 0)]
    assert whole == []


def test_the_posting_cache_replaces_a_terms_entries_and_drops_the_least_recent_past_capacity() -> (
    None
):
    def entries(count: int) -> np.ndarray:
        return np.zeros(count, dtype=ENTRY)

    size = entries(1).nbytes
    cache = PostingCache(capacity=3 * size)
    cache.put("t", "a", 1, entries(1))
    cache.put("t", "a", 2, entries(2))  # replaces version 1, and its size with it
    assert cache.get("t", "a", 1) is None
    held = cache.get("t", "a", 2)
    assert held is not None
    assert len(held) == 2
    cache.put("t", "b", 1, entries(1))
    assert cache.get("t", "a", 2) is not None  # "a" is now the most recent
    cache.put("t", "c", 1, entries(1))  # 4 entries held: "b", the least recent, goes
    assert cache.get("t", "b", 1) is None
    assert cache.get("t", "a", 2) is not None
    assert cache.get("t", "c", 1) is not None
    cache.put("t", "d", 1, entries(4))  # larger than the whole cache: never held
    assert cache.get("t", "d", 1) is None


def test_a_write_without_removals_appends_only_its_entries_and_lists_no_empty_segment() -> None:
    changes = PostingChanges()
    changes.add_batch(7, ["apple banana apple", "banana"])
    segment = np.frombuffer(changes.segment(tokenize("apple")[0]), dtype=ENTRY).tolist()
    assert segment == [(7, 2, 3)]  # slot 7: "apple" twice, in a chunk of three terms
    both = [changes.segment(tokenize("banana")[0])]
    assert live_entries(both).tolist() == [(7, 1, 3), (8, 1, 1)]
    plan = WritePlan(changes, b"", number=1)
    assert plan.listing(0) == b""  # a merge that cancelled every entry lists no segment
    assert len(plan.listing(3)) == SEGMENT_LIST.itemsize


def test_a_merge_of_segments_without_removals_keeps_every_entry_in_order() -> None:
    held = [entries((1, 1, 2), (4, 2, 5)), entries((9, 1, 1))]
    assert np.frombuffer(merged(held, oldest=False), dtype=ENTRY).tolist() == [
        (1, 1, 2),
        (4, 2, 5),
        (9, 1, 1),
    ]
