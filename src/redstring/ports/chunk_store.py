"""The chunk store port: passages of source documents, their BM25 index, their mentions.

Keyed `(tenant_id, id)`, read-your-writes, and never crosses tenants: two
tenants may hold the same chunk ids and the same texts, and each sees, and
is scored against, only its own (term statistics are kept per tenant).
Reads return copies.

- `put_chunks` writes a batch checked whole first (`check_chunks`); for each
  `(tenant_id, source_id)` in the batch, the chunks it holds **replace** every
  chunk the store held for that source, and a chunk id already stored under
  another source moves. Replaced chunks lose their mentions.
- `search` ranks by BM25 (`redstring.domain.bm25`): best first, at most `k`,
  every result scoring above zero (a chunk sharing no term with the query
  is never returned); ties break by `str(chunk.id)` ascending. `k == 0` and
  a query without a term give `[]`; `source_ids` is `None` for every source
  and `[]` for none, and applies before `k`. Every store returns the same
  list, scores included, for the same writes.
- `delete_source` removes a source's chunks and their mentions;
  `delete_by_tenant` removes everything of the tenant.
- Mentions (`Mention`) refer to stored chunks; `put_mentions` refuses one
  whose chunk is missing (`MissingChunkError`) or whose span runs past the
  chunk's text (`ValueError`), writing none of the batch. Mentions are read
  back in `mention_order`.

`ChunkStoreBase` holds these rules once: its public methods check their
arguments and call the protected hooks an adapter implements. See
[ADR 0061](../adr/0061-a-chunk-store-keeps-its-bm25-statistics-in-its-own-writes.md).
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable
from uuid import UUID

from redstring.domain.bm25 import query_terms
from redstring.domain.chunk import (
    Chunk,
    Mention,
    ScoredChunk,
    check_chunks,
    check_mentions,
    mention_order,
)
from redstring.domain.ids import ChunkId, EntityId, RelationshipId, SourceId, TenantId
from redstring.domain.json_safety import check_text, shown
from redstring.domain.validation import check_limit, check_query, check_sequence, check_tenant_id

# Annotations here are evaluated where they are written, so the aliases below
# read as what they stand for in every adapter's inherited signatures.

#: What `search` takes as `source_ids`: the sources to search, or `None` for every one.
Sources = Sequence[SourceId] | None
#: What the base's mention reads and deletes take as entity or relationship ids.
Ids = Sequence[UUID]


@runtime_checkable
class ChunkReader(Protocol):
    """Reads chunks and searches them."""

    async def get_chunks(self, chunk_ids: Sequence[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        """The tenant's chunks among `chunk_ids`, in the order asked, each once; missing omitted."""
        ...

    async def get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        """Every chunk of the source, in `ordinal` order; `[]` for an unknown source."""
        ...

    async def search(
        self, query: str, tenant_id: TenantId, *, k: int = 10, source_ids: Sources = None
    ) -> list[ScoredChunk]:
        """The `k` chunks BM25 ranks best for `query`, best first. See the module docstring.

        Raises:
            ValueError: `query` is blank or too long, `k` is not within
                `0..MAX_LIMIT`, or `source_ids` is not a sequence of strings.
        """
        ...

    async def count_chunks(self, tenant_id: TenantId) -> int:
        """How many chunks the tenant holds."""
        ...


@runtime_checkable
class ChunkWriter(Protocol):
    """Writes and deletes chunks."""

    async def put_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Store the chunks, each source's replacing what the store held for it.

        The batch is checked whole before any of it is written; a refused
        batch changes nothing.
        """
        ...

    async def delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        """Remove the source's chunks and their mentions; return how many chunks there were."""
        ...


