"""What each command does, apart from click: async functions over stores, returning data.

Each action takes the stores it reads or writes (the narrowest port that
serves) and the command's checked arguments, and returns plain data:
`TypedDict`s shaped as the command's `--json` output, or the library's own
reports. Nothing here prints, parses arguments or opens a `--db`; `app`
wires the actions to click and `render` turns their data into text, and
the MCP server calls the same actions. A note a command prints on standard
error while it works arrives through a `say` callback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict
from uuid import UUID

from redstring.cli.rows import STDIN, Rows, decode, read_rows
from redstring.cli.stores import CommandError, tenant_label
from redstring.composition import (
    Consolidator,
    Retriever,
    build_graphs,
    delete_entity,
    import_entities,
)
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.retrieval import RetrievalMode
from redstring.domain.source import SourceDocument

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.cli.stores import Database
    from redstring.composition import ConsolidationReport, GraphBuildReport, ImportReport
    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId
    from redstring.ports.embedding import EmbeddingProvider
    from redstring.ports.event_log import EventLog
    from redstring.ports.graph_store import GraphReader, GraphStore, GraphWriter
    from redstring.ports.llm import LlmProvider
    from redstring.ports.vector_store import VectorReader, VectorStore, VectorWriter


def _quiet(note: str) -> None:
    """A `say` that drops the note."""


# -- reading the command's input -------------------------------------------------


def read_input(file: str, tenant_id: TenantId, file_format: str, id_column: str | None) -> Rows:
    """The rows of `file` (`-` is standard input), read and checked whole.

    Raises:
        CommandError: no such file, or a directory.
        RowError: a row that is not an entity or a relationship.
    """
    if file == STDIN:
        data = sys.stdin.buffer.read()
    else:
        path = Path(file)
        if path.is_dir():
            raise CommandError(f"{file} is a directory, not a file")
        if not path.parent.is_dir():
            raise CommandError(f"no such directory: {path.parent}")
        if not path.is_file():
            raise CommandError(f"no such file: {file}")
        data = path.read_bytes()
    return read_rows(
        decode(data, source=file),
        source=file,
        tenant_id=tenant_id,
        file_format=file_format,
        id_column=id_column,
    )


def read_documents(paths: Sequence[str]) -> list[SourceDocument]:
    """One `SourceDocument` per text file, each read whole and not empty.

    Raises:
        CommandError: no such file, or an empty one.
    """
    documents: list[SourceDocument] = []
    for name in paths:
        path = Path(name)
        if not path.parent.is_dir():
            raise CommandError(f"no such directory: {path.parent}")
        if not path.is_file():
            raise CommandError(f"no such file: {name}")
        text = decode(path.read_bytes(), source=name)
        if not text.strip():
            raise CommandError(f"{name} is empty")
        documents.append(SourceDocument(id=SourceId(name), text=text, title=path.name))
    return documents


# -- writing ---------------------------------------------------------------------


async def import_rows(
    rows: Rows,
    *,
    graph: GraphStore,
    embeddings: EmbeddingProvider | None,
    vectors: VectorStore | None,
    events: EventLog | None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Write `rows` (entities, then relationships), embedding names with `embeddings`."""
    return await import_entities(
        rows.entities,
        graph=graph,
        embeddings=embeddings,
        vectors=vectors,
        relationships=rows.relationships,
        event_log=events,
        source_id=rows.origin,
        on_progress=on_progress,
    )


