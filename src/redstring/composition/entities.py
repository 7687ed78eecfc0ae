"""Entities of one's own, into both channels and out of them.

`import_entities` composes `GraphStore` + `EmbeddingProvider` +
`VectorStore` (+ an `EventLog`): it reads the graph to decide which names
need embedding, which no sibling below may do with a model in hand.
`delete_entity` composes `GraphWriter` + `VectorWriter` (+ an `EventLog`), which
are siblings, and `delete_tenant` every store's purge.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

from redstring.composition.build_graph import embed_entity_names, record_and_project
from redstring.composition.documents import _vectors_embedded
from redstring.domain.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    EntityDeleted,
    TenantDeleted,
)
from redstring.domain.exceptions import DimensionMismatchError
from redstring.domain.ids import EntityId, SourceId, TenantId
from redstring.domain.json_safety import check_name, shown
from redstring.domain.limits import MAX_LIMIT
from redstring.domain.validation import (
    check_collaborator,
    check_entities,
    check_entity_id,
    check_integer,
    check_optional_collaborators,
    check_relationships,
    check_tenant_id,
)
from redstring.ports.chunk_store import ChunkPurge
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.event_log import EventLog
from redstring.ports.graph_store import (
    GraphPurge,
    GraphStore,
    GraphWriter,
    MergedIdReader,
    MergeResolver,
)
from redstring.ports.vector_store import VectorPurge, VectorStore, VectorWriter

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.relationship import Relationship
    from redstring.domain.vector import VectorRecord

#: The `domain` and `model` an import's `DocumentExtracted` event records.
_IMPORT_ORIGIN: Final = "import"
#: Names embedded per model call when `batch_size` is not given.
_BATCH_SIZE: Final = 256


class ImportReport(BaseModel):
    """What one `import_entities` call did.

    `entities` counts the distinct `(tenant_id, id)` written, and
    `duplicates` the inputs that repeated an earlier one (the later won).
    `embedded` counts names sent to the embedding model; `already_embedded`
    those skipped because the vector store held a vector for the entity and
    the graph held it under the same name and type. `relationships` counts
    relationships written.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: int
    duplicates: int
    relationships: int
    embedded: int
    already_embedded: int


