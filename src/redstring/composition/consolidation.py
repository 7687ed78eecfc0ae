"""The `Consolidator`: one entity per real-world thing, every merge an undoable event.

It composes a `GraphStore`, an `EventLog`, optionally a `VectorStore` and an
`EmbeddingProvider`, and a `MergeAdjudicator` (a model port): `consolidation`
may import none of the store packages and `llm` none of them, so only this
layer can hold them together. See ADR 0027 and ADR 0030.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Final
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

from redstring.consolidation.adjudicator import MergeAdjudicator
from redstring.consolidation.collector import collector_paused
from redstring.consolidation.features import ALIASES_KEY, PropertyKind, profile_of
from redstring.consolidation.forking import can_fork, check_workers
from redstring.consolidation.memo import PassMemo
from redstring.consolidation.names import fold, name_form
from redstring.consolidation.policy import MergeBand, MergePolicy
from redstring.consolidation.resolution import resolve_profiles
from redstring.domain.events import EntitiesMerged, EntityDeleted, MergeUndone
from redstring.domain.exceptions import MergeUndoError, MissingEntityError
from redstring.domain.ids import EntityId, TenantId  # noqa: TC001 - pydantic needs them
from redstring.domain.json_safety import check_text
from redstring.domain.limits import MAX_NAME_LENGTH
from redstring.domain.merging import absorb, check_merge
from redstring.domain.validation import (
    check_collaborator,
    check_entity_id,
    check_entity_ids,
    check_optional_collaborators,
    check_tenant_id,
)
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.event_log import EntityEventReader, EventLog, StoredEvent, entities_named
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore
from redstring.projections.graph import GraphProjection
from redstring.projections.vector import VectorProjection

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.consolidation.features import Profile
    from redstring.consolidation.resolution import Link
    from redstring.domain.entity import Entity
    from redstring.domain.relationship import Relationship
    from redstring.domain.vector import VectorRecord
    from redstring.projections.replay import Projection

#: How many times a pass re-examines the entities its merges changed.
_MAX_ROUNDS: Final = 8

#: How many name candidates a focused pass reads for each name of a focused entity.
_FOCUS_CANDIDATES: Final = 50


@dataclass(frozen=True, slots=True)
class _StoredMerge:
    """A merge as the log holds it: its sequence number and the event."""

    sequence: int
    event: EntitiesMerged


def _as_merge(stored: StoredEvent) -> _StoredMerge | None:
    event = stored.event
    return _StoredMerge(stored.sequence, event) if isinstance(event, EntitiesMerged) else None


class ConsolidationMerge(BaseModel):
    """One merge a pass made (or, in a dry run, would make).

    `event_id` names the `EntitiesMerged` event, the handle for `undo`; it is
    `None` in a dry run. `score` is the weakest link's score (`None` for an
    explicit merge), `reason` says why: each piece of evidence, with the
    values and bits of the identifiers and measures that decided it.
    `canonical_name` and `merged_names` (position for position with
    `merged_ids`) let a person judge it; `band` is the weakest link's band
    (`ask` when the adjudicator decided it, `None` for an explicit merge).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: UUID | None
    canonical_id: EntityId
    merged_ids: tuple[EntityId, ...]
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    reason: str
    canonical_name: str = ""
    merged_names: tuple[str, ...] = ()
    band: MergeBand | None = None


