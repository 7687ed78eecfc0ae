"""BM25 postings as blobs of segments: what the SQLite and Postgres chunk stores share.

A tenant numbers its chunks by slot, never reusing one. A term's postings are
segments, each a blob of little-endian `int32` triples `(slot, tf, length)`:
the term's frequency in the chunk at `slot` and that chunk's length in terms.
A removal is the triple `(-slot - 1, 0, 0)`. A write appends one segment per
term it changes, at the next position of the term's list; once `FANOUT`
segments of one size tier are the newest, they are merged into one (tiered
merges), so an entry is rewritten about `log_FANOUT` of its term's size
times. A query reads only its terms' segments. See ADRs 0062 and 0084.
"""

from __future__ import annotations

import itertools
import json
import struct
from array import array
from collections import OrderedDict, defaultdict
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from redstring.chunks.scoring import rank_slots, term_weights
from redstring.domain.bm25 import idf, term_frequencies, tokenize
from redstring.domain.chunk import Chunk, Mention, check_mention_span, trusted_chunk
from redstring.domain.exceptions import MissingChunkError
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from uuid import UUID

    from numpy.typing import NDArray

    from redstring.domain.ids import TenantId

#: One posting entry.
ENTRY: Final = np.dtype([("slot", "<i4"), ("tf", "<i4"), ("length", "<i4")])
#: How many segments of one tier a term holds before a write merges them into one.
FANOUT: Final = 8
_FANOUT_BITS: Final = 3
#: One segment size as a term's row keeps it.
_SIZE: Final = struct.Struct("<i")
#: A term holding more segments than this has them all merged, whatever their sizes.
MAX_SEGMENTS: Final = 32


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


def merged(segments: Iterable[bytes], *, oldest: bool) -> bytes:
    """One segment holding what `segments` (consecutive, in write order) hold together.

    An addition and its removal both inside `segments` cancel. A removal
    whose addition is not among them is kept, since it may cancel an entry
    of an older segment, unless `oldest` says no older segment exists.
    """
    entries = np.frombuffer(b"".join(segments), dtype=ENTRY)
    slots = entries["slot"]
    removed = slots < 0
    if not removed.any():
        return entries.tobytes()
    dead = -slots[removed] - 1
    added = ~removed
    cancelled = added & np.isin(slots, dead)
    keep = added & ~cancelled
    if not oldest:
        # A removal stays unless its slot's addition is among `segments`.
        keep |= removed & ~np.isin(-slots - 1, slots[cancelled])
    return entries[keep].tobytes()


def tier(size: int) -> int:
    """A segment's tier: `floor(log_FANOUT(size))`, 0 for an empty one."""
    return max(size.bit_length() - 1, 0) // _FANOUT_BITS


def merge_start(sizes: Sequence[int]) -> int:
    """Where a write's merge starts among a term's segment sizes, the write's own last.

    `len(sizes) - 1` when the new segment is only appended. The newest
    segments are merged once `FANOUT` of them sit at one tier or below;
    the merged one may complete a run of the next tier, which merges too.
    A term holding more than `MAX_SEGMENTS` has them all merged.
    """
    last = len(sizes) - 1
    if last < FANOUT - 1:
        return last
    if last >= MAX_SEGMENTS:
        return 0
    start, total = last, sizes[last]
    while start >= FANOUT - 1:
        level = tier(total)
        run = start
        while run and tier(sizes[run - 1]) <= level:
            run -= 1
        if start - run + 1 < FANOUT:
            break
        total += sum(sizes[run:start])
        start = run
    return start


def unpack_sizes(blob: bytes) -> array[int]:
    """The segment sizes a term's row keeps."""
    sizes = array("i")
    sizes.frombytes(blob)
    return sizes


