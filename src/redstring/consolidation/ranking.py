"""Ranking the candidates of many profiles at once: the blocks they read, counted with numpy.

`candidate_pairs` ranks a profile's candidates by counting, over the blocks
of its rarest keys, how many each other member shares (ADR 0115). Most
profiles count in a pass's whole rounds, and one profile at a time costs
numpy's per-call overhead a dozen times over; here every counting
profile's blocks are read, expanded and counted in a few array operations,
with exactly the ranking one at a time gives.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.consolidation.forking import check_workers

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

#: At most this many block members are expanded at once (int64 arrays a few times over).
_CHUNK: Final = 1_000_000


def rank_together(
    keys_of: Sequence[set[str]],
    counting: Sequence[int],
    *,
    limit: int,
    max_block: int,
    budget: int,
    chunk: int = _CHUNK,
    threads: int = 1,
) -> list[list[int]]:
    """The candidates of each profile at `counting`, best first, as `rank_each` gives them.

    A profile reads its keys rarest first (ties by the key), each block
    whole, until a block holds more than `max_block` members or would take
    what it read past `budget` (the first block always counts unless it is
    too large); its candidates are the `limit` others most often among what
    it read, ties by the lowest position. With `threads` above one, that
    many threads rank chunks of about `chunk` block members at once, to the
    same rankings.

    Raises:
        ValueError: a setting is below 1, a position of `counting` is not
            one of `keys_of`'s, or `threads` is not an int from 1 to `MAX_WORKERS`.
    """
    check_ranking(counting, len(keys_of), limit=limit, max_block=max_block, budget=budget)
    check_workers(threads, argument="threads")
    flat = [key for keys in keys_of for key in keys]
    # Keys numbered in text order, so a key's number breaks ties of size as its text does.
    number = {key: n for n, key in enumerate(sorted(set(flat)))}
    key = np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat))
    holder = np.repeat(
        np.arange(len(keys_of), dtype=np.int64),
        np.fromiter(map(len, keys_of), dtype=np.int64, count=len(keys_of)),
    )
    size = np.bincount(key, minlength=len(number))

    # Each counting profile's keys in the order it reads them, and which it reads.
    mine = np.zeros(len(keys_of), dtype=bool)
    mine[np.asarray(counting, dtype=np.int64)] = True
    held = mine[holder]
    reader, read_key = holder[held], key[held]
    order = np.lexsort((read_key, size[read_key], reader))
    reader, read_key = reader[order], read_key[order]
    sizes = size[read_key]
    first = _group_starts(reader)
    before = _exclusive_in_groups(sizes, first)
    stops = (sizes > max_block) | ((before > 0) & (before + sizes > budget))
    reads = (_exclusive_in_groups(stops.astype(np.int64), first) == 0) & ~stops
    reader, read_key = reader[reads], read_key[reads]

    # The members of every block, block after block.
    members = holder[np.argsort(key, kind="stable")]
    offsets = np.concatenate(([0], np.cumsum(size)))
    ranked: dict[int, list[int]] = {}
    lengths = size[read_key]
    ends = np.cumsum(lengths)
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < len(reader):
        end = _chunk_end(reader, ends, start, chunk)
        bounds.append((start, end))
        start = end

    def rank(bound: tuple[int, int]) -> None:
        start, end = bound  # a chunk never splits a reader: each writes its own entries
        _rank_chunk(
            reader[start:end], read_key[start:end], lengths[start:end],
            members, offsets, limit, len(keys_of), ranked,
        )  # fmt: skip

    if threads > 1 and len(bounds) > 1:
        # numpy sorts and counts without the interpreter lock, so chunks rank side by side.
        with ThreadPoolExecutor(min(threads, len(bounds))) as pool:
            list(pool.map(rank, bounds))
    else:
        for bound in bounds:
            rank(bound)
    return [ranked.get(position, []) for position in counting]


def check_ranking(
    counting: Sequence[int], count: int, *, limit: int, max_block: int, budget: int
) -> None:
    """Refuse settings below 1 and positions outside `0..count - 1`, naming the value.

    Raises:
        ValueError: as above.
    """
    for name, value in (("budget", budget), ("limit", limit), ("max_block", max_block)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    for position in counting:
        if not 0 <= position < count:
            raise ValueError(f"position {position} is not one of the {count} profiles'")


def _group_starts(grouped: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each element of a sorted array, the index where its run of equal values starts."""
    if len(grouped) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(grouped)) + 1))
    return np.repeat(starts, np.diff(np.concatenate((starts, [len(grouped)]))))


def _exclusive_in_groups(
    values: npt.NDArray[np.int64], first: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """The sum of the values before each one within its group (groups start at `first`)."""
    total = np.cumsum(values)
    return total - values - np.where(first > 0, total[first - 1], 0)


def _chunk_end(
    reader: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], start: int, chunk: int
) -> int:
    """Where a chunk from `start` ends: about `chunk` members, never splitting a reader.

    `ends` is the running total of the members each read block holds.
    """
    done = int(ends[start - 1]) if start else 0
    end = max(int(np.searchsorted(ends, done + chunk, side="right")), start + 1)
    if end >= len(reader):
        return len(reader)
    return int(np.searchsorted(reader, reader[end - 1], side="right"))


def _rank_chunk(
    reader: npt.NDArray[np.int64],
    read_key: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    members: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    limit: int,
    count: int,
    ranked: dict[int, list[int]],
) -> None:
    # Every member of every block read, beside the profile that read it.
    total = int(lengths.sum())
    shift = np.repeat(offsets[read_key] - (np.cumsum(lengths) - lengths), lengths)
    other = members[np.arange(total, dtype=np.int64) + shift]
    looking = np.repeat(reader, lengths)
    code = looking * count + other
    code = code[looking != other]
    # Stable (timsort): each reader's blocks are sorted runs, merged in a few passes.
    code.sort(kind="stable")
    if len(code) == 0:
        return
    starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1])))
    pair = code[starts]
    shared = np.diff(np.concatenate((starts, [len(code)])))
    looking, other = np.divmod(pair, count)
    # Most shared first, then the lowest position: `pair` is sorted by both positions.
    top = int(shared.max()) + 1
    order = np.argsort(looking * top + (top - shared), kind="stable")
    looking, other = looking[order], other[order]
    first = _group_starts(looking)
    keep = np.arange(len(looking)) - first < limit
    looking, other = looking[keep], other[keep]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(looking)) + 1)).tolist()
    found = other.tolist()
    for at, begin, end in zip(
        looking[starts].tolist(),
        starts,
        [*starts[1:], len(found)],
        strict=True,
    ):
        ranked[at] = found[begin:end]
