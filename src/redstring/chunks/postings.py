"""BM25 postings as blobs of segments: what the SQLite and Postgres chunk stores share.

A tenant numbers its chunks by slot, never reusing one. A term's postings are
segments, each a blob of little-endian `int32` triples `(slot, tf, length)`:
the term's frequency in the chunk at `slot` and that chunk's length in terms.
A removal is the triple `(-slot - 1, 0, 0)`. A write appends one segment per
term it changes; a term holding `MAX_SEGMENTS` segments has them merged into
one. A query reads only its terms' segments. See ADR 0062.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.domain.bm25 import term_frequencies

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import NDArray

#: One posting entry.
ENTRY: Final = np.dtype([("slot", "<i4"), ("tf", "<i4"), ("length", "<i4")])
#: How many segments may hold one term's postings before a write merges them.
MAX_SEGMENTS: Final = 8


class PostingChanges:
    """What one write does to one tenant's index: entries added, slots removed, per term."""

    def __init__(self) -> None:
        self.added: defaultdict[str, list[tuple[int, int, int]]] = defaultdict(list)
        self.removed: defaultdict[str, list[int]] = defaultdict(list)
        self.count = 0
        self.length = 0

    def add(self, slot: int, text: str) -> int:
        """Index the chunk `text` at `slot`; return its length in terms."""
        frequencies, length = term_frequencies(text)
        for term, frequency in frequencies.items():
            self.added[term].append((slot, frequency, length))
        self.count += 1
        self.length += length
        return length

    def remove(self, slot: int, text: str) -> None:
        """Take the chunk `text` at `slot` out of the index."""
        frequencies, length = term_frequencies(text)
        for term in frequencies:
            self.removed[term].append(slot)
        self.count -= 1
        self.length -= length

    def terms(self) -> list[str]:
        """Every term the write changes, sorted."""
        return sorted(self.added.keys() | self.removed.keys())

    def frequency_change(self, term: str) -> int:
        """How the term's document frequency changes."""
        return len(self.added.get(term, ())) - len(self.removed.get(term, ()))

    def segment(self, term: str) -> bytes:
        """The segment this write appends for `term`: its removals, then its additions."""
        removed = self.removed.get(term, ())
        added = self.added.get(term, ())
        entries = np.empty(len(removed) + len(added), dtype=ENTRY)
        if removed:
            entries["slot"][: len(removed)] = -np.asarray(removed, dtype=np.int32) - 1
            entries["tf"][: len(removed)] = 0
            entries["length"][: len(removed)] = 0
        if added:
            entries[len(removed) :] = np.asarray(added, dtype=np.int32).view(ENTRY).reshape(-1)
        return entries.tobytes()


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