async def build_documents(
    documents: Sequence[SourceDocument],
    tenant_id: TenantId,
    *,
    llm: LlmProvider,
    graph: GraphStore,
    embeddings: EmbeddingProvider | None,
    vectors: VectorStore | None,
    events: EventLog | None,
    concurrency: int,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[GraphBuildReport]:
    """Extract each document's graph through `llm`; one report per document, in order."""
    return await build_graphs(
        documents,
        provider=llm,
        store=graph,
        tenant_id=tenant_id,
        concurrency=concurrency,
        on_progress=on_progress,
        skip_failed_chunks=True,
        embedding_provider=embeddings,
        vector_store=vectors,
        event_log=events,
    )


async def delete_entities(
    entity_ids: Sequence[EntityId],
    tenant_id: TenantId,
    *,
    graph: GraphWriter,
    vectors: VectorWriter | None,
    events: EventLog | None,
) -> int:
    """Delete each entity from both channels, recording it; how many were held."""
    deleted = 0
    for entity_id in entity_ids:
        deleted += await delete_entity(
            entity_id, tenant_id, graph=graph, vectors=vectors, event_log=events
        )
    return deleted


async def consolidate(
    tenant_id: TenantId,
    *,
    graph: GraphStore,
    events: EventLog,
    vectors: VectorStore | None,
    dry_run: bool,
    workers: int = 1,
) -> ConsolidationReport:
    """Merge the tenant's duplicates (or, with `dry_run`, only say which) on `workers` processes."""
    consolidator = Consolidator(graph=graph, event_log=events, vectors=vectors, workers=workers)
    return await consolidator.consolidate(tenant_id, dry_run=dry_run)


async def undo_merge(
    merge_event_id: UUID,
    tenant_id: TenantId,
    *,
    graph: GraphStore,
    events: EventLog,
    vectors: VectorStore | None,
) -> UUID:
    """Undo one recorded merge; the id of the `MergeUndone` event."""
    consolidator = Consolidator(graph=graph, event_log=events, vectors=vectors)
    return await consolidator.undo(tenant_id, merge_event_id)


def merge_event_id_for(value: str) -> UUID:
    """`value` as a merge event's id.

    Raises:
        CommandError: `value` is not a UUID.
    """
    try:
        return UUID(value)
    except ValueError:
        raise CommandError(f"EVENT_ID must be a UUID, got {value!r}") from None


# -- reading ---------------------------------------------------------------------


class Match(TypedDict):
    """One ranked entity of `search`, as `--json` prints it."""

    rank: int
    id: str
    name: str
    entity_type: str
    score: float
    semantic: float | None
    lexical: float | None
    properties: dict[str, Any]


async def search(
    query: str,
    tenant_id: TenantId,
    *,
    graph: GraphReader,
    embeddings: EmbeddingProvider | None,
    vectors: VectorReader | None,
    k: int,
    mode: RetrievalMode,
    types: Sequence[str] = (),
    tenant: str = "",
    location: str = "",
    say: Callable[[str], None] = _quiet,
) -> list[Match]:
    """The tenant's entities ranked for `query`, best first.

    Without vectors (`embeddings` or `vectors` is `None`) only the lexical
    channel ranks, and `say` is told so when another `mode` was asked for;
    it is told too when the tenant (named `tenant`, held in `location`), or
    a type asked for, holds nothing, and when a vector match was left out
    because the graph does not hold its entity.
    """
    if embeddings is None or vectors is None:
        if mode is not RetrievalMode.LEXICAL:
            say("no vectors in this database: searching the lexical channel only")
        mode, embeddings, vectors = RetrievalMode.LEXICAL, None, None
    await _say_what_is_missing(graph, tenant, tenant_id, types, location, say)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    result = await retriever.retrieve(
        query, tenant_id, k=k, mode=mode, entity_types=list(types) or None
    )
    if result.skipped:
        say(
            f"{result.skipped} vector match(es) left out: the graph does not hold "
            "their entities (it lags the vectors; `redstring stats` counts both)"
        )
    return [
        Match(
            rank=rank,
            id=str(match.entity.id),
            name=match.entity.name,
            entity_type=match.entity.entity_type,
            # The column that orders the table: the evidence share when both
            # channels answered (ADR 0104), else the fused RRF score.
            score=match.score if match.evidence is None else match.evidence,
            semantic=match.semantic,
            lexical=match.lexical,
            properties=match.entity.properties,
        )
        for rank, match in enumerate(result.matches, start=1)
    ]


async def _say_what_is_missing(
    graph: GraphReader,
    tenant: str,
    tenant_id: TenantId,
    types: Sequence[str],
    location: str,
    say: Callable[[str], None],
) -> None:
    """Tell `say` when the tenant, or a type asked for, holds nothing."""
    if not await graph.find_entities(tenant_id, limit=1):
        say(f"tenant {tenant!r} holds no entities in {location}")
        return
    for entity_type in types:
        if not await graph.find_entities(tenant_id, entity_type=entity_type, limit=1):
            say(f"tenant {tenant!r} holds no entity of type {entity_type!r}")


class TenantCounts(TypedDict):
    """One tenant's line of `stats`."""

    tenant: str
    tenant_id: str
    entities: int
    relationships: int
    vectors: int


class Stats(TypedDict):
    """What `stats` counts, as `--json` prints it."""

    database: str
    entities: int
    relationships: int
    vectors: int
    models: list[str]
    dimension: int | None
    tenants: list[TenantCounts]


async def stats(database: Database, *, location: str) -> Stats:
    """Entities, relationships and vectors per tenant of `database` (shown as `location`)."""
    graph = await database.graph.count_by_tenant()
    vectors = await database.vectors.count_by_tenant() if database.vectors is not None else {}
    tenants = sorted(set(graph) | set(vectors), key=str)
    rows = [
        TenantCounts(
            tenant=tenant_label(tenant),
            tenant_id=str(tenant),
            entities=graph.get(tenant, (0, 0))[0],
            relationships=graph.get(tenant, (0, 0))[1],
            vectors=vectors.get(tenant, 0),
        )
        for tenant in tenants
    ]
    return Stats(
        database=location,
        entities=sum(row["entities"] for row in rows),
        relationships=sum(row["relationships"] for row in rows),
        vectors=sum(row["vectors"] for row in rows),
        models=[database.model] if database.model else [],
        dimension=database.dimension,
        tenants=rows,
    )


async def entity_for(graph: GraphReader, tenant_id: TenantId, reference: str) -> Entity:
    """The entity `reference` names: by its id, or the one entity of that name.

    A name is matched exactly, else as `normalize_name` matches it.

    Raises:
        CommandError: no such entity, or several of that name.
    """
    try:
        entity_id = EntityId(UUID(reference))
    except ValueError:
        pass
    else:
        entity = await graph.get_entity(entity_id, tenant_id)
        if entity is None:
            raise CommandError(f"no entity {reference} in this tenant")
        return entity
    candidates = await graph.find_entities(tenant_id, name=reference)
    found = [entity for entity in candidates if entity.name == reference] or candidates
    if not found:
        raise CommandError(f"no entity named {reference!r} in this tenant")
    if len(found) > 1:
        ids = ", ".join(f"{entity.id} ({entity.entity_type})" for entity in found[:5])
        raise CommandError(f"{len(found)} entities are named {reference!r}: pass an id: {ids}")
    return found[0]


async def resolve(graph: GraphReader, tenant_id: TenantId, reference: str) -> EntityId:
    """The id of the entity `reference` names (see `entity_for`)."""
    return (await entity_for(graph, tenant_id, reference)).id


async def resolve_all(
    graph: GraphReader, tenant_id: TenantId, references: Sequence[str]
) -> list[EntityId]:
    """`resolve` for each reference, in order."""
    return [await resolve(graph, tenant_id, reference) for reference in references]


class Neighbor(TypedDict):
    """One entity of `neighbors`."""

    id: str
    name: str
    entity_type: str


async def neighbors(
    graph: GraphReader, tenant_id: TenantId, reference: str, *, depth: int
) -> tuple[Entity, list[Neighbor]]:
    """The entity `reference` names, and those within `depth` hops of it.

    Raises:
        CommandError: `reference` names no entity, or several.
    """
    start = await entity_for(graph, tenant_id, reference)
    found = await graph.neighbors(start.id, tenant_id, depth=depth)
    return start, [
        Neighbor(id=str(each.id), name=each.name, entity_type=each.entity_type) for each in found
    ]
