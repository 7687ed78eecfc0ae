"""BM25 postings as segments of blobs: what the SQLite and Postgres chunk stores share.

A tenant numbers its chunks by slot, never reusing one. A posting entry is a
little-endian `int32` triple `(slot, tf, length)`: a term's frequency in the
chunk at `slot` and that chunk's length in terms; a removal is the triple
`(-slot - 1, 0, 0)`. A write makes one segment of the tenant's postings: a
row per term it changes, `(term, df change, entries)`, keyed by `(segment,
term)` so the rows are one new run of keys. Once `FANOUT` segments of one
size tier are the newest, they are merged into one (tiered merges, a
log-structured merge over the whole tenant), so an entry is rewritten about
`log_FANOUT` of the tenant's size times. A query reads its terms' rows of
each segment. See ADRs 0062, 0084 and 0096.
"""

from __future__ import annotations

import itertools
import json
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
#: How many segments of one tier a tenant holds before a write merges them into one.
FANOUT: Final = 16
_FANOUT_BITS: Final = 4
#: A tenant holding more segments than this has them all merged, whatever their sizes.
MAX_SEGMENTS: Final = 64


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
    """Where a write's merge starts among a tenant's segment sizes, the write's own last.

    `len(sizes) - 1` when the new segment is only appended. The newest
    segments are merged once `FANOUT` of them sit at one tier or below;
    the merged one may complete a run of the next tier, which merges too.
    A tenant holding more than `MAX_SEGMENTS` has them all merged.
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


#: A tenant's segment list as its row keeps it: `(segment id, entry count)` pairs, oldest first.
SEGMENT_LIST: Final = np.dtype([("id", "<i8"), ("size", "<i8")])
#: One segment row: its term, the change it makes to the term's document frequency, its entries.
type SegmentRow = tuple[str, int, bytes]


def segment_ids(blob: bytes) -> list[int]:
    """The ids of the segments a tenant's row lists, oldest first."""
    listed: list[int] = np.frombuffer(blob, dtype=SEGMENT_LIST)["id"].tolist()
    return listed


def held_terms(rows: Iterable[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """Each term's `(df, version)` from its segment rows `(term, segment id, df change)`.

    The version is the newest segment holding the term. A merge replaces a
    tenant's newest segments by one with a new id, so the segments older
    than a term's newest are the same whenever that one exists, and what
    the term holds is a function of it. A term whose changes sum to zero is
    held by no chunk and left out.
    """
    held: dict[str, tuple[int, int]] = {}
    for term, segment, change in rows:
        df, version = held.get(term, (0, -1))
        held[term] = (df + change, max(version, segment))
    return {term: value for term, value in held.items() if value[0]}


def one_segment(
    number: int, frequency: dict[str, int], blobs: dict[str, list[bytes]]
) -> tuple[list[SegmentRow], bytes]:
    """A tenant's postings of schema version 2 as one segment `number`: rows, segment list.

    Version 2 kept each term's document frequency in `frequency` and its
    segments (`blobs`, oldest first) apart; the segment holds each term's
    live entries with its frequency as its change (ADR 0096).
    """
    rows = [(term, frequency[term], live_entries(held).tobytes()) for term, held in blobs.items()]
    rows.sort(key=itemgetter(0))
    size = sum(len(blob) for _, _, blob in rows) // ENTRY.itemsize
    listed = np.array([(number, size)] if rows else [], dtype=SEGMENT_LIST)
    return rows, listed.tobytes()


class WritePlan:
    """How one write changes one tenant's segments: a segment of its own, or a merge.

    A tenant's postings are segments, each a set of rows `(term, df change,
    entries)` keyed by `(segment id, term)`, so a write's rows are one new
    run of keys, written in order. The write's segment takes the write's
    `number` as its id. Once `FANOUT` of the tenant's newest segments sit at
    one tier or below (`merge_start`), they and the write's rows are merged
    into one segment, which takes that id instead. Given the write's
    `changes` and the tenant's segment list (`SEGMENT_LIST` bytes):

    - `rows`: the write's own rows, in term order;
    - `merging`: the ids of the stored segments, oldest first, that merge
      with the write's rows (none when the write only appends);
    - `finish(stored)`, given the rows of `merging`, gives the new
      segment's rows in term order, and sets `segments`, the tenant's new
      segment list. A store that merges in its database instead gives
      `listing(size)` the merged segment's entry count, and cleans the
      merged rows that hold removals with `cancelled(..., oldest=oldest)`.
    """

    def __init__(self, changes: PostingChanges, listed: bytes, number: int) -> None:
        self.number = number
        self.rows = _segment_rows(changes)
        size = sum(len(blob) for _, _, blob in self.rows) // ENTRY.itemsize
        self._listed = np.frombuffer(listed, dtype=SEGMENT_LIST)
        self._start = merge_start([*self._listed["size"].tolist(), size])
        self.merging: list[int] = self._listed["id"][self._start :].tolist()
        #: Whether the merge reaches the tenant's oldest segment, so every removal goes.
        self.oldest = not self._start
        self.segments = b""

    def finish(self, stored: Iterable[SegmentRow]) -> list[SegmentRow]:
        """The new segment's rows, in term order, given the rows of `merging`, oldest first."""
        rows = self.rows
        if self.merging:
            rows = _merged_rows([*stored, *rows], oldest=self.oldest)
        self.segments = self.listing(sum(len(blob) for _, _, blob in rows) // ENTRY.itemsize)
        return rows

    def listing(self, size: int) -> bytes:
        """The tenant's segment list once the write's segment holds `size` entries."""
        kept = self._listed[: self._start].tobytes()
        if not size:
            return kept
        return kept + np.array([(self.number, size)], dtype=SEGMENT_LIST).tobytes()


def cancelled(blob: bytes, *, oldest: bool) -> bytes:
    """A merged row's entries with each removal cancelled against its addition (see `merged`)."""
    return merged([blob], oldest=oldest)


def _segment_rows(changes: PostingChanges) -> list[SegmentRow]:
    """The rows of the segment `changes` writes, in term order."""
    removed, batch = changes.removed, changes.batch
    rows: list[SegmentRow] = []
    if batch is not None:
        starts = batch.starts.tolist()
        raw = batch.entries.tobytes()
        size = ENTRY.itemsize
        for position, term in enumerate(batch.terms):
            if term not in removed:
                start, end = starts[position], starts[position + 1]
                rows.append((term, end - start, raw[start * size : end * size]))
    rows.extend((term, changes.frequency_change(term), changes.segment(term)) for term in removed)
    rows.sort(key=itemgetter(0))
    return rows


def _merged_rows(rows: Iterable[SegmentRow], *, oldest: bool) -> list[SegmentRow]:
    """One segment's rows holding what `rows` (of consecutive segments, oldest first) hold."""
    grouped: dict[str, list[Any]] = {}
    for term, change, blob in rows:
        held = grouped.get(term)
        if held is None:
            grouped[term] = [change, blob]
        else:
            held[0] += change
            held.append(blob)
    size = ENTRY.itemsize
    merged_rows: list[SegmentRow] = []
    for term in sorted(grouped):
        df, *blobs = grouped[term]
        joined = b"".join(blobs)
        if df * size != len(joined):
            # Some entries are removals: cancel them against their additions.
            joined = merged(blobs, oldest=oldest)
        if joined:
            merged_rows.append((term, df, joined))
    return merged_rows


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
