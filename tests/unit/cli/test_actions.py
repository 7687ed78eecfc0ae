"""The commands' actions, called directly: async functions over the in-memory stores.

No click and no `--db` here: each action takes the stores and the checked
arguments, and returns data the command renders.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import pytest

from redstring import (
    FakeEmbeddingProvider,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
)
from redstring.cli import actions
from redstring.cli.export import Scope, write_jsonl
from redstring.cli.rows import Rows
from redstring.cli.stores import CommandError
from redstring.domain.ids import EntityId
from tests.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from redstring.domain.entity import Entity


async def held(*entities: Entity) -> InMemoryGraphStore:
    graph = InMemoryGraphStore()
    await graph.upsert_entities(list(entities))
    return graph


async def test_import_rows_writes_entities_relationships_and_vectors() -> None:
    ada, babbage = make_entity(name="Ada"), make_entity(name="Babbage")
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=8)
    log = InMemoryEventLog()
    rows = Rows("people.csv", [ada, babbage], [make_relationship(ada, babbage)])

    report = await actions.import_rows(
        rows,
        graph=graph,
        embeddings=FakeEmbeddingProvider(dimension=8),
        vectors=vectors,
        events=log,
    )

    assert (report.entities, report.relationships, report.embedded) == (2, 1, 2)
    assert {each.name for each in await graph.find_entities(TENANT)} == {"Ada", "Babbage"}
    assert await vectors.get(ada.id, TENANT) is not None
    assert await log.read(tenant_id=TENANT)


async def test_search_without_vectors_ranks_by_name_and_says_so() -> None:
    graph = await held(make_entity(name="Ada Lovelace"), make_entity(name="Charles Babbage"))
    notes: list[str] = []

    matches = await actions.search(
        "Ada Lovelace",
        TENANT,
        graph=graph,
        embeddings=None,
        vectors=None,
        k=1,
        mode=RetrievalMode.HYBRID,
        say=notes.append,
    )

    assert [(match["rank"], match["name"]) for match in matches] == [(1, "Ada Lovelace")]
    assert matches[0]["semantic"] is None
    assert notes == ["no vectors in this database: searching the lexical channel only"]


async def test_search_says_when_the_tenant_or_a_type_holds_nothing() -> None:
    graph = await held(make_entity(name="Ada", tenant_id=OTHER_TENANT), make_entity(name="Ada"))
    notes: list[str] = []
    await actions.search(
        "Ada", TENANT, graph=graph, embeddings=None, vectors=None, k=3,
        mode=RetrievalMode.LEXICAL, types=["ship"], tenant="t", say=notes.append,
    )  # fmt: skip
    await actions.search(
        "Ada", TENANT, graph=InMemoryGraphStore(), embeddings=None, vectors=None, k=3,
        mode=RetrievalMode.LEXICAL, tenant="t", location="here", say=notes.append,
    )  # fmt: skip
    assert notes == [
        "tenant 't' holds no entity of type 'ship'",
        "tenant 't' holds no entities in here",
    ]


async def test_search_with_vectors_ranks_both_channels() -> None:
    ada = make_entity(name="Ada Lovelace")
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=8)
    embeddings = FakeEmbeddingProvider(dimension=8)
    await actions.import_rows(
        Rows("x", [ada]), graph=graph, embeddings=embeddings, vectors=vectors, events=None
    )
    matches = await actions.search(
        "Ada Lovelace", TENANT, graph=graph, embeddings=embeddings, vectors=vectors, k=1,
        mode=RetrievalMode.HYBRID,
    )  # fmt: skip
    assert matches[0]["id"] == str(ada.id)
    assert matches[0]["semantic"] is not None
    assert matches[0]["lexical"] is not None


async def test_search_says_when_a_vector_match_the_graph_lacks_is_left_out() -> None:
    ada, ghost = make_entity(name="Ada Lovelace"), make_entity(name="Ada Lovelace")
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=8)
    embeddings = FakeEmbeddingProvider(dimension=8)
    await actions.import_rows(
        Rows("x", [ada, ghost]), graph=graph, embeddings=embeddings, vectors=vectors, events=None
    )
    await graph.delete_entity(ghost.id, TENANT)
    notes: list[str] = []
    matches = await actions.search(
        "Ada Lovelace", TENANT, graph=graph, embeddings=embeddings, vectors=vectors, k=2,
        mode=RetrievalMode.SEMANTIC, say=notes.append,
    )  # fmt: skip
    assert [match["id"] for match in matches] == [str(ada.id)]
    assert notes == [
        "1 vector match(es) left out: the graph does not hold their entities "
        "(it lags the vectors; `redstring stats` counts both)"
    ]


async def test_resolve_takes_an_id_or_the_one_entity_of_a_name() -> None:
    ada = make_entity(name="Ada")
    twins = [make_entity(name="Twin", entity_type=kind) for kind in ("person", "ship")]
    graph = await held(ada, *twins, make_entity(name="Ada", tenant_id=OTHER_TENANT))

    assert await actions.resolve(graph, TENANT, str(ada.id)) == ada.id
    assert await actions.resolve(graph, TENANT, "Ada") == ada.id
    assert await actions.resolve_all(graph, TENANT, ["ada", str(ada.id)]) == [ada.id, ada.id]
    with pytest.raises(CommandError, match="no entity named 'Nobody'"):
        await actions.resolve(graph, TENANT, "Nobody")
    with pytest.raises(CommandError, match="2 entities are named 'Twin': pass an id"):
        await actions.resolve(graph, TENANT, "Twin")
    missing = str(EntityId(make_entity().id))
    with pytest.raises(CommandError, match=f"no entity {missing} in this tenant"):
        await actions.resolve(graph, TENANT, missing)


async def test_neighbors_returns_the_start_and_the_entities_around_it() -> None:
    ada, babbage, engine = (make_entity(name=name) for name in ("Ada", "Babbage", "Engine"))
    graph = await held(ada, babbage, engine)
    await graph.upsert_relationships(
        [make_relationship(ada, babbage), make_relationship(babbage, engine)]
    )

    start, near = await actions.neighbors(graph, TENANT, "Ada", depth=1)
    _, far = await actions.neighbors(graph, TENANT, "Ada", depth=2)

    assert start == ada
    assert near == [{"id": str(babbage.id), "name": "Babbage", "entity_type": "person"}]
    assert [row["name"] for row in far] == ["Babbage", "Engine"]


async def test_delete_entities_counts_those_held_and_records_each() -> None:
    ada = make_entity(name="Ada")
    graph, log = await held(ada), InMemoryEventLog()

    deleted = await actions.delete_entities(
        [ada.id, make_entity().id], TENANT, graph=graph, vectors=None, events=log
    )

    assert deleted == 1
    assert await graph.get_entity(ada.id, TENANT) is None
    assert len(await log.read(tenant_id=TENANT)) >= 1


async def test_consolidate_merges_and_undo_merge_restores() -> None:
    first, second = make_entity(name="Ada Lovelace"), make_entity(name="Ada Lovelace")
    graph, log = await held(first, second), InMemoryEventLog()

    planned = await actions.consolidate(TENANT, graph=graph, events=log, vectors=None, dry_run=True)
    report = await actions.consolidate(TENANT, graph=graph, events=log, vectors=None, dry_run=False)

    assert planned.dry_run
    assert len(planned.merges) == 1
    assert len(await graph.find_entities(TENANT)) == 1
    event_id = report.merges[0].event_id
    assert event_id is not None
    await actions.undo_merge(event_id, TENANT, graph=graph, events=log, vectors=None)
    assert len(await graph.find_entities(TENANT)) == 2


def test_merge_event_id_for_refuses_what_is_not_a_uuid() -> None:
    with pytest.raises(CommandError, match="EVENT_ID must be a UUID, got 'seven'"):
        actions.merge_event_id_for("seven")


async def test_write_jsonl_writes_each_relationship_once_and_only_inside_around() -> None:
    ada, babbage, engine = (make_entity(name=name) for name in ("Ada", "Babbage", "Engine"))
    graph = await held(ada, babbage, engine)
    knows, built = make_relationship(ada, babbage), make_relationship(babbage, engine)
    await graph.upsert_relationships([knows, built])

    whole, near = io.StringIO(), io.StringIO()
    await write_jsonl(Scope(graph, TENANT), whole)
    await write_jsonl(Scope(graph, TENANT, around=ada.id, depth=1), near)

    rows = [json.loads(line) for line in whole.getvalue().splitlines()]
    assert sorted(row["id"] for row in rows if row["redstring"] == "relationship") == sorted(
        [str(knows.id), str(built.id)]
    )
    assert len(rows) == 5
    around = [json.loads(line) for line in near.getvalue().splitlines()]
    assert [row["id"] for row in around] == [str(ada.id), str(babbage.id), str(knows.id)]
