"""`InMemoryChunkStore`: the reference chunk store, with a BM25 index per tenant.

Each tenant numbers its chunks by slot, in write order. Per slot it keeps the
chunk, its length in terms and the two halves of its id; per term, a posting
of the slots holding it and the term's frequency in each, as machine-integer
arrays that a search reads in place through numpy. A deleted chunk's slot is
marked dead and left in the postings (scored, then zeroed), until dead slots
outnumber live ones and the tenant is renumbered. See ADR 0061.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.chunks.postings import IndexedBatch
from redstring.chunks.scoring import best_slots, rank_slots, term_weights
from redstring.domain.bm25 import id_halves, idf, term_frequencies
from redstring.domain.chunk import (
    Chunk,
    Mention,
    ScoredChunk,
    check_mention_span,
    copy_chunk,
    scored_chunk,
)
from redstring.domain.exceptions import MissingChunkError
from redstring.ports.chunk_store import ChunkSearch, ChunkStoreBase, MentionTargets
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from uuid import UUID

    from redstring.domain.ids import ChunkId, SourceId, TenantId

#: A tenant is renumbered once it holds more dead slots than this and than live ones.
_MIN_DEAD_TO_COMPACT: Final = 1_024


class _Posting:
    """One term's slots and frequencies, in slot order of writing."""

    __slots__ = ("frequencies", "slots")

    def __init__(self) -> None:
        self.slots = array("i")
        self.frequencies = array("i")


@dataclass(eq=False)
class _Tenant:
    """One tenant's chunks, postings, statistics and mentions."""

    slot_of: dict[ChunkId, int] = field(default_factory=dict)
    chunk_at: list[Chunk | None] = field(default_factory=list)
    lengths: array[int] = field(default_factory=lambda: array("i"))
    id_high: array[int] = field(default_factory=lambda: array("Q"))
    id_low: array[int] = field(default_factory=lambda: array("Q"))
    alive: bytearray = field(default_factory=bytearray)
    sources: dict[SourceId, set[ChunkId]] = field(default_factory=dict)
    postings: dict[str, _Posting] = field(default_factory=dict)
    frequency: dict[str, int] = field(default_factory=dict)
    total_length: int = 0
    dead: int = 0
    mentions_by_chunk: dict[ChunkId, set[Mention]] = field(default_factory=dict)
    mentions_by_target: dict[tuple[int, UUID], set[Mention]] = field(default_factory=dict)

    @property
    def chunk_count(self) -> int:
        return len(self.slot_of)

    def add_batch(self, chunks: Sequence[Chunk]) -> None:
        """Index `chunks` at the next slots, one posting extension per term."""
        first = len(self.chunk_at)
        batch = IndexedBatch([chunk.text for chunk in chunks], first)
        self.chunk_at.extend(chunks)
        self.lengths.frombytes(batch.chunk_lengths.tobytes())
        self.alive.extend(b"\x01" * len(chunks))
        sources = self.sources
        for slot, chunk in enumerate(chunks, first):
            self.slot_of[chunk.id] = slot
            high, low = id_halves(chunk.id)
            self.id_high.append(high)
            self.id_low.append(low)
            held = sources.get(chunk.source_id)
            if held is None:
                held = sources[chunk.source_id] = set()
            held.add(chunk.id)
        self.total_length += int(batch.chunk_lengths.sum())
        postings, counts = self.postings, self.frequency
        slots, frequencies = batch.slots, batch.frequencies
        starts = batch.starts.tolist()
        for position, term in enumerate(batch.terms):
            start, end = starts[position], starts[position + 1]
            posting = postings.get(term)
            if posting is None:
                posting = postings[term] = _Posting()
            posting.slots.frombytes(slots[start:end].tobytes())
            posting.frequencies.frombytes(frequencies[start:end].tobytes())
            counts[term] = counts.get(term, 0) + end - start

    def remove(self, chunk_id: ChunkId) -> None:
        slot = self.slot_of.pop(chunk_id)
        chunk = self.chunk_at[slot]
        assert chunk is not None
        self.chunk_at[slot] = None
        self.alive[slot] = 0
        self.dead += 1
        source = self.sources[chunk.source_id]
        source.discard(chunk_id)
        if not source:
            del self.sources[chunk.source_id]
        frequencies, length = term_frequencies(chunk.text)
        self.total_length -= length
        counts = self.frequency
        for term in frequencies:
            left = counts[term] - 1
            if left:
                counts[term] = left
            else:
                del counts[term]
                del self.postings[term]
        for mention in self.mentions_by_chunk.pop(chunk_id, ()):
            self._forget_target(mention)

    def _forget_target(self, mention: Mention) -> None:
        key = _target(mention)
        held = self.mentions_by_target[key]
        held.discard(mention)
        if not held:
            del self.mentions_by_target[key]

    def compact_if_sparse(self) -> None:
        """Renumber the live slots once dead ones outnumber them."""
        if self.dead <= _MIN_DEAD_TO_COMPACT or self.dead <= self.chunk_count:
            return
        alive = np.frombuffer(self.alive, dtype=np.bool_)
        renumbered = np.cumsum(alive, dtype=np.int32) - 1
        for posting in self.postings.values():
            slots = np.frombuffer(posting.slots, dtype=np.int32)
            keep = alive[slots]
            posting.slots = array("i", renumbered[slots[keep]].tobytes())
            posting.frequencies = array(
                "i", np.frombuffer(posting.frequencies, dtype=np.int32)[keep].tobytes()
            )
        live = np.flatnonzero(alive)
        self.chunk_at = [self.chunk_at[slot] for slot in live]
        for name in ("lengths", "id_high", "id_low"):
            column: array[int] = getattr(self, name)
            kept = np.frombuffer(column, dtype=_DTYPES[column.typecode])[live]
            setattr(self, name, array(column.typecode, kept.tobytes()))
        self.alive = bytearray(b"\x01" * len(live))
        self.slot_of = {
            chunk.id: slot for slot, chunk in enumerate(self.chunk_at) if chunk is not None
        }
        self.dead = 0


