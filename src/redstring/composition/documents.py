"""Documents into a chunk store, linked to a graph's entities, and out of it again.

`import_documents` composes `ChunkStore` + a graph's name index (+
optionally `EmbeddingProvider` + a `VectorStore` for passages, and an
`EventLog`): the chunk store and the graph are siblings that may not import
each other, so only composition can link a passage to the entities it
names. Mentions keep the entity id they were recorded with; readers follow
merges through `GraphReader.resolve` (passage to entities) and
`MergedIdReader.merged_ids` (entity to passages). See ADRs 0073, 0074 and 0085.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict

from redstring.domain.chunk import Chunk, Mention
from redstring.domain.events import (
    DocumentChunked,
    DocumentDeleted,
    EntitiesEmbedded,
    PassagesEmbedded,
)
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import ChunkId, EntityId, SourceId, TenantId
from redstring.domain.json_safety import check_name, shown
from redstring.domain.limits import MAX_JSON_INT, MAX_JSON_SIZE
from redstring.domain.linking import (
    KnownNames,
    find_names,
    name_key,
    names_by_key,
    starts_proper,
    text_words,
    written_lowercase,
)
from redstring.domain.names import (
    NAME_CANDIDATE_LIMIT,
    entity_name_units,
    entity_names,
    string_aliases,
    word_units,
)
from redstring.domain.source import SourceDocument
from redstring.domain.validation import (
    check_collaborator,
    check_integer,
    check_sequence,
    check_tenant_id,
    check_vector_count,
)
from redstring.domain.vector import VectorRecord
from redstring.events.adapters.memory import InMemoryEventLog
from redstring.extraction.chunking import Chunker, SlidingWindowChunker
from redstring.ports.chunk_store import ChunkStore
from redstring.ports.embedding import EmbeddingProvider, PassageEmbedder
from redstring.ports.event_log import EventLog
from redstring.ports.graph_batches import NameCandidateBatchReader, SharedNameCandidateBatchReader
from redstring.ports.graph_store import (
    GraphReader,
    MergedIdReader,
    NameCandidateReader,
    SharedNameCandidateReader,
)
from redstring.ports.vector_store import VectorStore
from redstring.projections.chunks import ChunkProjection
from redstring.projections.vector import PassageVectorProjection

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.extraction.chunking import Chunk as Piece

#: A batch name-index lookup: `find_name_candidates_of`, its lending form, or a loop.
type _Lookup = Callable[..., Awaitable[dict[str, list[Entity]]]]
#: The uuid5 namespace of chunk ids. Changing it changes every chunk id: a wire format.
_CHUNK_ID_NAMESPACE: Final = UUID("2b7c9e14-5d3a-5f60-8e21-9a4c7b0d3f58")
#: The characters of a passage `import_documents` cuts by default, and their overlap.
_PASSAGE_SIZE: Final = 1000
_PASSAGE_OVERLAP: Final = 100
#: The name-index candidates first asked for per word; doubled while they may be too few.
_FIRST_LIMIT: Final = 16
#: Documents whose new words are looked up in one batch read while linking:
#: the first group, doubled group by group up to the last (ADR 0123).
_FIRST_LINK_GROUP: Final = 16
_LAST_LINK_GROUP: Final = 1024
#: Words whose name candidates one batch read asks for, so that few are held at once.
_LOOKUP_WORDS: Final = 512
#: Passages embedded per model call.
_EMBED_BATCH: Final = 64


class DocumentImportReport(BaseModel):
    """What one `import_documents` call did.

    `documents` and `chunks` count what was written (`replaced` of the
    documents were held already and were replaced whole); `mentions` the
    entity mentions linked, and `linked_entities` the distinct entities
    they name; `embedded` the passages embedded (0 without a provider).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    documents: int
    chunks: int
    replaced: int
    mentions: int
    linked_entities: int
    embedded: int


