"""Entities' name units as an inverted index that numpy reads, for a store to hold.

`UnitPostings` is what every name index shares: each unit's postings (the
rows carrying it, an ascending `int32` array), each row's id as two 64-bit
halves, which rows are alive, and the lookup. A store's index subclasses it
with what its rows carry: the in-memory store's the stored entities, the
Postgres store's (`NameIndex`) the ids and the revision each was indexed
at, so that a store keeping its entities elsewhere (a server) answers a
name-candidate lookup at the in-memory store's cost. The store keeps its
index current itself (see ADR 0037).

A lookup reads the postings of the query's units, never a pass over the
tenant; ADR 0044 records how it finds the best rows without reading every
posting of a common unit.
"""

from __future__ import annotations

import threading
from array import array
from itertools import chain
from typing import TYPE_CHECKING, Final, NamedTuple, cast

import numpy as np

from redstring.domain.names import MIN_SHARED_UNITS, entity_name_units, word_units

if TYPE_CHECKING:
    from collections.abc import Iterable

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

_LOW_64: Final = (1 << 64) - 1
#: Below this many dead rows an index never compacts.
_COMPACT_AFTER: Final = 1024
#: Below this many rows (alive and dead) a lookup counts every posting it
#: reads with `numpy.bincount`: its pass over one count per row is then
#: cheaper than the pruned walk's Python calls.
_COUNT_ALL_BELOW: Final = 1 << 18
#: A unit's postings are read whole (rather than searched once per row
#: tested) when they are at most this many times the rows tested.
_READ_WHOLE_UP_TO: Final = 32
_NO_ROWS: Final = np.empty(0, dtype=np.int32)


class _Flags:
    """Two flags per row, all clear between lookups; the lock keeps two threads apart."""

    __slots__ = ("entered", "lock", "marked")

    def __init__(self) -> None:
        self.entered = np.zeros(0, dtype=np.bool_)
        self.marked = np.zeros(0, dtype=np.bool_)
        self.lock = threading.Lock()

    def grow(self, rows: int) -> None:
        if self.entered.size < rows:
            size = max(rows, 2 * self.entered.size)
            self.entered = np.zeros(size, dtype=np.bool_)
            self.marked = np.zeros(size, dtype=np.bool_)