_DTYPES: Final = {"i": np.int32, "Q": np.uint64}


def _target(mention: Mention) -> tuple[int, UUID]:
    if mention.entity_id is not None:
        return (0, mention.entity_id)
    assert mention.relationship_id is not None
    return (1, mention.relationship_id)


class InMemoryChunkStore(AsyncClosable, ChunkStoreBase):
    """Chunks, their BM25 index and their mentions, in process memory.

    The reference implementation of `ChunkStore`; nothing outlives the
    process.
    """

    def __init__(self) -> None:
        self._tenants: dict[TenantId, _Tenant] = {}

    async def _release(self) -> None:
        self._tenants.clear()

    def _tenant(self, tenant_id: TenantId) -> _Tenant | None:
        return self._tenants.get(tenant_id)

    async def _put_chunks(self, chunks: Sequence[Chunk]) -> None:
        by_tenant: dict[TenantId, list[Chunk]] = {}
        for chunk in chunks:
            by_tenant.setdefault(chunk.tenant_id, []).append(copy_chunk(chunk))
        for tenant_id, batch in by_tenant.items():
            tenant = self._tenants.setdefault(tenant_id, _Tenant())
            replaced: set[ChunkId] = set()
            for source_id in {chunk.source_id for chunk in batch}:
                replaced |= tenant.sources.get(source_id, set())
            replaced |= {chunk.id for chunk in batch if chunk.id in tenant.slot_of}
            for chunk_id in replaced:
                tenant.remove(chunk_id)
            tenant.add_batch(batch)
            tenant.compact_if_sparse()

    async def _get_chunks(self, chunk_ids: list[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return []
        return [
            copy_chunk(chunk)
            for chunk in (_chunk(tenant, chunk_id) for chunk_id in chunk_ids)
            if chunk is not None
        ]

    async def _get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return []
        return [
            copy_chunk(chunk)
            for chunk in (
                _chunk(tenant, chunk_id) for chunk_id in tenant.sources.get(source_id, ())
            )
            if chunk is not None
        ]

    async def _search(self, search: ChunkSearch, tenant_id: TenantId) -> list[ScoredChunk]:
        terms, k, source_ids = search
        tenant = self._tenant(tenant_id)
        if tenant is None or not tenant.chunk_count:
            return []
        count = tenant.chunk_count
        mean_length = tenant.total_length / count
        lengths = np.frombuffer(tenant.lengths, dtype=np.int32)
        scores = np.zeros(len(lengths), dtype=np.float64)
        for term in terms:
            frequency = tenant.frequency.get(term)
            if frequency is None:
                continue
            posting = tenant.postings[term]
            slots = np.frombuffer(posting.slots, dtype=np.int32)
            frequencies = np.frombuffer(posting.frequencies, dtype=np.int32)
            scores[slots] += term_weights(
                idf(frequency, count), frequencies, lengths[slots], mean_length
            )
        if tenant.dead:
            scores[~np.frombuffer(tenant.alive, dtype=np.bool_)] = 0.0
        if source_ids is not None:
            scores = _only(scores, tenant, source_ids)
        found = best_slots(scores, k)
        high = np.frombuffer(tenant.id_high, dtype=np.uint64)[found]
        low = np.frombuffer(tenant.id_low, dtype=np.uint64)[found]
        ranked = found[rank_slots(scores[found], high, low, k)]
        results = []
        for slot in ranked.tolist():
            chunk = tenant.chunk_at[slot]
            assert chunk is not None
            results.append(scored_chunk(copy_chunk(chunk), float(scores[slot])))
        return results

    async def _count_chunks(self, tenant_id: TenantId) -> int:
        tenant = self._tenant(tenant_id)
        return 0 if tenant is None else tenant.chunk_count

    async def _delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return 0
        removed = list(tenant.sources.get(source_id, ()))
        for chunk_id in removed:
            tenant.remove(chunk_id)
        tenant.compact_if_sparse()
        return len(removed)

    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        tenant = self._tenants.pop(tenant_id, None)
        return 0 if tenant is None else tenant.chunk_count

    async def _put_mentions(self, mentions: list[Mention]) -> None:
        for index, mention in enumerate(mentions):
            tenant = self._tenant(mention.tenant_id)
            chunk = None if tenant is None else _chunk(tenant, mention.chunk_id)
            if chunk is None:
                raise MissingChunkError(chunk_id=mention.chunk_id, tenant_id=mention.tenant_id)
            check_mention_span(mention, chunk, argument=f"mentions[{index}]")
        for mention in mentions:
            tenant = self._tenants[mention.tenant_id]
            tenant.mentions_by_chunk.setdefault(mention.chunk_id, set()).add(mention)
            tenant.mentions_by_target.setdefault(_target(mention), set()).add(mention)

    async def _mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> list[Mention]:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return []
        return [
            mention
            for key in _targets(*targets)
            for mention in tenant.mentions_by_target.get(key, ())
        ]

    async def _mentions_in(self, chunk_ids: frozenset[UUID], tenant_id: TenantId) -> list[Mention]:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return []
        return [
            mention
            for chunk_id in chunk_ids
            for mention in tenant.mentions_by_chunk.get(chunk_id, ())  # type: ignore[call-overload]
        ]

    async def _delete_mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> int:
        tenant = self._tenant(tenant_id)
        if tenant is None:
            return 0
        removed = 0
        for key in _targets(*targets):
            for mention in tenant.mentions_by_target.pop(key, ()):
                held = tenant.mentions_by_chunk[mention.chunk_id]
                held.discard(mention)
                if not held:
                    del tenant.mentions_by_chunk[mention.chunk_id]
                removed += 1
        return removed


def _chunk(tenant: _Tenant, chunk_id: ChunkId) -> Chunk | None:
    slot = tenant.slot_of.get(chunk_id)
    return None if slot is None else tenant.chunk_at[slot]


def _targets(
    entity_ids: frozenset[UUID], relationship_ids: frozenset[UUID]
) -> Iterable[tuple[int, UUID]]:
    yield from ((0, entity_id) for entity_id in entity_ids)
    yield from ((1, relationship_id) for relationship_id in relationship_ids)


def _only(
    scores: np.ndarray[tuple[int], np.dtype[np.float64]],
    tenant: _Tenant,
    source_ids: frozenset[SourceId],
) -> np.ndarray[tuple[int], np.dtype[np.float64]]:
    """`scores` with every slot outside `source_ids` set to zero."""
    slots = [
        tenant.slot_of[chunk_id]
        for source_id in source_ids
        for chunk_id in tenant.sources.get(source_id, ())
    ]
    kept = np.zeros_like(scores)
    index = np.asarray(slots, dtype=np.intp)
    kept[index] = scores[index]
    return kept