class ConsolidationReport(BaseModel):
    """What one `consolidate` pass did.

    `entities` counts those examined, `candidates` the pairs scored, `asked`
    the pairs sent to the adjudicator and `unanswered` those it gave no
    answer for.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: TenantId
    dry_run: bool
    merges: list[ConsolidationMerge]
    entities: int
    candidates: int
    asked: int
    unanswered: int


def _canonical_first(entities: Sequence[Entity]) -> list[Entity]:
    """The cluster's entities, the one that stands for it first.

    Prefer a full name (not weak, no initials), then the name form the
    cluster uses most, more name tokens and letters, a name written as it
    reads (no title, no "Surname, Given"), more properties, higher
    confidence, and finally the smallest `str(id)`, so the choice never
    depends on input order.
    """
    forms = Counter(name_form(entity.name).text for entity in entities)

    def rank(entity: Entity) -> tuple[bool, bool, int, int, int, bool, int, float, str]:
        form = name_form(entity.name)
        return (
            form.is_weak,
            form.is_abbreviated,
            -forms[form.text],
            -len(form.tokens),
            -form.letters,
            fold(entity.name) != form.text,
            -len(entity.properties),
            -entity.confidence,
            str(entity.id),
        )

    return sorted(entities, key=rank)


def _check_kinds(kinds: object) -> dict[str, PropertyKind]:
    """`kinds` as a dict of property names to kinds; a `ValueError` names a bad entry."""
    if kinds is None:
        return {}
    if not isinstance(kinds, Mapping):
        raise ValueError(f"property_kinds must be a mapping, got {type(kinds).__name__}")
    checked: dict[str, PropertyKind] = {}
    for key, kind in kinds.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"property_kinds keys must be non-empty strings, got {key!r:.40}")
        if not isinstance(kind, PropertyKind):
            raise ValueError(
                f"property_kinds[{key!r:.40}] must be a PropertyKind, got {kind!r:.40}"
            )
        checked[key] = kind
    return checked


def _check_workers(workers: object) -> int:
    """`workers` as a count of processes; a `ValueError` names a bad one."""
    workers = check_workers(workers)
    if workers > 1 and not can_fork():
        raise ValueError(f"workers={workers} needs processes that fork, which this platform lacks")
    return workers


class Consolidator:
    """Finds the entities of a tenant that are one thing, and merges them undoably.

    Every merge is an `EntitiesMerged` event in `event_log`, projected into
    `graph` (and `vectors`), carrying everything `undo` needs to restore the
    entities, relationships and vectors exactly. With `vectors` (or
    `embeddings`), name-vector cosine is evidence too; with `adjudicator`,
    pairs in the middle band are decided by it, and left apart without it.
    `property_kinds` declares what a property is (`{"geonames_id":
    PropertyKind.IDENTIFIER}`), over what the pass would decide from its
    key and values (ADR 0071). `workers` above one scores a large round's
    pairs in that many processes, forked for the round (POSIX only), to the
    merges one process makes (ADR 0117).

    Raises:
        ValueError: `vectors` and `embeddings` disagree on the dimension,
            `property_kinds` is not a mapping of property names to kinds, or
            `workers` is not a whole number from 1 to `MAX_WORKERS` (or is
            above 1 where processes cannot fork).
    """

    def __init__(
        self,
        *,
        graph: GraphStore,
        event_log: EventLog,
        vectors: VectorStore | None = None,
        embeddings: EmbeddingProvider | None = None,
        adjudicator: MergeAdjudicator | None = None,
        policy: MergePolicy | None = None,
        property_kinds: Mapping[str, PropertyKind] | None = None,
        workers: int = 1,
    ) -> None:
        check_collaborator(graph, GraphStore, argument="graph")
        check_collaborator(event_log, EventLog, argument="event_log")
        check_optional_collaborators(
            ("vectors", vectors, VectorStore),
            ("embeddings", embeddings, EmbeddingProvider),
            ("adjudicator", adjudicator, MergeAdjudicator),
        )
        if policy is not None and not isinstance(policy, MergePolicy):
            raise ValueError(f"policy must be a MergePolicy, got {type(policy).__name__}")
        self._kinds = _check_kinds(property_kinds)
        self._workers = _check_workers(workers)
        if (
            vectors is not None
            and embeddings is not None
            and vectors.dimension != embeddings.dimension
        ):
            raise ValueError(
                f"vectors hold dimension {vectors.dimension} but embeddings give "
                f"{embeddings.dimension}"
            )
        self._graph = graph
        self._log = event_log
        self._index = event_log if isinstance(event_log, EntityEventReader) else None
        self._vectors = vectors
        self._embeddings = embeddings
        self._adjudicator = adjudicator
        self._policy = policy or MergePolicy()
        self._projections: list[Projection] = [GraphProjection(graph)]
        if vectors is not None:
            self._projections.append(VectorProjection(vectors))

    async def consolidate(
        self,
        tenant_id: TenantId,
        *,
        entity_ids: Sequence[EntityId] | None = None,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Merge the tenant's entities that are one thing; one corpus-level pass.

        With `entity_ids`, only pairs with one of them (after following
        merges) are considered, against candidates from the whole tenant.
        Deterministic, and idempotent: a merge gives its canonical entity new
        names and properties, so the pass compares the canonical entities it
        changed again, then the whole tenant once more, until nothing more
        merges (at most eight rounds); a second pass merges nothing new. A
        dry run reports the first round's merges and writes nothing.

        Raises:
            ValueError: `entity_ids` is not a sequence of ids.
        """
        check_tenant_id(tenant_id)
        if not isinstance(dry_run, bool):
            raise ValueError(
                f"dry_run must be a bool, got {type(dry_run).__name__} {dry_run!r:.40}"
            )
        focus: set[EntityId] | None = None
        if entity_ids is not None:
            requested = list(check_entity_ids(entity_ids))
            focus = set((await self._graph.resolve(requested, tenant_id)).values())
        # The whole pass pauses the cyclic collector; an adjudicator's wait does not (ADR 0110).
        with collector_paused():
            return await self._rounds(tenant_id, focus, dry_run=dry_run)

    async def _rounds(
        self, tenant_id: TenantId, focus: set[EntityId] | None, *, dry_run: bool
    ) -> ConsolidationReport:
        """Round after round until nothing more merges (see `consolidate`)."""
        merges: list[ConsolidationMerge] = []
        totals = {"entities": 0, "candidates": 0, "asked": 0, "unanswered": 0}
        whole_tenant = focus is None
        # Each held entity with its profile, and its id as text: the order of a whole round.
        held: dict[EntityId, tuple[str, Entity, Profile]] = {}
        memo = PassMemo()
        for _ in range(_MAX_ROUNDS):
            if whole_tenant and held:
                ordered = sorted(held.values(), key=itemgetter(0))
                population = [entity for _, entity, _ in ordered]
                profiles = [profile for _, _, profile in ordered]
            else:
                population = await self._population(tenant_id, None if whole_tenant else focus)
                profiles = await self._profiles(population, tenant_id)
                held = {e.id: (str(e.id), e, p) for e, p in zip(population, profiles, strict=True)}
            resolution = await resolve_profiles(
                population,
                profiles,
                policy=self._policy,
                adjudicator=self._adjudicator,
                focus=focus,
                property_kinds=self._kinds,
                memo=memo,
                workers=self._workers,
            )
            totals["entities"] = max(totals["entities"], len(population))
            totals["candidates"] += resolution.candidates
            totals["asked"] += resolution.asked
            totals["unanswered"] += resolution.unanswered
            cluster_of = {i: n for n, cluster in enumerate(resolution.clusters) for i in cluster}
            links: list[list[Link]] = [[] for _ in resolution.clusters]
            for link in resolution.links:
                links[cluster_of[link.left]].append(link)
            changed: set[EntityId] = set()
            for cluster, cluster_links in zip(resolution.clusters, links, strict=True):
                merge = await self._record_cluster(
                    tenant_id, [population[i] for i in cluster], cluster_links, dry_run=dry_run
                )
                merges.append(merge)
                changed.add(merge.canonical_id)
                for entity_id in merge.merged_ids:
                    held.pop(entity_id, None)
            if dry_run or (not changed and (focus is None or not whole_tenant)):
                break
            # Merges free candidate slots and shift value frequencies, so a
            # focused round that merged nothing is confirmed by a whole one.
            focus = changed or None
            if whole_tenant:
                fresh = await self._graph.get_entities(sorted(changed, key=str), tenant_id)
                for entity, profile in zip(
                    fresh, await self._profiles(fresh, tenant_id), strict=True
                ):
                    held[entity.id] = (str(entity.id), entity, profile)
        return ConsolidationReport(tenant_id=tenant_id, dry_run=dry_run, merges=merges, **totals)

    async def merge(
        self,
        tenant_id: TenantId,
        canonical_id: EntityId,
        merged_ids: Sequence[EntityId],
        *,
        reason: str,
    ) -> ConsolidationMerge:
        """Merge `merged_ids` into `canonical_id` because `reason`, as one event.

        Raises:
            ValueError: `merged_ids` is empty, repeats an id or holds
                `canonical_id`, or `reason` is blank.
            MissingEntityError: an entity is not held by the tenant (a merged
                id already merged away counts as not held). Nothing is written.
        """
        check_tenant_id(tenant_id)
        check_entity_id(canonical_id, argument="canonical_id")
        merged = check_merge(canonical_id, check_entity_ids(merged_ids, argument="merged_ids"))
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_NAME_LENGTH:
            raise ValueError(
                f"reason must be a non-blank string of at most {MAX_NAME_LENGTH} characters, "
                f"got {reason!r:.60}"
            )
        check_text(reason, field="reason")
        ids = [canonical_id, *merged]
        resolved = await self._graph.resolve(ids, tenant_id)
        held = {e.id: e for e in await self._graph.get_entities(ids, tenant_id)}
        for entity_id in ids:
            if resolved[entity_id] != entity_id or entity_id not in held:
                raise MissingEntityError(entity_id=entity_id, tenant_id=tenant_id)
        return await self._write_merge(
            tenant_id, held[canonical_id], [held[i] for i in merged], score=None, reason=reason
        )

    async def undo(self, tenant_id: TenantId, merge_event_id: UUID) -> UUID:
        """Undo the merge `merge_event_id`; return the `MergeUndone` event's id.

        Restores the canonical entity, the merged entities, every relationship
        that touched them and their vectors exactly as they were before the
        merge. Undo newest first: a merge that a later, still standing merge
        built on is refused.

        Raises:
            ValueError: `merge_event_id` is not a UUID.
            MergeUndoError: the tenant's log holds no such merge, it is
                undone already, or a later standing merge touches its entities.
        """
        check_tenant_id(tenant_id)
        if not isinstance(merge_event_id, UUID):
            raise ValueError(
                f"merge_event_id must be a UUID, got {type(merge_event_id).__name__} "
                f"{merge_event_id!r:.60}"
            )
        target, later = await self._merge_and_later(tenant_id, merge_event_id)

        def refuse(reason: str) -> MergeUndoError:
            return MergeUndoError(merge_event_id=merge_event_id, tenant_id=tenant_id, reason=reason)

        if target is None:
            raise refuse("the log names no merge of this tenant with that id")
        undone = {s.event.merge_event_id for s in later if isinstance(s.event, MergeUndone)}
        if merge_event_id in undone:
            raise refuse("it is undone already")
        for stored in later:
            if isinstance(stored.event, EntitiesMerged) and stored.event.event_id not in undone:
                raise refuse(
                    f"merge {stored.event.event_id} came later and touches its entities: "
                    "undo it first"
                )
            if isinstance(stored.event, EntityDeleted):
                raise refuse(f"entity {stored.event.entity_id} was deleted after it")
        event = target.event
        # The log's word is checked against the graph's: a delete made
        # without the log, or through an id merged into these, shows here.
        touched = [event.canonical_id, *event.merged_ids]
        resolved = await self._graph.resolve(touched, tenant_id)
        held = {e.id for e in await self._graph.get_entities([event.canonical_id], tenant_id)}
        if event.canonical_id not in held or any(
            resolved[entity_id] != event.canonical_id for entity_id in touched
        ):
            raise refuse("its entities are no longer merged as it left them: deleted since")
        undo = MergeUndone(
            event_id=uuid4(),
            tenant_id=tenant_id,
            occurred_at=datetime.now(UTC),
            merge_event_id=merge_event_id,
            canonical_id=event.canonical_id,
            merged_ids=event.merged_ids,
            entities=event.before,
            relationships=await self._restorable(event, tenant_id),
            vectors=event.vectors,
        )
        await self._append_and_project(undo)
        return undo.event_id

    async def _merge_and_later(
        self, tenant_id: TenantId, merge_event_id: UUID
    ) -> tuple[_StoredMerge | None, list[StoredEvent]]:
        """The merge `merge_event_id` and the later events naming its entities, in order.

        Read from the log's index when it has one (`EntityEventReader`), so
        an undo costs what it touches, not the tenant's whole log (ADR 0058).
        """
        index = self._index
        if index is not None:
            found = await index.read_events([merge_event_id], tenant_id=tenant_id)
            target = _as_merge(found[0]) if found else None
            if target is None:
                return None, []
            touched = [target.event.canonical_id, *target.event.merged_ids]
            later = await index.read_naming(touched, tenant_id=tenant_id, after=target.sequence)
            return target, later
        stored = await self._log.read(tenant_id=tenant_id)
        target = next(
            (
                merge
                for each in stored
                if (merge := _as_merge(each)) is not None and merge.event.event_id == merge_event_id
            ),
            None,
        )
        if target is None:
            return None, []
        touched_set = {target.event.canonical_id, *target.event.merged_ids}
        return target, [
            each
            for each in stored
            if each.sequence > target.sequence and touched_set & set(entities_named(each.event))
        ]

    async def _restorable(
        self, event: EntitiesMerged, tenant_id: TenantId
    ) -> tuple[Relationship, ...]:
        """The merge's relationships as an undo can write them back now.

        An end outside the merge follows merges made since; a relationship
        whose other end the tenant no longer holds (deleted since) stays gone.
        """
        ours = {event.canonical_id, *event.merged_ids}
        others = sorted(
            {
                end
                for r in event.relationships
                for end in (r.source_entity_id, r.target_entity_id)
                if end not in ours
            },
            key=str,
        )
        if not others:
            return event.relationships
        resolved = await self._graph.resolve(others, tenant_id)
        held = {e.id for e in await self._graph.get_entities(others, tenant_id)}

        def end(entity_id: EntityId) -> EntityId | None:
            if entity_id in ours:
                return entity_id
            target = resolved[entity_id]
            return target if target in held else None

        kept: list[Relationship] = []
        for relationship in event.relationships:
            source, target = end(relationship.source_entity_id), end(relationship.target_entity_id)
            if source is not None and target is not None:
                kept.append(
                    relationship.model_copy(
                        update={"source_entity_id": source, "target_entity_id": target}
                    )
                )
        return tuple(kept)

    # -- the pass's inputs -----------------------------------------------------

    async def _population(self, tenant_id: TenantId, focus: set[EntityId] | None) -> list[Entity]:
        """Every entity a pass compares, ordered by `str(id)`.

        With `focus`, the focused entities and the name candidates of each of
        their names and aliases, of the same entity type (never the type key).
        """
        if focus is None:
            return await self._graph.find_entities(tenant_id)
        found = {e.id: e for e in await self._graph.get_entities(sorted(focus, key=str), tenant_id)}
        for entity in list(found.values()):
            aliases = entity.properties.get(ALIASES_KEY)
            names = [entity.name, *(aliases if isinstance(aliases, list) else [])]
            entity_type = fold(entity.entity_type)
            for name in names:
                if not isinstance(name, str) or not name.strip():
                    continue
                for candidate in await self._graph.find_name_candidates(
                    name, tenant_id, limit=_FOCUS_CANDIDATES
                ):
                    if fold(candidate.entity_type) == entity_type:
                        found.setdefault(candidate.id, candidate)
        return sorted(found.values(), key=lambda entity: str(entity.id))

    async def _profiles(self, entities: Sequence[Entity], tenant_id: TenantId) -> list[Profile]:
        neighbours = await self._neighbour_names(entities, tenant_id)
        vectors = await self._vectors_of(entities, tenant_id)
        return [
            profile_of(entity, neighbours=names, vector=vector)
            for entity, names, vector in zip(entities, neighbours, vectors, strict=True)
        ]

    async def _neighbour_names(
        self, entities: Sequence[Entity], tenant_id: TenantId
    ) -> list[list[str]]:
        return [
            [n.name for n in await self._graph.neighbors(entity.id, tenant_id)]
            for entity in entities
        ]

    async def _vectors_of(
        self, entities: Sequence[Entity], tenant_id: TenantId
    ) -> list[list[float] | None]:
        vectors: list[list[float] | None] = [None] * len(entities)
        if self._vectors is not None:
            for index, entity in enumerate(entities):
                record = await self._vectors.get(entity.id, tenant_id)
                vectors[index] = None if record is None else list(record.vector)
        missing = [index for index, vector in enumerate(vectors) if vector is None]
        if self._embeddings is not None and missing:
            embedded = await self._embeddings.embed([entities[i].name for i in missing])
            for index, vector in zip(missing, embedded, strict=True):
                vectors[index] = vector
        return vectors

    # -- writing merges --------------------------------------------------------

    async def _record_cluster(
        self,
        tenant_id: TenantId,
        cluster: Sequence[Entity],
        links: Sequence[Link],
        *,
        dry_run: bool,
    ) -> ConsolidationMerge:
        canonical, *merged = _canonical_first(cluster)
        weakest = min(links, key=lambda link: (link.score, link.left, link.right))
        reason = (
            weakest.reason
            if len(links) == 1
            else f"{len(links)} links, the weakest: {weakest.reason}"
        )
        if dry_run:
            return ConsolidationMerge(
                event_id=None,
                canonical_id=canonical.id,
                merged_ids=tuple(entity.id for entity in merged),
                score=weakest.score,
                reason=reason,
                canonical_name=canonical.name,
                merged_names=tuple(entity.name for entity in merged),
                band=weakest.band,
            )
        return await self._write_merge(
            tenant_id, canonical, merged, score=weakest.score, reason=reason, band=weakest.band
        )

    async def _write_merge(
        self,
        tenant_id: TenantId,
        canonical: Entity,
        merged: Sequence[Entity],
        *,
        score: float | None,
        reason: str,
        band: MergeBand | None = None,
    ) -> ConsolidationMerge:
        relationships: dict[UUID, Relationship] = {}
        for entity in merged:
            for relationship in await self._graph.get_relationships(entity.id, tenant_id):
                relationships.setdefault(relationship.id, relationship)
        vectors: list[VectorRecord] = []
        if self._vectors is not None:
            for entity in merged:
                record = await self._vectors.get(entity.id, tenant_id)
                if record is not None:
                    vectors.append(record)
        event = EntitiesMerged(
            event_id=uuid4(),
            tenant_id=tenant_id,
            occurred_at=datetime.now(UTC),
            canonical=absorb(canonical, merged),
            merged_ids=tuple(entity.id for entity in merged),
            score=score,
            reason=reason,
            before=(canonical, *merged),
            relationships=tuple(sorted(relationships.values(), key=lambda r: str(r.id))),
            vectors=tuple(vectors),
        )
        await self._append_and_project(event)
        return ConsolidationMerge(
            event_id=event.event_id,
            canonical_id=canonical.id,
            merged_ids=event.merged_ids,
            score=score,
            reason=reason,
            canonical_name=canonical.name,
            merged_names=tuple(entity.name for entity in merged),
            band=band,
        )

    async def _append_and_project(self, event: EntitiesMerged | MergeUndone) -> None:
        await self._log.append(event)
        for projection in self._projections:
            await projection.apply(event)