class UnitPostings:
    """Rows' name units as postings, each row's id in two halves, and the lookup.

    Row numbers only grow: a subclass appends a row with `_add_row` and its
    units with `_post`, in row order, so every unit's postings stay
    ascending (the lookup relies on it); `_retire` marks a row dead.
    """

    __slots__ = ("_flags", "alive", "dead", "high", "low", "postings")

    def __init__(self) -> None:
        self._clear_postings()

    def _clear_postings(self) -> None:
        self.postings: dict[str, array[int]] = {}
        self.alive = bytearray()
        self.high: array[int] = array("Q")
        self.low: array[int] = array("Q")
        self.dead = 0
        self._flags = _Flags()

    def _add_rows(self, keys: list[int]) -> int:
        """Append one live row per id (as `id.int`); the first new row's number."""
        start = len(self.alive)
        self.alive.extend(bytes([1]) * len(keys))
        self.high.extend([key >> 64 for key in keys])
        self.low.extend([key & _LOW_64 for key in keys])
        return start

    def _post(self, row: int, units: Iterable[str]) -> None:
        """Add `row` (the newest) to each unit's postings."""
        postings = self.postings
        for unit in units:
            rows = postings.get(unit)
            if rows is None:
                rows = postings[unit] = array("i")
            rows.append(row)

    def _post_words_in_bulk(self, words: list[str], counts: list[int], start: int) -> None:
        """`_post` for rows `start, start + 1, ...`, each given as the words of its units.

        Row `start + i` holds the next `counts[i]` of `words`, and its units
        are those words' `word_units`, unioned. The same postings as posting
        each row's units in row order, ascending within each unit: a batch
        has far fewer words than units, so the units are read once per
        distinct word, and numpy spreads them over the rows, drops the
        repeats and groups them by unit, one `extend` per unit.
        """
        row_count = len(counts)
        distinct = dict.fromkeys(words)
        code_of = dict(zip(distinct, range(len(distinct)), strict=True))
        word_codes = np.fromiter(map(code_of.__getitem__, words), dtype=np.intp, count=len(words))
        units_of = list(map(word_units, distinct))
        unit_of_word = list(chain.from_iterable(units_of))
        units = dict.fromkeys(unit_of_word)
        unit_code = dict(zip(units, range(len(units)), strict=True))
        unit_codes = np.fromiter(
            map(unit_code.__getitem__, unit_of_word), dtype=np.int64, count=len(unit_of_word)
        )
        sizes = np.fromiter(map(len, units_of), dtype=np.intp, count=len(units_of))
        firsts = np.cumsum(sizes) - sizes
        # For each word of `words`, its units' codes: `unit_codes[firsts[w]:][:sizes[w]]`.
        spans = sizes[word_codes]
        ends = np.cumsum(spans)
        shift = np.repeat(firsts[word_codes] - (ends - spans), spans)
        codes = unit_codes[np.arange(int(spans.sum())) + shift]
        rows = np.repeat(np.repeat(np.arange(row_count, dtype=np.int64), counts), spans)
        # One key per posting, unit-major: sorted and unique, each unit's rows ascend.
        keys = np.sort(codes * row_count + rows)
        if keys.size:
            keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        grouped = (keys % row_count + start).astype(np.int32)
        bounds = np.cumsum(np.bincount(keys // row_count, minlength=len(units))).tolist()
        postings = self.postings
        begin = 0
        for unit, end in zip(units, bounds, strict=True):
            block = grouped[begin:end].tobytes()
            begin = end
            existing = postings.get(unit)
            if existing is None:
                existing = postings[unit] = array("i")
            existing.frombytes(block)

    def _retire(self, row: int) -> None:
        self.alive[row] = 0
        self.dead += 1

    def best_rows(self, query_units: Iterable[str], limit: int) -> list[int]:
        """The live rows sharing the most units with the query, at least `MIN_SHARED_UNITS`.

        Ranked by how many distinct units they share, ties by id (the
        UUID's integer order, which is `str(id)`'s), the best `limit`.
        """
        postings = self.postings
        held = [postings[unit] for unit in dict.fromkeys(query_units) if unit in postings]
        if len(held) < MIN_SHARED_UNITS or limit == 0:
            return []
        lists = [np.frombuffer(rows, dtype=np.int32) for rows in held]
        high = np.frombuffer(self.high, dtype=np.uint64)
        low = np.frombuffer(self.low, dtype=np.uint64)
        alive = np.frombuffer(self.alive, dtype=np.bool_) if self.dead else None
        if len(self.alive) < _COUNT_ALL_BELOW:
            return _count_all(_Lookup(lists, limit, high, low, alive))
        flags = self._flags
        if not flags.lock.acquire(blocking=False):
            # Another thread is using the flags: this lookup gets its own.
            flags = _Flags()
            flags.lock.acquire()
        try:
            flags.grow(len(self.alive))
            return _by_stages(_Lookup(lists, limit, high, low, alive), flags)
        finally:
            flags.lock.release()


class _Lookup(NamedTuple):
    """What a `best_rows` strategy reads: the query's postings and the rows' ids and liveness."""

    lists: list[np.ndarray]
    limit: int
    high: np.ndarray
    low: np.ndarray
    alive: np.ndarray | None


def _count_all(lookup: _Lookup) -> list[int]:
    """`best_rows` by counting every posting: `numpy.bincount` up to the highest row read."""
    lists, limit, high, low, alive = lookup
    counts = np.bincount(np.concatenate(lists))
    found = np.flatnonzero(counts >= MIN_SHARED_UNITS)
    if alive is not None:
        found = found[alive[found]]
    if found.size > limit:
        # Keep every row that could be among the best `limit`: all those
        # sharing at least the `limit`-th largest count, read from how many
        # rows share each count (a count is at most the query's units, so
        # this is cheaper than partitioning the rows).
        shared = counts[found]
        rows_sharing = np.bincount(shared).tolist()
        cut, reached = len(rows_sharing), 0
        while reached < limit:
            cut -= 1
            reached += rows_sharing[cut]
        found = found[shared >= cut]
    order = np.lexsort((low[found], high[found], -counts[found]))[:limit]
    ranked: list[int] = found[order].tolist()
    return ranked


def _by_stages(lookup: _Lookup, flags: _Flags) -> list[int]:
    """`best_rows` finding the rows sharing all `q` units, then `q - 1`, ... until `limit`.

    The query's postings are taken shortest first. A row sharing at least
    `q - s` units is in one of the `s + 1` shortest, so stage `s` lets in the
    rows of the `s + 1`-th shortest not yet in, and walks each row let in
    through the longer postings after the one it came from, in order. A row
    may miss as many of them as stages have passed since it came in: it
    stops at the miss beyond that (parked), and goes on from there in the
    next stage. The rows that reach the end in stage `s` therefore share
    exactly `q - s` units, so stages yield rows in the order of their count,
    and the walk stops at the stage where `limit` rows have come out. A
    common unit's postings are searched for the few rows still walking
    rather than read whole; a row is tested against one unit at most once.
    See ADR 0044.
    """
    lists, limit, high, low, alive = lookup
    lists.sort(key=len)
    last = len(lists)
    entered, marked = flags.entered, flags.marked
    came_in: list[np.ndarray] = []
    stages: list[np.ndarray] = []
    total = 0
    parked: dict[int, list[np.ndarray]] = {}
    try:
        for stage in range(last - MIN_SHARED_UNITS + 1):
            head = lists[stage]
            fresh = head[~entered[head]]
            if alive is not None:
                fresh = fresh[alive[fresh]]
            entered[fresh] = True
            came_in.append(fresh)
            waiting, parked = parked, {}
            if fresh.size:
                waiting.setdefault(stage + 1, []).append(fresh)
            done = waiting.pop(last, [])
            walking = _NO_ROWS
            for unit in range(stage + 1, last):
                group = waiting.pop(unit, None)
                if group is not None:
                    if walking.size:
                        group.append(walking)
                    testing = np.concatenate(group) if len(group) > 1 else group[0]
                elif walking.size:
                    testing = walking
                elif waiting:
                    continue
                else:
                    break
                walking, missed = _split(testing, lists[unit], marked)
                if missed.size:
                    parked.setdefault(unit + 1, []).append(missed)
            if walking.size:
                done.append(walking)
            if done:
                found = np.concatenate(done) if len(done) > 1 else done[0]
                stages.append(found)
                total += found.size
                if total >= limit:
                    break
        ranked: list[int] = []
        for found in stages:
            order = np.lexsort((low[found], high[found]))[: limit - len(ranked)]
            ranked.extend(found[order].tolist())
        return ranked
    finally:
        for rows in came_in:
            entered[rows] = False


def _split(
    testing: np.ndarray, rows: np.ndarray, marked: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of `testing` in the ascending `rows`, and those not in it."""
    if rows.size <= _READ_WHOLE_UP_TO * testing.size:
        marked[testing] = True
        kept = rows[marked[rows]]
        marked[kept] = False
        missed = testing[marked[testing]]
        marked[missed] = False
        return kept, missed
    at = np.searchsorted(rows, testing)
    at[at == rows.size] = 0  # past the end: any position, the comparison rejects it
    hit = rows[at] == testing
    return testing[hit], testing[~hit]


class NameIndex(UnitPostings):
    """Entities' name units, each entity under a row; ties in a count break by `str(id)`.

    Replacing an entity retires its old row and appends a new one; the rows
    are rebuilt once more are dead than alive. Each row also keeps the
    revision the entity was indexed at, which the store compares with the
    revision of the entity it holds parsed.
    """

    __slots__ = ("ids", "revisions", "row_of", "units")

    def __init__(self) -> None:
        super().__init__()
        self._clear()

    def _clear(self) -> None:
        self._clear_postings()
        self.ids: list[EntityId | None] = []
        self.units: list[frozenset[str]] = []
        self.revisions: array[int] = array("q")
        self.row_of: dict[EntityId, int] = {}

    def __len__(self) -> int:
        return len(self.row_of)

    def put(self, entity: Entity, revision: int) -> None:
        """Index `entity` at `revision` under a new row, retiring any row it held."""
        self.remove(entity.id)
        self._append(entity.id, entity_name_units(entity), revision)

    def _append(self, entity_id: EntityId, units: frozenset[str], revision: int) -> None:
        row = self._add_rows([entity_id.int])
        self.ids.append(entity_id)
        self.units.append(units)
        self.revisions.append(revision)
        self.row_of[entity_id] = row
        self._post(row, units)

    def remove(self, entity_id: EntityId) -> None:
        """Retire `entity_id`'s row, if it has one; compact when most rows are dead."""
        row = self.row_of.pop(entity_id, None)
        if row is None:
            return
        self._retire(row)
        self.ids[row] = None
        self.units[row] = frozenset()
        if self.dead > max(_COMPACT_AFTER, len(self.row_of)):
            self._compact()

    def _compact(self) -> None:
        live = [
            (entity_id, self.units[row], self.revisions[row])
            for row, entity_id in enumerate(self.ids)
            if entity_id is not None
        ]
        self._clear()
        for entity_id, units, revision in live:
            self._append(entity_id, units, revision)

    def revision_of(self, entity_id: EntityId) -> int:
        """The revision `entity_id` was indexed at; it must be indexed."""
        return self.revisions[self.row_of[entity_id]]

    def find(self, query_units: Iterable[str], limit: int) -> list[EntityId]:
        """The ids of the best `limit` candidates, by shared units then `str(id)`."""
        # A row found is alive, so its id is there.
        ids = cast("list[EntityId]", self.ids)
        return [ids[row] for row in self.best_rows(query_units, limit)]