@runtime_checkable
class ChunkPurge(Protocol):
    """Removes a whole tenant."""

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove every chunk and mention of the tenant; return how many chunks there were."""
        ...


@runtime_checkable
class MentionReader(Protocol):
    """Reads which chunks mention which entities and relationships."""

    async def mentions_of(
        self,
        tenant_id: TenantId,
        *,
        entity_ids: Sequence[EntityId] = (),
        relationship_ids: Sequence[RelationshipId] = (),
    ) -> list[Mention]:
        """Every mention of any of the entities or relationships, in `mention_order`."""
        ...

    async def mentions_in(self, chunk_ids: Sequence[ChunkId], tenant_id: TenantId) -> list[Mention]:
        """Every mention the chunks hold, in `mention_order`."""
        ...


@runtime_checkable
class MentionWriter(Protocol):
    """Writes and deletes mentions."""

    async def put_mentions(self, mentions: Sequence[Mention]) -> None:
        """Store the mentions (one already stored is kept once), all or none.

        Raises:
            MissingChunkError: a mention's chunk is not stored in its tenant.
            ValueError: a mention is malformed or its span runs past its
                chunk's text.
        """
        ...

    async def delete_mentions_of(
        self,
        tenant_id: TenantId,
        *,
        entity_ids: Sequence[EntityId] = (),
        relationship_ids: Sequence[RelationshipId] = (),
    ) -> int:
        """Remove every mention of the entities and relationships; return how many there were."""
        ...


@runtime_checkable
class ChunkStore(ChunkReader, ChunkWriter, ChunkPurge, MentionReader, MentionWriter, Protocol):
    """Every chunk store capability together."""


def _check_uuids(value: object, *, argument: str) -> frozenset[UUID]:
    items = check_sequence(value, argument=argument)
    for index, item in enumerate(items):
        if not isinstance(item, UUID):
            raise ValueError(
                f"{argument}[{index}] must be a uuid.UUID, got {type(item).__name__} {shown(item)}"
            )
    return frozenset(items)


def _check_source(value: object, *, argument: str = "source_id") -> SourceId:
    if not isinstance(value, str):
        raise ValueError(f"{argument} must be a string, got {type(value).__name__} {shown(value)}")
    return check_text(value, field=argument)  # type: ignore[return-value]


def _check_sources(value: object) -> frozenset[SourceId] | None:
    if value is None:
        return None
    items = check_sequence(value, argument="source_ids")
    for index, item in enumerate(items):
        _check_source(item, argument=f"source_ids[{index}]")
    return frozenset(items)


class ChunkSearch(NamedTuple):
    """A search as `ChunkStoreBase` hands it to `_search`, every field checked.

    `terms` are the query's sorted distinct terms (never empty); `k` is at
    least 1; `source_ids` is `None` (every source) or non-empty.
    """

    terms: list[str]
    k: int
    source_ids: frozenset[SourceId] | None


class MentionTargets(NamedTuple):
    """What a mention read or delete names, as `ChunkStoreBase` hands it on: one set non-empty."""

    entity_ids: frozenset[UUID]
    relationship_ids: frozenset[UUID]


class ChunkStoreBase(ABC):
    """The `ChunkStore` rules, checked once; an adapter implements the hooks.

    Each public method checks its arguments with the shared checks and hands
    the hook checked, normalized values: ids as `frozenset`s or
    de-duplicated lists, a query as its sorted distinct terms, a non-empty
    batch. An adapter subclasses `AsyncClosable` first, then this class.
    """

    @abstractmethod
    def _check_open(self) -> None:
        """Raise `ClosedError` once closed; `AsyncClosable` provides it."""

    async def put_chunks(self, chunks: Sequence[Chunk]) -> None:
        """See `ChunkWriter.put_chunks`."""
        self._check_open()
        checked = check_chunks(chunks)
        if checked:
            await self._put_chunks(checked)

    async def get_chunks(self, chunk_ids: Sequence[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        """See `ChunkReader.get_chunks`."""
        self._check_open()
        _check_uuids(chunk_ids, argument="chunk_ids")
        wanted: list[ChunkId] = list(dict.fromkeys(chunk_ids))
        tenant = check_tenant_id(tenant_id)
        if not wanted:
            return []
        found = {chunk.id: chunk for chunk in await self._get_chunks(wanted, tenant)}
        return [found[chunk_id] for chunk_id in wanted if chunk_id in found]

    async def get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        """See `ChunkReader.get_source_chunks`."""
        self._check_open()
        source = _check_source(source_id)
        tenant = check_tenant_id(tenant_id)
        chunks = await self._get_source_chunks(source, tenant)
        return sorted(chunks, key=lambda chunk: chunk.ordinal)

    async def search(
        self, query: str, tenant_id: TenantId, *, k: int = 10, source_ids: Sources = None
    ) -> list[ScoredChunk]:
        """See `ChunkReader.search`."""
        self._check_open()
        terms = query_terms(check_query(query))
        tenant = check_tenant_id(tenant_id)
        limit = check_limit(k, argument="k")
        sources = _check_sources(source_ids)
        if not terms or limit == 0 or sources == frozenset():
            return []
        return await self._search(ChunkSearch(terms, limit, sources), tenant)

    async def count_chunks(self, tenant_id: TenantId) -> int:
        """See `ChunkReader.count_chunks`."""
        self._check_open()
        return await self._count_chunks(check_tenant_id(tenant_id))

    async def delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        """See `ChunkWriter.delete_source`."""
        self._check_open()
        source = _check_source(source_id)
        return await self._delete_source(source, check_tenant_id(tenant_id))

    async def delete_by_tenant(self, tenant_id: TenantId) -> int:
        """See `ChunkPurge.delete_by_tenant`."""
        self._check_open()
        return await self._delete_by_tenant(check_tenant_id(tenant_id))

    async def put_mentions(self, mentions: Sequence[Mention]) -> None:
        """See `MentionWriter.put_mentions`."""
        self._check_open()
        checked = check_mentions(mentions)
        if checked:
            await self._put_mentions(list(dict.fromkeys(checked)))

    async def mentions_of(
        self, tenant_id: TenantId, *, entity_ids: Ids = (), relationship_ids: Ids = ()
    ) -> list[Mention]:
        """See `MentionReader.mentions_of`."""
        checked = self._checked_targets(tenant_id, entity_ids, relationship_ids)
        return (
            [] if checked is None else sorted(await self._mentions_of(*checked), key=mention_order)
        )

    async def mentions_in(self, chunk_ids: Sequence[ChunkId], tenant_id: TenantId) -> list[Mention]:
        """See `MentionReader.mentions_in`."""
        self._check_open()
        chunks = _check_uuids(chunk_ids, argument="chunk_ids")
        tenant = check_tenant_id(tenant_id)
        if not chunks:
            return []
        return sorted(await self._mentions_in(chunks, tenant), key=mention_order)

    async def delete_mentions_of(
        self, tenant_id: TenantId, *, entity_ids: Ids = (), relationship_ids: Ids = ()
    ) -> int:
        """See `MentionWriter.delete_mentions_of`."""
        checked = self._checked_targets(tenant_id, entity_ids, relationship_ids)
        return 0 if checked is None else await self._delete_mentions_of(*checked)

    def _checked_targets(
        self, tenant_id: object, entity_ids: object, relationship_ids: object
    ) -> tuple[MentionTargets, TenantId] | None:
        """The targets of a mention read or delete, checked; `None` when there are none."""
        self._check_open()
        tenant = check_tenant_id(tenant_id)
        entities = _check_uuids(entity_ids, argument="entity_ids")
        relationships = _check_uuids(relationship_ids, argument="relationship_ids")
        if not entities and not relationships:
            return None
        return MentionTargets(entities, relationships), tenant

    # -- hooks: each receives checked arguments --------------------------------

    @abstractmethod
    async def _put_chunks(self, chunks: Sequence[Chunk]) -> None:
        """Write a checked, non-empty batch, replacing each of its sources, all or nothing."""

    @abstractmethod
    async def _get_chunks(self, chunk_ids: list[ChunkId], tenant_id: TenantId) -> list[Chunk]:
        """Copies of the stored chunks among the distinct, non-empty `chunk_ids`, in any order."""

    @abstractmethod
    async def _get_source_chunks(self, source_id: SourceId, tenant_id: TenantId) -> list[Chunk]:
        """Copies of the source's chunks, in any order."""

    @abstractmethod
    async def _search(self, search: ChunkSearch, tenant_id: TenantId) -> list[ScoredChunk]:
        """BM25's best `search.k` for its terms, among its `source_ids` if given."""

    @abstractmethod
    async def _count_chunks(self, tenant_id: TenantId) -> int:
        """How many chunks the tenant holds."""

    @abstractmethod
    async def _delete_source(self, source_id: SourceId, tenant_id: TenantId) -> int:
        """Remove the source's chunks and their mentions; how many chunks."""

    @abstractmethod
    async def _delete_by_tenant(self, tenant_id: TenantId) -> int:
        """Remove the tenant's chunks and mentions; how many chunks."""

    @abstractmethod
    async def _put_mentions(self, mentions: list[Mention]) -> None:
        """Write distinct, well-formed mentions after checking their chunks and spans."""

    @abstractmethod
    async def _mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> list[Mention]:
        """The mentions of any of the targets, in any order."""

    @abstractmethod
    async def _mentions_in(self, chunk_ids: frozenset[UUID], tenant_id: TenantId) -> list[Mention]:
        """The mentions in any of the non-empty `chunk_ids`, in any order."""

    @abstractmethod
    async def _delete_mentions_of(self, targets: MentionTargets, tenant_id: TenantId) -> int:
        """Remove the mentions of any of the targets; how many."""
