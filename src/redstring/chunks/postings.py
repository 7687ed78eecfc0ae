"""BM25 postings as blobs of segments: what the SQLite and Postgres chunk stores share.

A tenant numbers its chunks by slot, never reusing one. A term's postings are
segments, each a blob of little-endian `int32` triples `(slot, tf, length)`:
the term's frequency in the chunk at `slot` and that chunk's length in terms.
A removal is the triple `(-slot - 1, 0, 0)`. A write appends one segment per
term it changes; a term holding `MAX_SEGMENTS` segments has them merged into
one. A query reads only its terms' segments. See ADR 0062.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, defaultdict
from itertools import chain
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.domain.bm25 import term_frequencies, tokenize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from numpy.typing import NDArray

#: One posting entry.
ENTRY: Final = np.dtype([("slot", "<i4"), ("tf", "<i4"), ("length", "<i4")])
#: How many segments may hold one term's postings before a write merges them.
MAX_SEGMENTS: Final = 8


class IndexedBatch:
    """The postings of a batch of chunks, grouped by term: one pass for the whole batch.

    Chunk `n` of `texts` takes slot `first_slot + n`. `terms[i]` holds the
    entries `entries[starts[i]:starts[i + 1]]`, in slot order; `slots`,
    `frequencies` and `lengths` are those entries' columns, contiguous.
    `chunk_lengths[n]` is chunk `n`'s length in terms.
    """

    def __init__(self, texts: Sequence[str], first_slot: int) -> None:
        tokens = [tokenize(text) for text in texts]
        count = len(texts)
        self.chunk_lengths = np.fromiter(map(len, tokens), dtype=np.int32, count=count)
        flat = list(chain.from_iterable(tokens))
        # Each token's id is where its term first occurs: `setdefault` keeps the
        # first position it was offered, and `map` calls it without a Python frame.
        first: dict[str, int] = {}
        term_ids = np.fromiter(
            map(first.setdefault, flat, itertools.count()), dtype=np.int64, count=len(flat)
        )
        chunks = np.repeat(np.arange(count, dtype=np.int64), self.chunk_lengths)
        width = max(count, 1)
        keys, frequencies = np.unique(term_ids * width + chunks, return_counts=True)
        of_term, of_chunk = np.divmod(keys, width)
        self.starts = np.zeros(1, dtype=np.intp)
        if len(keys):
            boundaries = np.flatnonzero(np.diff(of_term)) + 1
            self.starts = np.concatenate(([0], boundaries, [len(keys)])).astype(np.intp)
        self.terms = [flat[position] for position in of_term[self.starts[:-1]].tolist()]
        self.index = dict(zip(self.terms, range(len(self.terms)), strict=True))
        self.slots = (of_chunk + first_slot).astype(np.int32)
        self.frequencies = frequencies.astype(np.int32)
        self.lengths = self.chunk_lengths[of_chunk]
        self.entries = np.empty(len(keys), dtype=ENTRY)
        self.entries["slot"] = self.slots
        self.entries["tf"] = self.frequencies
        self.entries["length"] = self.lengths

    def span(self, term: str) -> tuple[int, int]:
        """Where `term`'s entries are, `(0, 0)` when the batch lacks it."""
        position = self.index.get(term)
        if position is None:
            return (0, 0)
        return int(self.starts[position]), int(self.starts[position + 1])


class PostingChanges:
    """What one write does to one tenant's index: the slots it removes, the batch it adds."""

    def __init__(self) -> None:
        self.removed: defaultdict[str, list[int]] = defaultdict(list)
        self.batch: IndexedBatch | None = None
        self.count = 0
        self.length = 0

    def add_batch(self, first_slot: int, texts: Sequence[str]) -> list[int]:
        """Index the chunks `texts` at slots from `first_slot`; their lengths in terms."""
        assert self.batch is None, "one batch per write"
        self.batch = IndexedBatch(texts, first_slot)
        self.count += len(texts)
        self.length += int(self.batch.chunk_lengths.sum())
        return self.batch.chunk_lengths.tolist()

    def remove(self, slot: int, text: str) -> None:
        """Take the chunk `text` at `slot` out of the index."""
        frequencies, length = term_frequencies(text)
        for term in frequencies:
            self.removed[term].append(slot)
        self.count -= 1
        self.length -= length

    def terms(self) -> list[str]:
        """Every term the write changes, sorted."""
        added = () if self.batch is None else self.batch.terms
        return sorted(self.removed.keys() | set(added))

    def frequency_change(self, term: str) -> int:
        """How the term's document frequency changes."""
        start, end = (0, 0) if self.batch is None else self.batch.span(term)
        return end - start - len(self.removed.get(term, ()))

    def segment(self, term: str) -> bytes:
        """The segment this write appends for `term`: its removals, then its additions."""
        start, end = (0, 0) if self.batch is None else self.batch.span(term)
        added = b"" if self.batch is None else self.batch.entries[start:end].tobytes()
        removed = self.removed.get(term)
        if not removed:
            return added
        tombstones = np.zeros(len(removed), dtype=ENTRY)
        tombstones["slot"] = -np.asarray(removed, dtype=np.int32) - 1
        return tombstones.tobytes() + added


