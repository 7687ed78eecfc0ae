"""No read of one tenant ever returns another's data, under any sequence of writes.

A hypothesis state machine drives every store adapter at once (the
in-memory and SQLite graph and vector stores, and a `Retriever` over each
pair) with two tenants that share the same small pool of entity ids and
names, so every write collides with the other tenant's data on id, name
and blocking keys at once. After each step, every read of each tenant is
compared with a model kept by the test: same entities, and none of the
other tenant's.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from redstring import (
    Entity,
    EntityId,
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    SqliteGraphStore,
    SqliteVectorStore,
    TenantId,
)
from redstring.domain.blocking import query_blocking_keys
from redstring.testing.factories import make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Coroutine

DIMENSION = 16
TENANTS = (
    TenantId(UUID("00000000-0000-4000-8000-0000000000a1")),
    TenantId(UUID("00000000-0000-4000-8000-0000000000a2")),
)
#: Both tenants draw from these, so ids and names always collide across them.
IDS = tuple(EntityId(UUID(int=n)) for n in range(1, 5))
NAMES = ("Ada Lovelace", "Ada Lovelock", "Charles Babbage")
TYPES = ("person", "ship")

tenants = st.sampled_from(TENANTS)
ids = st.sampled_from(IDS)


class TenantsNeverCross(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.folder = tempfile.TemporaryDirectory()
        path = Path(self.folder.name) / "store.db"
        self.embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
        self.graphs: list[Any] = [InMemoryGraphStore(), SqliteGraphStore(path)]
        self.vectors: list[Any] = [
            InMemoryVectorStore(dimension=DIMENSION),
            SqliteVectorStore(path, dimension=DIMENSION),
        ]
        self.retrievers = [
            Retriever(embeddings=self.embeddings, vectors=vectors, graph=graph)
            for graph, vectors in zip(self.graphs, self.vectors, strict=True)
        ]
        self.entities: dict[tuple[TenantId, EntityId], Entity] = {}
        self.vectored: set[tuple[TenantId, EntityId]] = set()
        self.linked: dict[tuple[TenantId, EntityId], set[EntityId]] = {}

    def run[T](self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        for store in (*self.graphs, *self.vectors):
            self.run(store.close())
        self.loop.close()
        self.folder.cleanup()

    # -- writes ----------------------------------------------------------------

    @rule(
        tenant=tenants,
        entity_id=ids,
        name=st.sampled_from(NAMES),
        entity_type=st.sampled_from(TYPES),
        embed=st.booleans(),
    )
    def write_entity(
        self, tenant: TenantId, entity_id: EntityId, name: str, entity_type: str, embed: bool
    ) -> None:
        entity = make_entity(id=entity_id, tenant_id=tenant, name=name, entity_type=entity_type)
        for graph in self.graphs:
            self.run(graph.upsert_entity(entity))
        self.entities[tenant, entity_id] = entity
        if embed:
            [vector] = self.run(self.embeddings.embed([name]))
            for vectors in self.vectors:
                self.run(
                    vectors.upsert(entity_id, vector, tenant, metadata={"entity_type": entity_type})
                )
            self.vectored.add((tenant, entity_id))

    @rule(tenant=tenants, source=ids, end=ids)
    def link(self, tenant: TenantId, source: EntityId, end: EntityId) -> None:
        if (tenant, source) not in self.entities or (tenant, end) not in self.entities:
            return
        relationship = make_relationship(self.entities[tenant, source], self.entities[tenant, end])
        for graph in self.graphs:
            self.run(graph.upsert_relationship(relationship))
        self.linked.setdefault((tenant, source), set()).add(end)
        self.linked.setdefault((tenant, end), set()).add(source)

    @rule(tenant=tenants, entity_id=ids)
    def delete_vector(self, tenant: TenantId, entity_id: EntityId) -> None:
        held = (tenant, entity_id) in self.vectored
        for vectors in self.vectors:
            assert self.run(vectors.delete(entity_id, tenant)) is held
        self.vectored.discard((tenant, entity_id))

    @rule(tenant=tenants)
    def delete_tenant(self, tenant: TenantId) -> None:
        held = sum(1 for owner, _ in self.entities if owner == tenant)
        for graph in self.graphs:
            assert self.run(graph.delete_by_tenant(tenant)) == held
        for vectors in self.vectors:
            self.run(vectors.delete_by_tenant(tenant))
        self.entities = {key: value for key, value in self.entities.items() if key[0] != tenant}
        self.vectored = {key for key in self.vectored if key[0] != tenant}
        self.linked = {key: value for key, value in self.linked.items() if key[0] != tenant}

    # -- reads -----------------------------------------------------------------

    def held(self, tenant: TenantId) -> list[Entity]:
        return sorted(
            (entity for (owner, _), entity in self.entities.items() if owner == tenant),
            key=lambda entity: str(entity.id),
        )

    @invariant()
    def graph_reads_see_only_their_tenant(self) -> None:
        for tenant in TENANTS:
            expected = self.held(tenant)
            for graph in self.graphs:
                assert self.run(graph.find_entities(tenant)) == expected
                found = self.run(graph.get_entities(list(IDS), tenant))
                assert sorted(found, key=lambda entity: str(entity.id)) == expected
                for name in NAMES:
                    keys = query_blocking_keys(name)
                    for group in self.run(graph.find_by_blocking_keys(keys, tenant)).values():
                        for entity in group:
                            assert self.entities[tenant, entity.id] == entity
                for entity_id in IDS:
                    assert self.run(graph.get_entity(entity_id, tenant)) == self.entities.get(
                        (tenant, entity_id)
                    )
                    near = self.run(graph.neighbors(entity_id, tenant))
                    assert {entity.id for entity in near} == self.linked.get(
                        (tenant, entity_id), set()
                    ) - {entity_id}
                    for entity in near:
                        assert entity.tenant_id == tenant

    @invariant()
    def vector_searches_see_only_their_tenant(self) -> None:
        [query] = self.run(self.embeddings.embed([NAMES[0]]))
        for tenant in TENANTS:
            expected = {entity_id for owner, entity_id in self.vectored if owner == tenant}
            for vectors in self.vectors:
                matches = self.run(vectors.search(query, tenant, k=len(IDS) + 1))
                assert {match.entity_id for match in matches} == expected

    @invariant()
    def retrieval_sees_only_its_tenant(self) -> None:
        for tenant in TENANTS:
            for retriever in self.retrievers:
                for mode in RetrievalMode:
                    result = self.run(retriever.retrieve(NAMES[0], tenant, mode=mode))
                    for match in result.matches:
                        assert match.entity == self.entities[tenant, match.entity.id]


TenantsNeverCross.TestCase.settings = settings(
    max_examples=15,
    stateful_step_count=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_tenants_never_cross = TenantsNeverCross.TestCase
