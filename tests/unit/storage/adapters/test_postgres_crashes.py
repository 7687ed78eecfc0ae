"""The Postgres stores under crashes, hostile text and load, all against a real server."""

from __future__ import annotations

import asyncio
import random
import sys
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from redstring import FakeEmbeddingProvider, Retriever, VectorRecord
from redstring.domain.ids import EntityId
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity
from tests.killing import kill_inside_second_batch

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas

#: Text that would change a statement built by pasting values into SQL.
HOSTILE = (
    "'; DROP TABLE graph_entities; --",
    'x"); DROP SCHEMA public CASCADE; --',
    "' OR '1'='1",
    "$1",
    "\\'",
    "%s %(name)s",
    "名前 ' \u2028 `",
)

# -- injection ---------------------------------------------------------------------


async def test_hostile_names_types_keys_and_queries_are_only_ever_data(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    graph = postgres.graph_store(schema)
    vectors = postgres.vector_store(4, schema)
    entities = [
        make_entity(
            name=f"{text} {index}",
            entity_type=text,
            properties={text: text, "plain": index},
            id=EntityId(UUID(int=index + 1)),
        )
        for index, text in enumerate(HOSTILE)
    ]
    await graph.upsert_entities(entities)
    await vectors.upsert_many(
        [
            VectorRecord(
                entity_id=entity.id,
                tenant_id=TENANT,
                vector=[1.0, float(index), 0.0, 0.0],
                metadata={"entity_type": entity.entity_type, entity.entity_type: 1},
            )
            for index, entity in enumerate(entities)
        ]
    )
    for index, (text, entity) in enumerate(zip(HOSTILE, entities, strict=True)):
        assert await graph.find_entities(TENANT, name=f"{text} {index}") == [entity]
        assert await graph.find_entities(TENANT, entity_type=text) == [entity]
        assert await graph.find_by_blocking_keys([text], TENANT) == {text: []}
        assert entity in await graph.find_name_candidates(f"{text} {index}", TENANT)
        [match] = await vectors.search([1.0, 0, 0, 0], TENANT, k=3, entity_types=[text])
        assert match.entity_id == entity.id
        assert match.metadata == {"entity_type": text, text: 1}
    assert sorted(await graph.get_entities([e.id for e in entities], TENANT), key=str) == sorted(
        entities, key=str
    )
    embeddings = FakeEmbeddingProvider(dimension=4)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    for text in HOSTILE:
        await retriever.retrieve(text, TENANT, k=3)
        await retriever.retrieve(text, OTHER_TENANT, k=3)
    connection = await postgres.connect()
    try:
        tables = await connection.fetchval(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1", schema
        )
        held = await connection.fetchval(f"SELECT count(*) FROM {schema}.graph_entities")
    finally:
        await connection.close()
    assert tables == 10  # meta, six graph tables, three vector tables
    assert held == len(HOSTILE)


# -- a writer killed mid-batch ------------------------------------------------------

WRITER = """
import asyncio, sys
from uuid import UUID
from redstring import (
    ExtractionMethod, Entity, EntityId, PostgresGraphStore, PostgresVectorStore, TenantId,
    VectorRecord,
)

dsn, schema, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tenant = TenantId(UUID(sys.argv[5]))


def entities(number):
    return [
        Entity(
            id=EntityId(UUID(int=number * size + n + 1)), tenant_id=tenant,
            name=f"batch {number} entity {n}", entity_type="thing",
            extraction_method=ExtractionMethod.MANUAL, confidence=1.0,
            properties={"batch": number},
        )
        for n in range(size)
    ]


def records(number):
    return [
        VectorRecord(
            entity_id=EntityId(UUID(int=number * size + n + 1)), tenant_id=tenant,
            vector=[1.0, float(n), float(number), 0.5], metadata={"entity_type": f"b{number}"},
        )
        for n in range(size)
    ]


async def main():
    async with (
        PostgresGraphStore(dsn, schema=schema) as graph,
        PostgresVectorStore(dsn, dimension=4, schema=schema) as vectors,
    ):
        await graph.find_entities(tenant)
        await vectors.search([1.0, 0, 0, 0], tenant)
        for number in range(batches):
            print("writing", number, flush=True)
            await graph.upsert_entities(entities(number))
            await vectors.upsert_many(records(number))
            print("wrote", number, flush=True)

asyncio.run(main())
"""
BATCHES = 6
BATCH_SIZE = 20_000


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_a_writer_killed_mid_batch_leaves_every_batch_whole_or_absent(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    await kill_inside_second_batch(
        WRITER, postgres.dsn, schema, str(BATCHES), str(BATCH_SIZE), str(TENANT), earliest=0.1
    )
    connection = await postgres.connect()
    try:
        for number in range(BATCHES):
            entities = await connection.fetchval(
                f"SELECT count(*) FROM {schema}.graph_entities WHERE body LIKE $1",
                f'%"batch":{number}}}%',
            )
            keys = await connection.fetchval(
                f"SELECT count(*) FROM {schema}.graph_entity_keys AS k "
                f"JOIN {schema}.graph_entities AS e ON e.id = k.entity_id "
                "WHERE e.body LIKE $1",
                f'%"batch":{number}}}%',
            )
            vectors = await connection.fetchval(
                f"SELECT count(*) FROM {schema}.vector_records WHERE entity_type = $1",
                f"b{number}",
            )
            assert entities in (0, BATCH_SIZE), (number, entities)
            assert keys in (0, 3 * BATCH_SIZE), (number, keys)
            assert vectors in (0, BATCH_SIZE), (number, vectors)
            if number == 0:
                assert entities == vectors == BATCH_SIZE
    finally:
        await connection.close()


# -- load -----------------------------------------------------------------------------


async def test_three_hundred_retrieves_during_writes_all_answer(postgres: PostgresSchemas) -> None:
    """300 concurrent retrieves over one pool while a writer keeps changing the tenant."""
    schema = postgres.new_schema()
    graph, vectors = postgres.graph_store(schema), postgres.vector_store(64, schema)
    embeddings = FakeEmbeddingProvider(dimension=64)
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    names = list(dict.fromkeys("".join(rng.choices(letters, k=9)).title() for _ in range(2_200)))[
        :2_000
    ]
    entities = [make_entity(name=name, entity_type="city") for name in names]

    async def write(batch: list) -> None:  # type: ignore[type-arg]
        vectors_of = await embeddings.embed([entity.name for entity in batch])
        await graph.upsert_entities(batch)
        await vectors.upsert_many(
            [
                VectorRecord(
                    entity_id=entity.id,
                    tenant_id=TENANT,
                    vector=vector,
                    metadata={"entity_type": "city"},
                )
                for entity, vector in zip(batch, vectors_of, strict=True)
            ]
        )

    await write(entities[:1_000])
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)

    async def writer() -> None:
        for start in range(1_000, 2_000, 100):
            await write(entities[start : start + 100])

    queries = [rng.choice(names[:1_000]) for _ in range(300)]
    writing = asyncio.create_task(writer())
    results = await asyncio.gather(*(retriever.retrieve(query, TENANT, k=5) for query in queries))
    await writing
    assert len(results) == 300
    for query, result in zip(queries, results, strict=True):
        assert result.matches, query
        assert result.matches[0].entity.name == query