def chunk_id_for(tenant_id: TenantId, source_id: SourceId, ordinal: int, text: str) -> ChunkId:
    """The id of a source's chunk: uuid5 of its tenant, source, position and text.

    Deterministic, so adding a document again writes the same ids; a chunk
    whose text changed gets a new one.

    Raises:
        ValueError: an argument is not of its type, or the text cannot be stored.
    """
    check_tenant_id(tenant_id)
    check_name(source_id, argument="source_id", maximum=MAX_JSON_SIZE)
    check_integer(ordinal, argument="ordinal", minimum=0, maximum=MAX_JSON_INT)
    check_name(text, argument="text", maximum=MAX_JSON_SIZE)
    parts = (str(tenant_id), source_id, str(ordinal), text)
    encoded = "".join(f"{len(part)}:{part}" for part in parts)
    return ChunkId(uuid.uuid5(_CHUNK_ID_NAMESPACE, encoded.encode("utf-8", "surrogatepass")))


def _document_chunks(
    document: SourceDocument, tenant_id: TenantId, pieces: Sequence[Piece]
) -> dict[int, Chunk]:
    """The chunks of `document` cut as `pieces`, keyed by piece index; blank pieces are skipped.

    A chunk's `ordinal` is its place among the kept pieces; its metadata
    holds the document's title when it has one.
    """
    metadata = {"title": document.title} if document.title is not None else {}
    kept: dict[int, Chunk] = {}
    for piece in pieces:
        if not piece.text.strip():
            continue
        ordinal = len(kept)
        kept[piece.index] = Chunk(
            id=chunk_id_for(tenant_id, document.id, ordinal, piece.text),
            tenant_id=tenant_id,
            source_id=document.id,
            ordinal=ordinal,
            text=piece.text,
            start=piece.start,
            end=piece.end,
            metadata=metadata,
        )
    return kept


def _entity_mentions(chunk: Chunk, entities: Iterable[Entity]) -> list[Mention]:
    """Where each entity's name or an alias occurs in `chunk`; a span-less mention if nowhere.

    For entities known to come from the chunk (a model read them there):
    every name is looked for, whatever its case, and an entity found
    nowhere is still recorded as mentioned by the chunk, without a span.
    """
    mentions: list[Mention] = []
    words = text_words(chunk.text)
    for entity in entities:
        keys = names_by_key((name, entity.id) for name in entity_names(entity))
        spans = find_names(chunk.text, keys, words=words)
        mentions.extend(
            Mention(
                tenant_id=chunk.tenant_id,
                chunk_id=chunk.id,
                entity_id=entity.id,
                start=span.start,
                end=span.end,
            )
            for span in spans
        )
        if not spans:
            mentions.append(
                Mention(tenant_id=chunk.tenant_id, chunk_id=chunk.id, entity_id=entity.id)
            )
    return mentions


def _relationship_mention(
    chunk: Chunk, relationship_id: UUID, ends: Sequence[Sequence[Mention]]
) -> Mention:
    """A chunk's mention of a relationship: the shortest span holding a mention of each end.

    `ends` are the chunk's mentions of the source and of the target. Without
    a spanned mention of both, the mention has no span.
    """
    best: tuple[int, int] | None = None
    for left in ends[0]:
        for right in ends[1]:
            if left.start is None or right.start is None or left.end is None or right.end is None:
                continue
            span = (min(left.start, right.start), max(left.end, right.end))
            if best is None or span[1] - span[0] < best[1] - best[0]:
                best = span
    return Mention(
        tenant_id=chunk.tenant_id,
        chunk_id=chunk.id,
        relationship_id=relationship_id,  # type: ignore[arg-type]
        start=None if best is None else best[0],
        end=None if best is None else best[1],
    )


