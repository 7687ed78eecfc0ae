"""Which pairs are worth scoring: an inverted index over the profiles of one pass.

Pure. Each profile is keyed by the soundex and the four-letter prefix of
every token of every name it has (initials excepted), by the same of its
first and last tokens each with the other's initial (so "J. Doe" ranks
"John Doe" above every other Doe), and by each of its property values.
Keys never cross entity types, and there is no type key (it would make
every same-type pair a candidate). Each profile keeps the `limit` others
it shares most keys with.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, Final

import jellyfish
import numpy as np

from redstring.consolidation.forking import check_workers
from redstring.consolidation.ranking import check_ranking, rank_together

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    import numpy.typing as npt

    from redstring.consolidation.features import Profile
    from redstring.consolidation.memo import PassMemo
    from redstring.domain.ids import EntityId

#: How many candidates each profile keeps, best first.
CANDIDATE_LIMIT: Final = 12

#: A key held by more profiles than this says too little to block on.
MAX_BLOCK: Final = 1_000

#: How many block members a profile reads at most, its rarest keys first.
BLOCK_BUDGET: Final = 300

_TOKEN_PREFIX: Final = 4

#: Fewer than one profile in this many counting its blocks gathers only the blocks it reads.
_FEW_COUNT: Final = 8

#: How many tokens' keys `_token_keys` remembers: names share their tokens across a pass.
_TOKEN_MEMO: Final = 1 << 16


@lru_cache(maxsize=_TOKEN_MEMO)
def _token_keys(token: str) -> tuple[str, ...]:
    """A token's prefix key and, when it has Latin letters, its soundex key (remembered)."""
    prefix = f"p:{token[:_TOKEN_PREFIX]}"
    letters = "".join(
        c for c in unicodedata.normalize("NFKD", token) if c.isascii() and c.isalpha()
    )
    return (prefix, f"s:{jellyfish.soundex(letters)}") if letters else (prefix,)


def profile_keys(profile: Profile) -> set[str]:
    """Every key `profile` is indexed under, each prefixed by its entity type."""
    keys: set[str] = set()
    for form in profile.names:
        for token in form.tokens:
            if len(token) > 1:
                keys.update(_token_keys(token))
        if len(form.tokens) > 1:
            first, last = form.tokens[0], form.tokens[-1]
            for initial, other in ((first, last), (last, first)):
                if len(other) > 1:
                    keys.update(f"i:{initial[0]}|{key}" for key in _token_keys(other))
    for key, value in profile.properties.items():
        keys.add(f"v:{key}={value}")
    return {f"{profile.entity_type}\x1f{key}" for key in keys}


def _blocks(keys_of: Sequence[set[str]], counting: Sequence[int]) -> dict[str, list[int]]:
    """The members of every block the profiles at `counting` are keyed under, by position.

    When few profiles count (a later round, where most read their ranking
    from the memo), only the blocks of their keys are gathered.
    """
    blocks: defaultdict[str, list[int]] = defaultdict(list)
    if len(counting) * _FEW_COUNT < len(keys_of):
        wanted = {key for position in counting for key in keys_of[position]}
        for position, keys in enumerate(keys_of):
            for key in keys & wanted:
                blocks[key].append(position)
    elif counting:
        for position, keys in enumerate(keys_of):
            for key in keys:
                blocks[key].append(position)
    return blocks


def rank_each(
    keys_of: Sequence[set[str]],
    counting: Sequence[int],
    *,
    limit: int = CANDIDATE_LIMIT,
    max_block: int = MAX_BLOCK,
    budget: int = BLOCK_BUDGET,
) -> list[list[int]]:
    """The candidates of each profile at `counting`, best first, one profile at a time.

    What `rank_together` gives, for a few profiles: only the blocks they
    read are gathered.

    Raises:
        ValueError: as `check_ranking` says.
    """
    check_ranking(counting, len(keys_of), limit=limit, max_block=max_block, budget=budget)
    blocks = _blocks(keys_of, counting)
    arrays: dict[str, npt.NDArray[np.int64]] = {}
    rankings: list[list[int]] = []
    for position in counting:
        read: list[npt.NDArray[np.int64]] = []
        gathered = 0
        for key in sorted(keys_of[position], key=lambda key: (len(blocks[key]), key)):
            members = blocks[key]
            size = len(members)
            if size > max_block or (gathered and gathered + size > budget):
                break
            block = arrays.get(key)
            if block is None:
                block = arrays[key] = np.array(members, dtype=np.int64)
            read.append(block)
            gathered += size
        ranked: list[int] = []
        if read:
            others, shared = np.unique(np.concatenate(read), return_counts=True)
            # Every block read is one of its own keys', so it is among `others`: never
            # its own candidate.
            shared[np.searchsorted(others, position)] = 0
            # Most keys shared first, then the lowest position (the sort is stable).
            best = np.argsort(-shared, kind="stable")[:limit]
            ranked = others[best[shared[best] > 0]].tolist()
        rankings.append(ranked)
    return rankings


