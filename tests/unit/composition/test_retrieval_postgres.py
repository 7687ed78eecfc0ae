"""Retrieval over the Postgres stores answers exactly as over the in-memory stores."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, uuid5

from redstring import (
    Entity,
    EntityId,
    FakeEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
)
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas

CITIES = Path(__file__).resolve().parents[3] / "docs" / "examples" / "data" / "cities.jsonl"
DIMENSION = 384


def _cities(tenant: TenantId, count: int) -> list[Entity]:
    """The first `count` sample cities as entities of `tenant`, ids fixed by name alone."""
    rows = [json.loads(line) for line in CITIES.read_text(encoding="utf-8").splitlines()[:count]]
    return [
        make_entity(
            id=EntityId(uuid5(NAMESPACE_URL, row["name"])),
            tenant_id=tenant,
            name=row["name"],
            entity_type=row["entity_type"],
            properties=row["properties"],
        )
        for row in rows
    ]


def _misspell(name: str, rng: random.Random) -> str:
    if len(name) < 4:
        return name
    position = rng.randrange(1, len(name) - 1)
    return name[:position] + name[position + 1 :]


async def test_postgres_and_memory_stores_give_identical_results(postgres: PostgresSchemas) -> None:
    """Thirty misspelled queries, every mode, with and without a type filter.

    The same 400 cities sit in two tenants under the same ids, so a store
    that keyed on the id alone would answer differently (seen red with the
    Postgres key lookup's tenant condition dropped).
    """
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    memory_graph, memory_vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=DIMENSION)
    schema = postgres.new_schema()
    async with (
        postgres.graph_store(schema) as postgres_graph,
        postgres.vector_store(DIMENSION, schema) as postgres_vectors,
    ):
        names: list[str] = []
        # The other tenant is written first, and its copies differ, so a row
        # leaking across tenants would come first and be seen.
        for tenant in (OTHER_TENANT, TENANT):
            entities = _cities(tenant, 400)
            if tenant == OTHER_TENANT:
                entities = [
                    entity.model_copy(update={"description": "other"}) for entity in entities
                ]
            names = [entity.name for entity in entities]
            vectors = await embeddings.embed(names)
            records = [
                VectorRecord(
                    entity_id=entity.id,
                    tenant_id=tenant,
                    vector=vector,
                    metadata={"entity_type": entity.entity_type},
                )
                for entity, vector in zip(entities, vectors, strict=True)
            ]
            for graph, store in (
                (memory_graph, memory_vectors),
                (postgres_graph, postgres_vectors),
            ):
                await graph.upsert_entities(entities)
                await store.upsert_many(records)
        memory = Retriever(embeddings=embeddings, vectors=memory_vectors, graph=memory_graph)
        on_postgres = Retriever(
            embeddings=embeddings, vectors=postgres_vectors, graph=postgres_graph
        )
        rng = random.Random(5)
        queries = [_misspell(name, rng) for name in rng.sample(names, 30)]
        compared = 0
        for tenant in (TENANT, OTHER_TENANT):
            for query in queries:
                for mode in RetrievalMode:
                    for entity_types in (None, ["city"], ["town"]):
                        expected = await memory.retrieve(
                            query, tenant, k=7, mode=mode, entity_types=entity_types
                        )
                        actual = await on_postgres.retrieve(
                            query, tenant, k=7, mode=mode, entity_types=entity_types
                        )
                        assert actual == expected, (tenant, query, mode, entity_types)
                        compared += len(actual.matches)
        assert compared > 1_000  # the comparison covered real results, not empty ones


async def test_a_fresh_schema_answers_like_an_empty_memory_store(postgres: PostgresSchemas) -> None:
    embeddings = FakeEmbeddingProvider(dimension=DIMENSION)
    schema = postgres.new_schema()
    async with (
        postgres.graph_store(schema) as graph,
        postgres.vector_store(DIMENSION, schema) as vectors,
    ):
        result = await Retriever(embeddings=embeddings, vectors=vectors, graph=graph).retrieve(
            "Oslo", TENANT
        )
    assert result.matches == []