async def _link_mentions(
    documents: Sequence[Sequence[Chunk]],
    graph: NameCandidateReader,
    tenant_id: TenantId,
    *,
    lowercase: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Mention]:
    """Mentions of the graph's entities in each document's chunks: names and aliases, whole words.

    Each distinct word a name could start at (one not written in lowercase,
    `find_names`'s `proper_only`) is looked up once in the name index, the
    new words of a group of documents in one batch read (ADR 0123), and
    every name of every candidate is kept; a match is then exact on folded
    words, leftmost-longest. With `lowercase`, every distinct word is looked
    up, and a name written in lowercase (`written_lowercase`: an entity's
    name or alias) is found where the text says it in lowercase too,
    linked to the entities whose name is so written (ADR 0121). A span whose
    name several entities share is linked to every one of them (ADR 0073).
    A word more than `NAME_CANDIDATE_LIMIT` entities' names share may miss
    some of them. `on_progress(done, total)` follows the documents.
    """
    lookup = _batch_lookup(graph)
    looked_up: set[str] = set()
    seen: set[EntityId] = set()
    known: KnownNames[EntityId] = KnownNames()
    mentions: list[Mention] = []
    begin, size = 0, _FIRST_LINK_GROUP
    while begin < len(documents):
        group = [
            [(chunk, text_words(chunk.text)) for chunk in chunks]
            for chunks in documents[begin : begin + size]
        ]
        starts = {
            word.folded
            for read in group
            for chunk, words in read
            for word in words
            if lowercase or starts_proper(chunk.text[word.start : word.end])
        }
        new = sorted(starts - looked_up)
        looked_up.update(new)
        # At most `_LOOKUP_WORDS` words a read: their candidates are held at once.
        for at in range(0, len(new), _LOOKUP_WORDS):
            holders = await _holders_of(lookup, new[at : at + _LOOKUP_WORDS], tenant_id)
            for entity in (entity for found in holders.values() for entity in found):
                if entity.id not in seen:  # every name at once: each entity is folded once
                    seen.add(entity.id)
                    for name in entity_names(entity):
                        known.add(name_key(name), entity.id)
                    if lowercase:
                        for name in (entity.name, *string_aliases(entity)):
                            if written_lowercase(name):
                                known.add(name_key(name), entity.id, lowercase=True)
        for done, read in enumerate(group, start=begin + 1):
            for chunk, words in read:
                for span in known.find(chunk.text, words=words, proper_only=True):
                    said_lowercase = lowercase and not starts_proper(
                        chunk.text[span.start : span.end]
                    )
                    mentions.extend(
                        Mention(
                            tenant_id=tenant_id,
                            chunk_id=chunk.id,
                            entity_id=entity_id,
                            start=span.start,
                            end=span.end,
                        )
                        for entity_id in known.items_of(span.folded, lowercase=said_lowercase)
                    )
            if on_progress is not None:
                on_progress(done, len(documents))
        # Each group's candidates are read whole, those of earlier groups
        # again: groups that double keep the rereads to a few per entity.
        begin, size = begin + size, min(2 * size, _LAST_LINK_GROUP)
    return mentions


def _batch_lookup(graph: NameCandidateReader) -> _Lookup:
    """The graph's batch read of name candidates, lent where it lends, else one read per word."""
    if isinstance(graph, SharedNameCandidateBatchReader):
        return graph.find_shared_name_candidates_of
    if isinstance(graph, NameCandidateBatchReader):
        return graph.find_name_candidates_of
    single = (
        graph.find_shared_name_candidates
        if isinstance(graph, SharedNameCandidateReader)
        else graph.find_name_candidates
    )

    async def each(
        words: Sequence[str], tenant_id: TenantId, *, limit: int
    ) -> dict[str, list[Entity]]:
        return {word: await single(word, tenant_id, limit=limit) for word in words}

    return each


async def _holders_of(
    lookup: _Lookup, words: Sequence[str], tenant_id: TenantId
) -> dict[str, list[Entity]]:
    """Each word's candidates down to the last that holds all its units, at most the limit.

    Candidates come ordered by the units they share, most first, so every
    entity with a name holding the word comes before any that shares fewer
    of its units: a word's limit doubles from `_FIRST_LIMIT` until its last
    candidate falls short, or fewer come back than asked, or the limit is
    `NAME_CANDIDATE_LIMIT`; the words still short are asked again together.
    A store that lends its own entities is read in place: only names are
    read.
    """
    holders: dict[str, list[Entity]] = {}
    pending, limit = list(words), _FIRST_LIMIT
    while pending:
        found = await lookup(pending, tenant_id, limit=limit)
        short = []
        for word in pending:
            if (
                len(found[word]) < limit
                or limit >= NAME_CANDIDATE_LIMIT
                or not set(word_units(word)) <= entity_name_units(found[word][-1])
            ):
                holders[word] = found[word]
            else:
                short.append(word)
        pending, limit = short, min(2 * limit, NAME_CANDIDATE_LIMIT)
    return holders