class SegmentPlan:
    """How one write changes the term rows and segments of one tenant.

    Built from the write's `changes` and `held`, each stored term the write
    changes with its `(df, sizes)` as its row keeps them. Then:

    - `gone`: terms no chunk holds any more (their rows and segments go);
    - `merges`: `(term, start, end)`: the term's stored segments at
      positions `start..end - 1` must be read, in order, and removed;
    - `finish(stored)`, given those segments' blobs by term, gives the term
      rows to write, `(term, df, sizes)`, and the segments to insert,
      `(term, position, blob)`.
    """

    def __init__(self, changes: PostingChanges, held: dict[str, tuple[int, bytes]]) -> None:
        self.gone: list[str] = []
        self.merges: list[tuple[str, int, int]] = []
        self._changes = changes
        self._rows: list[tuple[str, int, bytes]] = []
        self._segments: list[tuple[str, int, bytes]] = []
        self._merging: list[tuple[str, int, array[int], int, bytes]] = []
        removed, batch = changes.removed, changes.batch
        size = ENTRY.itemsize
        if batch is not None:
            starts = batch.starts.tolist()
            raw = batch.entries.tobytes()
            for position, term in enumerate(batch.terms):
                start, end = starts[position], starts[position + 1]
                if term in removed:
                    self._plan(term, held.get(term), end - start - len(removed[term]), None)
                else:
                    self._plan(term, held.get(term), end - start, raw[start * size : end * size])
        for term, slots in removed.items():
            if batch is None or term not in batch.index:
                self._plan(term, held.get(term), -len(slots), None)

    def _plan(
        self, term: str, held: tuple[int, bytes] | None, change: int, segment: bytes | None
    ) -> None:
        if held is None:
            # A term new to the tenant: one segment of the write's own additions.
            assert segment is not None
            self._rows.append((term, change, _SIZE.pack(change)))
            self._segments.append((term, 0, segment))
            return
        df = held[0] + change
        if df == 0:
            self.gone.append(term)
            return
        if segment is None:
            segment = self._changes.segment(term)
        stored = held[1]
        last = len(stored) // _SIZE.size
        size = len(segment) // ENTRY.itemsize
        if last < FANOUT - 1:
            # Too few segments for a merge: the new one is appended, sizes and all.
            self._rows.append((term, df, stored + _SIZE.pack(size)))
            self._segments.append((term, last, segment))
            return
        sizes = unpack_sizes(stored)
        sizes.append(size)
        start = merge_start(sizes)
        if start == last:
            self._rows.append((term, df, sizes.tobytes()))
            self._segments.append((term, last, segment))
        else:
            self.merges.append((term, start, last))
            self._merging.append((term, df, sizes[:start], start, segment))

    def finish(
        self, stored: dict[str, list[bytes]]
    ) -> tuple[list[tuple[str, int, bytes]], list[tuple[str, int, bytes]]]:
        """The term rows and segments to write, in key order, given the segments `merges` names.

        `stored` holds, by term, the blobs of the positions `merges` names, in order.
        """
        rows, segments = self._rows, self._segments
        for term, df, kept, start, segment in self._merging:
            blob = merged([*stored.get(term, ()), segment], oldest=not start)
            kept.append(len(blob) // ENTRY.itemsize)
            rows.append((term, df, kept.tobytes()))
            segments.append((term, start, blob))
        # In key order, so each statement walks its table's pages once (a term is in each once).
        rows.sort(key=itemgetter(0))
        segments.sort(key=itemgetter(0))
        return rows, segments


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

    def split(
        self, tenant: object, held: dict[str, tuple[int, int]]
    ) -> tuple[dict[str, NDArray[np.void]], list[str]]:
        """The entries cached of the terms `held` names (`(df, version)`), and the terms missing."""
        found: dict[str, NDArray[np.void]] = {}
        missing = []
        for term, (_, version) in held.items():
            entries = self.get(tenant, term, version)
            if entries is None:
                missing.append(term)
            else:
                found[term] = entries
        return found, missing

    def fill(
        self,
        tenant: object,
        held: dict[str, tuple[int, int]],
        found: dict[str, NDArray[np.void]],
        segments: dict[str, list[bytes]],
    ) -> dict[str, NDArray[np.void]]:
        """`found` with each term of `segments` (its blobs, in order) decoded, cached, added."""
        for term, blobs in segments.items():
            found[term] = entries = live_entries(blobs)
            self.put(tenant, term, held[term][1], entries)
        return found


def slot_scores(
    terms: Sequence[str],
    held: dict[str, tuple[int, int]],
    postings: dict[str, NDArray[np.void]],
    statistics: tuple[int, int, int],
) -> NDArray[np.float64]:
    """Each slot's BM25 score for `terms`, from the tenant's `(count, total length, next slot)`.

    `held` maps each term the tenant holds to its `(df, version)`, and
    `postings` to its live entries; terms are summed in `terms` order.
    """
    count, total, size = statistics
    mean_length = total / count
    scores = np.zeros(size, dtype=np.float64)
    for term in terms:
        if term in held:
            entries = postings[term]
            scores[entries["slot"]] += term_weights(
                idf(held[term][0], count), entries["tf"], entries["length"], mean_length
            )
    return scores


def only_slots(scores: NDArray[np.float64], allowed: Iterable[int]) -> NDArray[np.float64]:
    """`scores` with every slot but `allowed` set to zero."""
    index = np.fromiter(allowed, dtype=np.intp)
    kept = np.zeros_like(scores)
    kept[index] = scores[index]
    return kept


def ranked_rows(
    scores: NDArray[np.float64], slots: Sequence[int], ids: Sequence[UUID], k: int
) -> list[tuple[int, float]]:
    """The best `k` of the rows found at `slots` (chunk `ids`): `(row index, score)`, best first."""
    at = np.asarray(slots, dtype=np.intp)
    ints = [chunk_id.int for chunk_id in ids]
    high = np.asarray([value >> 64 for value in ints], dtype=np.uint64)
    low = np.asarray([value & 0xFFFF_FFFF_FFFF_FFFF for value in ints], dtype=np.uint64)
    order = rank_slots(scores[at], high, low, k).tolist()
    return [(index, float(scores[at[index]])) for index in order]


def mention_target(mention: Mention) -> tuple[int, UUID]:
    """A mention's target as a durable store keys it: `(0, entity id)` or `(1, relationship id)`."""
    if mention.entity_id is not None:
        return 0, mention.entity_id
    assert mention.relationship_id is not None
    return 1, mention.relationship_id


def stored_mention(
    tenant_id: TenantId, chunk_id: UUID, kind: int, target: UUID, start: int, end: int
) -> Mention:
    """The mention a durable store's row holds; a span of `-1` is none."""
    return Mention.model_construct(
        tenant_id=tenant_id,
        chunk_id=ChunkId(chunk_id),
        entity_id=EntityId(target) if kind == 0 else None,
        relationship_id=RelationshipId(target) if kind == 1 else None,
        start=None if start < 0 else start,
        end=None if end < 0 else end,
    )


def stored_chunk(tenant_id: TenantId, chunk_id: UUID, row: Sequence[Any]) -> Chunk:
    """The chunk a durable store's row holds, its columns after the id as `_COLUMNS` lists."""
    source_id, ordinal, start, end, text, metadata = row
    return trusted_chunk(
        ChunkId(chunk_id),
        tenant_id,
        SourceId(source_id),
        ordinal,
        text,
        start,
        end,
        json.loads(metadata),
    )


def check_mentions_held(mentions: Sequence[Mention], held: dict[tuple[UUID, UUID], Chunk]) -> None:
    """Refuse the first mention whose chunk `held` lacks (by tenant and id), or whose span is bad.

    Raises:
        MissingChunkError: a mention's chunk is not held in its tenant.
        ValueError: a mention's span runs past its chunk's text.
    """
    for index, mention in enumerate(mentions):
        chunk = held.get((mention.tenant_id, mention.chunk_id))
        if chunk is None:
            raise MissingChunkError(chunk_id=mention.chunk_id, tenant_id=mention.tenant_id)
        check_mention_span(mention, chunk, argument=f"mentions[{index}]")


def chunk_columns(chunk: Chunk, slot: int, length: int) -> tuple[object, ...]:
    """A chunk row's columns between its id and its metadata, as both durable stores lay them out.

    Its slot, source, ordinal, offsets, length in terms and text.
    """
    return (slot, chunk.source_id, chunk.ordinal, chunk.start, chunk.end, length, chunk.text)