async def import_entities(
    entities: Sequence[Entity],
    *,
    graph: GraphStore,
    embeddings: EmbeddingProvider | None = None,
    vectors: VectorStore | None = None,
    relationships: Sequence[Relationship] = (),
    event_log: EventLog | None = None,
    source_id: str = _IMPORT_ORIGIN,
    batch_size: int = _BATCH_SIZE,
    on_progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Write entities you already have into the graph, and their names' vectors.

    Entities keep their ids; one repeating an earlier `(tenant_id, id)`
    replaces it. With `embeddings` and `vectors`, each name is embedded
    (`batch_size` names a call, reporting `on_progress(done, total)` after
    each) unless the vector store already holds the entity's vector and the
    graph holds it under the same name and type: a vector store holds one
    model's vectors, so re-importing a file embeds only what changed. Each
    vector carries `metadata={"entity_type": ...}`, as `build_graph`'s do.

    Per tenant, one `DocumentExtracted` event (`source_id`, domain and model
    `"import"`) and one `EntitiesEmbedded` event are appended to `event_log`
    (an in-memory log when not given) and projected into the stores, so
    `replay` rebuilds them. Everything that can fail (validation, the
    model) runs before the first write. `relationships` must join entities
    of this call, in their own tenant.

    Raises:
        ValueError: an item is not an `Entity` (or `Relationship`) every
            store can hold, a collaborator does not implement its port,
            only one of `embeddings` and `vectors` is given, `batch_size`
            is not within `1..MAX_LIMIT`, `source_id` is not a name, or a
            relationship's endpoint is not among `entities`.
        DimensionMismatchError: the provider's and the store's dimensions differ.
        EmbeddingProviderError: the embedding model failed.
    """
    batch = check_entities(entities)
    edges = check_relationships(relationships)
    check_collaborator(graph, GraphStore, argument="graph")
    check_optional_collaborators(
        ("embeddings", embeddings, EmbeddingProvider),
        ("vectors", vectors, VectorStore),
        ("event_log", event_log, EventLog),
    )
    source_id = check_name(source_id, argument="source_id")
    check_integer(batch_size, argument="batch_size", minimum=1, maximum=MAX_LIMIT)
    if on_progress is not None and not callable(on_progress):
        raise ValueError(f"on_progress must be callable or None, got {shown(on_progress)}")
    if (embeddings is None) != (vectors is None):
        raise ValueError("embeddings and vectors go together: pass both or neither")
    if embeddings is not None and vectors is not None and embeddings.dimension != vectors.dimension:
        raise DimensionMismatchError(expected=vectors.dimension, actual=embeddings.dimension)

    by_tenant: dict[TenantId, dict[EntityId, Entity]] = {}
    for entity in batch:
        by_tenant.setdefault(entity.tenant_id, {})[entity.id] = entity
    distinct = sum(len(held) for held in by_tenant.values())
    edges_by_tenant: dict[TenantId, list[Relationship]] = {}
    for edge in edges:
        edges_by_tenant.setdefault(edge.tenant_id, []).append(edge)

    records: dict[TenantId, tuple[VectorRecord, ...]] = {}
    embedded = 0
    if embeddings is not None and vectors is not None:
        todo: list[Entity] = []
        for tenant_id, held in by_tenant.items():
            todo.extend(await _needing_vectors(list(held.values()), tenant_id, graph, vectors))
        total = len(todo)
        done: list[VectorRecord] = []
        for start in range(0, total, batch_size):
            done.extend(await embed_entity_names(todo[start : start + batch_size], embeddings))
            if on_progress is not None:
                on_progress(len(done), total)
        if on_progress is not None and not total:
            on_progress(0, 0)
        embedded = len(done)
        for record in done:
            records[record.tenant_id] = (*records.get(record.tenant_id, ()), record)

    now = datetime.now(UTC)
    events: list[Event] = []
    for tenant_id, held in by_tenant.items():
        events.append(
            DocumentExtracted(
                event_id=uuid4(),
                tenant_id=tenant_id,
                source_id=SourceId(source_id),
                occurred_at=now,
                domain=_IMPORT_ORIGIN,
                model=_IMPORT_ORIGIN,
                entities=tuple(held.values()),
                relationships=tuple(edges_by_tenant.pop(tenant_id, ())),
            )
        )
        if embeddings is not None and records.get(tenant_id):
            events.append(
                _vectors_embedded(EntitiesEmbedded, embeddings, tenant_id, now, records[tenant_id])
            )
    if edges_by_tenant:
        stray = next(iter(edges_by_tenant.values()))[0]
        raise ValueError(
            f"relationship {stray.id} belongs to tenant {stray.tenant_id}, "
            "which none of the entities does"
        )

    await record_and_project(events, event_log=event_log, graph=graph, vectors=vectors)
    return ImportReport(
        entities=distinct,
        duplicates=len(batch) - distinct,
        relationships=len(edges),
        embedded=embedded,
        already_embedded=(distinct - embedded) if embeddings is not None else 0,
    )


async def _needing_vectors(
    entities: list[Entity], tenant_id: TenantId, graph: GraphStore, vectors: VectorStore
) -> list[Entity]:
    """The entities whose name the store has no vector for, as the graph holds it."""
    held = {
        entity.id: entity
        for entity in await graph.get_entities([entity.id for entity in entities], tenant_id)
    }
    needing: list[Entity] = []
    for entity in entities:
        stored = held.get(entity.id)
        if (
            stored is not None
            and stored.name == entity.name
            and stored.entity_type == entity.entity_type
            and await vectors.get(entity.id, tenant_id) is not None
        ):
            continue
        needing.append(entity)
    return needing


async def delete_entity(
    entity_id: EntityId,
    tenant_id: TenantId,
    *,
    graph: GraphWriter,
    vectors: VectorWriter | None = None,
    event_log: EventLog | None = None,
) -> bool:
    """Remove an entity from both channels: the graph (with its relationships) and its vector.

    With an `event_log`, an `EntityDeleted` is appended first, so replaying
    the log deletes the entity again instead of bringing it back, and the
    log never lacks what the stores did. It is appended even when neither
    store holds the entity: the writers cannot say so before deleting.
    Without one, the stores alone change, and replaying a log that recorded
    the entity brings it back.

    The id is followed as reads follow it: when `graph` can `resolve`
    (a `MergeResolver`, as every `GraphStore` is), a merged id deletes the
    entity it was merged into, and the event names that entity. The graph
    forgets every id merged into it, so none resolves to it any more; an
    undo of such a merge is refused afterwards (ADR 0057). When `graph`
    lists them (a `MergedIdReader`), the vectors of those ids go too, and
    the event names them, so a replay deletes them as well: one written
    for a merged id after its merge would otherwise outlive the delete.

    The graph goes first, so a failure in between leaves at worst a vector
    whose entity is gone, which retrieval never returns; calling again
    finishes the job. `True` if either store held the entity.

    Raises:
        ValueError: a bad id, or a collaborator that is not the port it
            must be; nothing is deleted or appended.
    """
    check_entity_id(entity_id), check_tenant_id(tenant_id)
    check_collaborator(graph, GraphWriter, argument="graph")
    if vectors is not None:
        check_collaborator(vectors, VectorWriter, argument="vectors")
    if event_log is not None:
        check_collaborator(event_log, EventLog, argument="event_log")
    asked = entity_id
    if isinstance(graph, MergeResolver):
        entity_id = (await graph.resolve([asked], tenant_id))[asked]
    # Read before the graph forgets them: a vector written for a merged id
    # after its merge (a re-embed) goes with the entity too. Only the vector
    # store and the log's event need them.
    needed = vectors is not None or event_log is not None
    merged = (
        await graph.merged_ids(entity_id, tenant_id)
        if needed and isinstance(graph, MergedIdReader)
        else []
    )
    if event_log is not None:
        await event_log.append(
            EntityDeleted(
                event_id=uuid4(),
                tenant_id=tenant_id,
                occurred_at=datetime.now(UTC),
                entity_id=entity_id,
                merged_ids=tuple(merged),
            )
        )
    removed = await graph.delete_entity(entity_id, tenant_id)
    if vectors is not None:
        for each in dict.fromkeys((entity_id, asked, *merged)):
            removed = await vectors.delete(each, tenant_id) or removed
    return removed


class TenantDeletion(BaseModel):
    """What one `delete_tenant` call removed: how many of each the stores held."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: int
    vectors: int
    passages: int
    passage_vectors: int


async def delete_tenant(
    tenant_id: TenantId,
    *,
    graph: GraphPurge,
    vectors: VectorPurge | None = None,
    chunks: ChunkPurge | None = None,
    passage_vectors: VectorPurge | None = None,
    event_log: EventLog | None = None,
) -> TenantDeletion:
    """Remove a whole tenant from every store given: graph, vectors, passages, passage vectors.

    With an `event_log`, a `TenantDeleted` is appended first, so replaying
    the log purges the tenant again after writing its earlier events,
    instead of bringing it back; the log keeps those events (ADR 0106).
    Without one, only the stores change. The graph goes first and each store
    purges in one call, so a failure in between leaves a store the graph no
    longer names, which retrieval never returns; calling again finishes the
    job. Other tenants are never touched.

    Raises:
        ValueError: a bad tenant id, or a collaborator that is not the port
            it must be; nothing is deleted or appended.
    """
    check_tenant_id(tenant_id)
    check_collaborator(graph, GraphPurge, argument="graph")
    check_optional_collaborators(
        ("vectors", vectors, VectorPurge),
        ("chunks", chunks, ChunkPurge),
        ("passage_vectors", passage_vectors, VectorPurge),
        ("event_log", event_log, EventLog),
    )
    if event_log is not None:
        await event_log.append(
            TenantDeleted(event_id=uuid4(), tenant_id=tenant_id, occurred_at=datetime.now(UTC))
        )
    entities = await graph.delete_by_tenant(tenant_id)
    return TenantDeletion(
        entities=entities,
        vectors=0 if vectors is None else await vectors.delete_by_tenant(tenant_id),
        passages=0 if chunks is None else await chunks.delete_by_tenant(tenant_id),
        passage_vectors=(
            0 if passage_vectors is None else await passage_vectors.delete_by_tenant(tenant_id)
        ),
    )