async def _embed_passages(
    chunks: Sequence[Chunk], provider: EmbeddingProvider
) -> tuple[VectorRecord, ...]:
    """One record per chunk, keyed by its id (`entity_id` holds it), `_EMBED_BATCH` a call.

    Embedded by `PassageEmbedder.embed_passages` when the provider offers
    it, else by `embed`.

    Raises:
        EmbeddingProviderError: the provider failed or returned a wrong count.
        DimensionMismatchError: a vector is not of the provider's dimension.
    """
    records: list[VectorRecord] = []
    # The model's passage form where it has one (ADR 0086), its one form otherwise.
    embed = provider.embed_passages if isinstance(provider, PassageEmbedder) else provider.embed
    for begin in range(0, len(chunks), _EMBED_BATCH):
        batch = chunks[begin : begin + _EMBED_BATCH]
        vectors = await embed([chunk.text for chunk in batch])
        check_vector_count(vectors, len(batch), model=provider.model)
        for chunk, vector in zip(batch, vectors, strict=True):
            if len(vector) != provider.dimension:
                raise DimensionMismatchError(expected=provider.dimension, actual=len(vector))
            records.append(
                VectorRecord(
                    entity_id=EntityId(chunk.id),
                    tenant_id=chunk.tenant_id,
                    vector=vector,
                    metadata={"source_id": chunk.source_id},
                )
            )
    return tuple(records)


def _check_documents(documents: object) -> list[SourceDocument]:
    batch = check_sequence(documents, argument="documents")
    seen: set[str] = set()
    for index, document in enumerate(batch):
        if not isinstance(document, SourceDocument):
            raise ValueError(f"documents[{index}] is not a SourceDocument: {shown(document)}")
        if document.id in seen:
            raise ValueError(f"documents[{index}] repeats the document id {document.id!r}")
        seen.add(document.id)
    return list(batch)


def _vectors_embedded[E: (EntitiesEmbedded, PassagesEmbedded)](
    kind: type[E],
    provider: EmbeddingProvider,
    tenant_id: TenantId,
    occurred_at: datetime,
    records: tuple[VectorRecord, ...],
) -> E:
    """The `kind` event recording `records`, the vectors `provider` computed for one tenant."""
    return kind(
        event_id=uuid4(),
        tenant_id=tenant_id,
        occurred_at=occurred_at,
        model=provider.model,
        dimension=provider.dimension,
        records=records,
    )


