"""A tenant's rows as chunk store schema version 2 (ADR 0084) laid them out, to migrate.

Version 2 kept a term row (its document frequency) and a list of segments
per term; version 3 (ADR 0096) keeps segments per tenant. Both durable
stores' migration tests write these rows with their own version 2 tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from redstring.chunks.postings import ENTRY
from redstring.domain.bm25 import term_frequencies
from redstring.testing.chunk_store import source_chunks

if TYPE_CHECKING:
    from redstring.domain.chunk import Chunk

#: What the version 2 rows hold: three live chunks (slots 1-3).
CHUNKS = source_chunks("doc-1", "apple banana", "apple cherry apple", "banana split")
#: Written at slot 0, then removed: its terms hold an addition and a removal.
REMOVED = source_chunks("doc-0", "apple gone", first=9)[0]
QUERIES = ("apple", "banana cherry", "gone", "split apple")


@dataclass
class Version2:
    """The rows, without the tenant column each table starts with."""

    #: `(chunk_id, slot, source_id, ordinal, start, end, length, text)`, metadata `{}`.
    chunks: list[tuple[object, ...]] = field(default_factory=list)
    #: `(term, df)`.
    terms: list[tuple[str, int]] = field(default_factory=list)
    #: `(term, position, entries)`.
    postings: list[tuple[str, int, bytes]] = field(default_factory=list)
    #: `(chunk_count, total_length, next_slot, next_write)`.
    tenant: tuple[int, int, int, int] = (0, 0, 0, 0)


def version_2(chunks: list[Chunk] = CHUNKS, removed: Chunk = REMOVED) -> Version2:
    """`removed` at slot 0 and then removed, `chunks` after it: one segment per write and term."""
    rows = Version2()
    segments: dict[str, list[bytes]] = {}
    total = 0
    for slot, chunk in enumerate([removed, *chunks]):
        frequencies, length = term_frequencies(chunk.text)
        for term, tf in frequencies.items():
            segments.setdefault(term, []).append(np.array([(slot, tf, length)], ENTRY).tobytes())
        if slot == 0:
            for term in frequencies:
                segments[term].append(np.array([(-1, 0, 0)], ENTRY).tobytes())
            continue
        total += length
        span = (chunk.start, chunk.end, length, chunk.text)
        rows.chunks.append((chunk.id, slot, chunk.source_id, chunk.ordinal, *span))
    for term, blobs in sorted(segments.items()):
        added = sum(1 for blob in blobs if np.frombuffer(blob, ENTRY)["slot"][0] >= 0)
        df = added - (len(blobs) - added)
        if df:
            rows.terms.append((term, df))
            rows.postings.extend((term, position, blob) for position, blob in enumerate(blobs))
    rows.tenant = (len(chunks), total, len(chunks) + 1, len(chunks) + 1)
    return rows
