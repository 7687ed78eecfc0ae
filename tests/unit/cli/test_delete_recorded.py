"""`redstring delete` records the delete in the file's event log, so a replay keeps it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from redstring import (
    EntityDeleted,
    GraphProjection,
    InMemoryGraphStore,
    InMemoryVectorStore,
    SqliteEventLog,
    VectorProjection,
    replay,
)
from redstring.cli.stores import HASH_DIMENSION, tenant_id_for
from tests.unit.cli.test_commands import PEOPLE, run

if TYPE_CHECKING:
    from pathlib import Path


async def _replayed(
    db: Path,
) -> tuple[list[EntityDeleted], InMemoryGraphStore, InMemoryVectorStore]:
    """The file's deletes, and stores rebuilt from its whole log."""
    async with SqliteEventLog(db) as log:
        stored = await log.read()
        graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=HASH_DIMENSION)
        await replay(log, GraphProjection(graph), VectorProjection(vectors))
    return [each.event for each in stored if isinstance(each.event, EntityDeleted)], graph, vectors


def test_a_deleted_entity_stays_deleted_when_the_log_is_replayed(tmp_path: Path) -> None:
    people, db = tmp_path / "people.csv", tmp_path / "graph.db"
    people.write_text(PEOPLE, encoding="utf-8")
    for tenant in ("default", "acme"):
        assert run("import", people, "--db", db, "--tenant", tenant, "--embeddings", "hash")[0] == 0

    status, out, err = run("delete", "Alan Turing", "--db", db)

    assert (status, out.strip()) == (0, f"deleted 1 entity from {db}"), err
    deletes, graph, vectors = asyncio.run(_replayed(db))
    assert [event.tenant_id for event in deletes] == [tenant_id_for("default")]
    assert asyncio.run(vectors.get(deletes[0].entity_id, tenant_id_for("default"))) is None
    for tenant, names in (("default", ["Ada Lovelace"]), ("acme", ["Ada Lovelace", "Alan Turing"])):
        held = asyncio.run(graph.find_entities(tenant_id_for(tenant)))
        assert sorted(entity.name for entity in held) == names
        for entity in held:
            assert asyncio.run(vectors.get(entity.id, entity.tenant_id)) is not None