async def import_documents(
    documents: Sequence[SourceDocument],
    tenant_id: TenantId,
    *,
    chunks: ChunkStore,
    graph: NameCandidateReader | None = None,
    embeddings: EmbeddingProvider | None = None,
    passage_vectors: VectorStore | None = None,
    chunker: Chunker | None = None,
    event_log: EventLog | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    link_lowercase: bool = False,
) -> DocumentImportReport:
    """Cut documents into passages, index them for search, and link the entities they name.

    No language model is called. Each document is cut by `chunker` (by
    default windows of `PASSAGE_SIZE` characters overlapping by
    `PASSAGE_OVERLAP`) and replaces whatever `chunks` held of it. Given
    `graph`, mentions of its entities' names and aliases are linked
    (whole words, every namesake; ADR 0073), each starting at a word not
    written in lowercase; with `link_lowercase`, a name written in
    lowercase ("database administrator", "iPhone": an entity's name or
    alias whose first letter is lowercase) is linked where the text says
    it in lowercase too, at the cost of looking up every distinct word of
    the batch rather than the capitalised ones (ADR 0121). Given
    `embeddings` and `passage_vectors`, each passage's text is embedded
    into `passage_vectors`, keyed by chunk id (keep that store apart from
    the entities' vectors), in the model's passage form when it has one
    (`PassageEmbedder`, ADR 0086).

    One `DocumentChunked` event per document (after a `DocumentDeleted`
    when it held chunks the new cut drops) and one `PassagesEmbedded` are
    appended to `event_log` (an in-memory log when not given) in one
    batch, then written: all chunks in one write, then all mentions, so
    `replay` rebuilds the chunk store. Everything that can fail runs
    before the first write. `on_progress(done, total)` follows the
    documents as they are linked (given `graph`).

    Raises:
        ValueError: `documents` is not a sequence of `SourceDocument` with
            distinct ids, a collaborator does not implement its port, only
            one of `embeddings` and `passage_vectors` is given, or
            `link_lowercase` is not a bool.
        DimensionMismatchError: the provider's and the store's dimensions differ.
        EmbeddingProviderError: the embedding model failed.
    """
    batch = _check_documents(documents)
    tenant = check_tenant_id(tenant_id)
    check_collaborator(chunks, ChunkStore, argument="chunks")
    for argument, value, port in (
        ("graph", graph, NameCandidateReader),
        ("embeddings", embeddings, EmbeddingProvider),
        ("passage_vectors", passage_vectors, VectorStore),
        ("chunker", chunker, Chunker),
        ("event_log", event_log, EventLog),
    ):
        if value is not None:
            check_collaborator(value, port, argument=argument)
    if on_progress is not None and not callable(on_progress):
        raise ValueError(f"on_progress must be callable or None, got {shown(on_progress)}")
    if not isinstance(link_lowercase, bool):
        raise ValueError(f"link_lowercase must be a bool, got {shown(link_lowercase)}")
    if (embeddings is None) != (passage_vectors is None):
        raise ValueError("embeddings and passage_vectors go together: pass both or neither")
    if (
        embeddings is not None
        and passage_vectors is not None
        and embeddings.dimension != passage_vectors.dimension
    ):
        raise DimensionMismatchError(
            expected=passage_vectors.dimension, actual=embeddings.dimension
        )
    cutter = (
        chunker
        if chunker is not None
        else SlidingWindowChunker(
            size=_PASSAGE_SIZE, overlap=_PASSAGE_OVERLAP, min_size=_PASSAGE_OVERLAP
        )
    )

    cut = [
        list(_document_chunks(document, tenant, cutter.chunk(document.text)).values())
        for document in batch
    ]
    every = [chunk for pieces in cut for chunk in pieces]
    mentions = (
        await _link_mentions(cut, graph, tenant, lowercase=link_lowercase, on_progress=on_progress)
        if graph is not None
        else []
    )
    records = await _embed_passages(every, embeddings) if embeddings is not None else ()

    now = datetime.now(UTC)
    by_chunk: dict[ChunkId, list[Mention]] = {}
    for mention in mentions:
        by_chunk.setdefault(mention.chunk_id, []).append(mention)
    events: list[Event] = []
    replaced = 0
    for document, pieces in zip(batch, cut, strict=True):
        held = [chunk.id for chunk in await chunks.get_source_chunks(document.id, tenant)]
        replaced += bool(held)
        kept = {chunk.id for chunk in pieces}
        dropped = tuple(chunk_id for chunk_id in held if chunk_id not in kept)
        if dropped:
            events.append(
                DocumentDeleted(
                    event_id=uuid4(),
                    tenant_id=tenant,
                    occurred_at=now,
                    source_id=document.id,
                    chunk_ids=dropped,
                )
            )
        events.append(
            DocumentChunked(
                event_id=uuid4(),
                tenant_id=tenant,
                source_id=document.id,
                occurred_at=now,
                chunks=tuple(pieces),
                mentions=tuple(m for chunk in pieces for m in by_chunk.get(chunk.id, ())),
            )
        )
    if records and embeddings is not None:
        events.append(_vectors_embedded(PassagesEmbedded, embeddings, tenant, now, records))

    log = event_log if event_log is not None else InMemoryEventLog()
    await log.append_many(events)
    # The events' writes, batched: deletes, every chunk in one write, every mention in one.
    vector_projection = (
        PassageVectorProjection(passage_vectors) if passage_vectors is not None else None
    )
    for event in events:
        if isinstance(event, DocumentDeleted):
            await chunks.delete_source(event.source_id, event.tenant_id)
            if vector_projection is not None:
                await vector_projection.apply(event)
    await chunks.put_chunks(every)
    await chunks.put_mentions(mentions)
    if vector_projection is not None:
        await passage_vectors.upsert_many(records)  # type: ignore[union-attr]
    return DocumentImportReport(
        documents=len(batch),
        chunks=len(every),
        replaced=replaced,
        mentions=len(mentions),
        linked_entities=len({mention.entity_id for mention in mentions}),
        embedded=len(records),
    )


