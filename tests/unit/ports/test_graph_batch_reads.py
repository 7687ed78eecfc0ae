"""`read_relationships` and `read_merged_ids`: one batch read where offered, else one per id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.walk import walk
from redstring.ports.graph_batches import MergedIdBatchReader, RelationshipBatchReader
from redstring.ports.graph_reads import read_merged_ids, read_relationships
from redstring.ports.graph_store import GraphReader, MergedIdReader
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship


class OneAtATime:
    """A graph store's `GraphReader` and `MergedIdReader` methods only: no batch reads."""

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name not in {*GraphReader.__protocol_attrs__, *MergedIdReader.__protocol_attrs__}:  # type: ignore[attr-defined]
            raise AttributeError(name)
        return getattr(self._inner, name)


class Counting(InMemoryGraphStore):
    """The in-memory store, counting its relationship reads."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.singles = 0

    async def relationships_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        self.batches.append(len(entity_ids))
        return await super().relationships_of(entity_ids, tenant_id)

    async def get_relationships(
        self, entity_id: EntityId, tenant_id: TenantId, *, relationship_type: str | None = None
    ) -> list[Relationship]:
        self.singles += 1
        return await super().get_relationships(
            entity_id, tenant_id, relationship_type=relationship_type
        )


async def star(graph: InMemoryGraphStore) -> list[Entity]:
    """Ann joined to Bob, Cid and Dee, Bob to Cid; the same ids elsewhere, joined otherwise."""
    people = [make_entity(name=name) for name in ("Ann", "Bob", "Cid", "Dee")]
    theirs = [make_entity(id=person.id, tenant_id=OTHER_TENANT) for person in people]
    await graph.upsert_entities([*people, *theirs])
    ann, bob, cid, dee = people
    await graph.upsert_relationships(
        [make_relationship(ann, other) for other in (bob, cid, dee)]
        + [make_relationship(bob, cid), make_relationship(theirs[2], theirs[3])]
    )
    return people


async def test_without_batch_reads_each_id_is_read_alone_and_answers_the_same() -> None:
    graph = InMemoryGraphStore()
    ann, bob, cid, dee = await star(graph)
    await graph.merge_entities(ann, [dee.id])
    alone = OneAtATime(graph)
    assert not isinstance(alone, RelationshipBatchReader)
    assert not isinstance(alone, MergedIdBatchReader)
    ids = [cid.id, ann.id, cid.id, bob.id]
    assert await read_relationships(cast("GraphReader", alone), ids, TENANT) == (
        await graph.relationships_of(ids, TENANT)
    )
    assert await read_merged_ids(cast("MergedIdReader", alone), ids, TENANT) == (
        await graph.merged_ids_of(ids, TENANT)
    )
    assert (await read_merged_ids(graph, ids, TENANT))[ann.id] == [dee.id]


async def test_a_walk_reads_each_hops_relationships_in_one_call_and_walks_as_before() -> None:
    graph = Counting()
    ann, *_ = await star(graph)

    async def walked(reader: Any) -> tuple[dict[EntityId, float], set[Any]]:
        found = await walk(
            reader,
            TENANT,
            {ann.id: 1.0},
            edge_weight=lambda kind, forward: 1.0,
            depth=3,
            decay=0.5,
            frontier=10,
        )
        return found.scores, set(found.relationships)

    batched = await walked(graph)
    # Hop 1 reads Ann; hop 2 her three neighbours at once; hop 3 has nothing new to read.
    assert (graph.batches, graph.singles) == ([1, 3], 0)
    assert await walked(OneAtATime(graph)) == batched
    assert graph.singles == 4


async def test_without_batch_reads_a_bad_id_is_refused_by_name() -> None:
    alone = OneAtATime(InMemoryGraphStore())
    for read in (read_relationships, read_merged_ids):
        with pytest.raises(ValueError, match=r"^entity_ids\[1\] must be an EntityId"):
            await read(alone, [make_entity().id, ["not", "an", "id"]], TENANT)  # type: ignore[list-item]