def candidate_pairs(
    profiles: Sequence[Profile],
    *,
    focus: Collection[EntityId] | None = None,
    limit: int = CANDIDATE_LIMIT,
    max_block: int = MAX_BLOCK,
    budget: int = BLOCK_BUDGET,
    memo: PassMemo | None = None,
    threads: int = 1,
) -> list[tuple[int, int]]:
    """The pairs of positions in `profiles` worth scoring, each once, `(i, j)` with `i < j`.

    A profile's candidates are the others it shares the most keys with, at
    most `limit`, ties broken by position, counted over its rarest keys
    first until their blocks hold `budget` members (the first key always
    counts unless it holds more than `max_block`), so a profile reads a
    bounded number of others however large the pass; a pair is kept when either side
    keeps the other. With `focus`, only profiles whose id is in it look for
    candidates (against every profile). `memo` keeps each profile's keys
    and candidates for the pass's next round, where a profile none of whose
    blocks changed reads its candidates there instead of counting again. Sorted, so the result is
    deterministic for a given order of `profiles`. `threads` above one ranks
    many profiles' candidates on that many threads, to the same pairs.

    Raises:
        ValueError: `limit`, `max_block` or `budget` is below 1, or `threads`
            is not an int from 1 to `MAX_WORKERS`.
    """
    check_ranking((), len(profiles), limit=limit, max_block=max_block, budget=budget)
    check_workers(threads, argument="threads")
    keys_of = [
        profile_keys(profile) if memo is None else memo.keys(profile, profile_keys)
        for profile in profiles
    ]
    if memo is not None:
        memo.advance(profiles)
    settings = (limit, max_block, budget)
    at = {id(profile): position for position, profile in enumerate(profiles)}
    # Each profile beside each of its candidates, position for position.
    lookers: list[int] = []
    found: list[int] = []
    counting: list[int] = []
    for position, profile in enumerate(profiles):
        if focus is not None and profile.entity_id not in focus:
            continue
        kept = None if memo is None else memo.ranked(profile, settings)
        if kept is None:
            counting.append(position)
        elif kept:
            found.extend([at[id(other)] for other in kept])
            lookers.extend(repeat(position, len(kept)))
    options = {"limit": limit, "max_block": max_block, "budget": budget}
    if len(counting) * _FEW_COUNT < len(keys_of):
        rankings = rank_each(keys_of, counting, **options)
    else:
        rankings = rank_together(keys_of, counting, **options, threads=threads)
    at_position = profiles.__getitem__
    for position, ranked in zip(counting, rankings, strict=True):
        found.extend(ranked)
        lookers.extend(repeat(position, len(ranked)))
        if memo is not None:
            memo.keep_ranked(profiles[position], settings, tuple(map(at_position, ranked)))
    return _distinct_pairs(lookers, found, len(profiles))


def _distinct_pairs(lookers: list[int], found: list[int], count: int) -> list[tuple[int, int]]:
    """Each pair of `lookers[n]` and `found[n]` once, as `(i, j)` with `i < j`, sorted."""
    if not lookers:
        return []
    one = np.array(lookers, dtype=np.int64)
    other = np.array(found, dtype=np.int64)
    # A pair is kept as the one int i * count + j: one sort, then back to two positions.
    codes = np.minimum(one, other) * count + np.maximum(one, other)
    codes.sort()
    distinct = codes[np.concatenate(([True], codes[1:] != codes[:-1]))]
    low, high = np.divmod(distinct, count)
    return list(zip(low.tolist(), high.tolist(), strict=True))