async def delete_document(
    source_id: SourceId,
    tenant_id: TenantId,
    *,
    chunks: ChunkStore,
    passage_vectors: VectorStore | None = None,
    event_log: EventLog | None = None,
) -> int:
    """Remove a document: its chunks, their mentions and their passage vectors.

    Appends a `DocumentDeleted` naming the chunks held (so a replay
    agrees), then deletes. Returns how many chunks the document had; an
    unknown document is 0, and its event is still appended.

    Raises:
        ValueError: `source_id` is not a non-blank string, or a
            collaborator does not implement its port.
    """
    if not isinstance(source_id, str) or not source_id.strip():
        raise ValueError(f"source_id must be a non-blank string, got {shown(source_id)}")
    tenant = check_tenant_id(tenant_id)
    check_collaborator(chunks, ChunkStore, argument="chunks")
    for argument, value, port in (
        ("passage_vectors", passage_vectors, VectorStore),
        ("event_log", event_log, EventLog),
    ):
        if value is not None:
            check_collaborator(value, port, argument=argument)
    held = await chunks.get_source_chunks(source_id, tenant)
    event = DocumentDeleted(
        event_id=uuid4(),
        tenant_id=tenant,
        occurred_at=datetime.now(UTC),
        source_id=source_id,
        chunk_ids=tuple(chunk.id for chunk in held),
    )
    log = event_log if event_log is not None else InMemoryEventLog()
    await log.append(event)
    await ChunkProjection(chunks).apply(event)
    if passage_vectors is not None:
        await PassageVectorProjection(passage_vectors).apply(event)
    return len(held)


async def mentioned_entities(
    chunk_ids: Sequence[ChunkId], tenant_id: TenantId, *, chunks: ChunkStore, graph: GraphReader
) -> dict[ChunkId, list[Entity]]:
    """The entities each chunk mentions, merges followed, in order of their first mention.

    A mention recorded for an entity since merged counts for its canonical
    (`GraphReader.resolve`); after an undo, for the entity again. An entity
    the graph no longer holds is left out. Every requested chunk is a key.
    """
    tenant = check_tenant_id(tenant_id)
    check_collaborator(chunks, ChunkStore, argument="chunks")
    check_collaborator(graph, GraphReader, argument="graph")
    found = await chunks.mentions_in(chunk_ids, tenant)
    ids = list(dict.fromkeys(m.entity_id for m in found if m.entity_id is not None))
    canonical = await graph.resolve(ids, tenant) if ids else {}
    held = {
        entity.id: entity
        for entity in await graph.get_entities(list(dict.fromkeys(canonical.values())), tenant)
    }
    ordered = sorted(
        (m for m in found if m.entity_id is not None),
        key=lambda m: (-1 if m.start is None else m.start, str(m.entity_id)),
    )
    result: dict[ChunkId, list[Entity]] = {chunk_id: [] for chunk_id in chunk_ids}
    seen: set[tuple[ChunkId, EntityId]] = set()
    for mention in ordered:
        entity = held.get(canonical[mention.entity_id])  # type: ignore[index]
        if entity is None or (mention.chunk_id, entity.id) in seen:
            continue
        seen.add((mention.chunk_id, entity.id))
        result[mention.chunk_id].append(entity)
    return result


async def entity_mentions(
    entity_id: EntityId, tenant_id: TenantId, *, chunks: ChunkStore, graph: MergedIdReader
) -> list[Mention]:
    """Where an entity is said: its mentions and those of every id merged into it.

    A merged `entity_id` reads as its canonical entity, as graph reads do.
    The ids merged into the canonical (`MergedIdReader.merged_ids`) count
    as it, so after an undo each entity again has only its own mentions.
    In `mention_order`.

    Raises:
        ValueError: `entity_id` or `tenant_id` is not an id, or a
            collaborator does not implement its port.
    """
    tenant = check_tenant_id(tenant_id)
    check_collaborator(chunks, ChunkStore, argument="chunks")
    check_collaborator(graph, MergedIdReader, argument="graph")
    canonical = (await graph.resolve([entity_id], tenant))[entity_id]
    merged = await graph.merged_ids(canonical, tenant)
    return await chunks.mentions_of(tenant, entity_ids=[canonical, *merged])