def live_entries(segments: Iterable[bytes]) -> NDArray[np.void]:
    """The live entries of a term's segments, in the order written."""
    entries = np.frombuffer(b"".join(segments), dtype=ENTRY)
    slots = entries["slot"]
    removed = slots < 0
    if not removed.any():
        return entries
    dead = -slots[removed] - 1
    kept: NDArray[np.void] = entries[~removed & ~np.isin(slots, dead)]
    return kept


def merged(segments: Iterable[bytes]) -> bytes:
    """One segment holding what `segments` hold together."""
    return live_entries(segments).tobytes()


class SegmentPlan:
    """How one write changes the term rows and segments of one tenant.

    `gone`: terms no chunk holds any more (their rows and segments go);
    `kept`: `(term, df, segments)` rows to write; `appended`: `(term,
    segment)` blobs to add; `compacted`: terms whose stored segments must be
    read, merged with the write's own (`merged`) and replaced by one.
    `held` maps each stored term the write changes to its `(df, segments)`.
    """

    def __init__(self, changes: PostingChanges, held: dict[str, tuple[int, int]]) -> None:
        self.gone: list[str] = []
        self.kept: list[tuple[str, int, int]] = []
        self.appended: list[tuple[str, bytes]] = []
        self.compacted: list[str] = []
        removed, batch = changes.removed, changes.batch
        if batch is not None:
            starts = batch.starts.tolist()
            raw, size = batch.entries.tobytes(), ENTRY.itemsize
            for position, term in enumerate(batch.terms):
                start, end = starts[position], starts[position + 1]
                if term in removed:
                    self._plan(term, held, end - start - len(removed[term]), changes.segment)
                else:
                    self._plan(term, held, end - start, raw[start * size : end * size])
        for term, slots in removed.items():
            if batch is None or term not in batch.index:
                self._plan(term, held, -len(slots), changes.segment)

    def _plan(
        self,
        term: str,
        held: dict[str, tuple[int, int]],
        change: int,
        segment: bytes | Callable[[str], bytes],
    ) -> None:
        df, segments = held.get(term, (0, 0))
        df += change
        if df == 0:
            self.gone.append(term)
        elif segments + 1 > MAX_SEGMENTS:
            self.compacted.append(term)
            self.kept.append((term, df, 1))
        else:
            self.kept.append((term, df, segments + 1))
            self.appended.append((term, segment if isinstance(segment, bytes) else segment(term)))


#: How many bytes of decoded postings a durable store keeps between searches.
POSTING_CACHE_BYTES: Final = 64 * 1024 * 1024


class PostingCache:
    """Decoded live postings of recently searched terms, each trusted only at its version.

    A term's version is the number of the last write that changed it, read in
    the same snapshot as the search; a write never reuses a number, so a
    cached posting whose version matches is what the store holds. Least
    recently used terms are dropped past `capacity` bytes.
    """

    def __init__(self, capacity: int = POSTING_CACHE_BYTES) -> None:
        self._capacity = capacity
        self._size = 0
        self._held: OrderedDict[tuple[object, str], tuple[int, NDArray[np.void]]] = OrderedDict()

    def get(self, tenant: object, term: str, version: int) -> NDArray[np.void] | None:
        """The term's entries cached at `version`, or `None`."""
        held = self._held.get((tenant, term))
        if held is None or held[0] != version:
            return None
        self._held.move_to_end((tenant, term))
        return held[1]

    def put(self, tenant: object, term: str, version: int, entries: NDArray[np.void]) -> None:
        """Keep `entries` as the term's postings at `version`."""
        key = (tenant, term)
        old = self._held.pop(key, None)
        if old is not None:
            self._size -= old[1].nbytes
        if entries.nbytes > self._capacity:
            return
        self._held[key] = (version, entries)
        self._size += entries.nbytes
        while self._size > self._capacity:
            _, (_, dropped) = self._held.popitem(last=False)
            self._size -= dropped.nbytes

    def clear(self) -> None:
        """Forget everything."""
        self._held.clear()
        self._size = 0
