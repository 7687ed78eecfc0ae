"""The SQLite graph store's entity and relationship rows, as its writes and merges use them."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.domain.normalization import normalize_name
from redstring.graph.adapters._sqlite_postings import Changes
from redstring.graph.stored import entity_from_json
from redstring.storage.adapters.sqlite import chunks, parameter_limit, placeholders, uuid_texts

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Iterator, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.relationship import Relationship

INSERT_ENTITY: Final = """
    INSERT INTO graph_entities (row, tenant_id, id, normalized_name, entity_type, body)
    VALUES (?, ?, ?, ?, ?, ?)
"""


UPDATE_ENTITY: Final = """
    UPDATE graph_entities SET normalized_name = ?, entity_type = ?, body = ? WHERE row = ?
"""


UPSERT_RELATIONSHIP: Final = """
    INSERT INTO graph_relationships
        (tenant_id, id, source_entity_id, target_entity_id, relationship_type, body)
    VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, id) DO UPDATE SET
        source_entity_id = excluded.source_entity_id,
        target_entity_id = excluded.target_entity_id,
        relationship_type = excluded.relationship_type,
        body = excluded.body
"""


def put_entities(connection: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    # Keyed by the tenant's integer: a UUID hashes and prints in Python.
    by_tenant: defaultdict[int, dict[str, Entity]] = defaultdict(dict)
    for entity, entity_id in zip(
        entities, uuid_texts([entity.id for entity in entities]), strict=True
    ):
        by_tenant[entity.tenant_id.int][entity_id] = entity
    # Rows are chosen here, not by SQLite, so that the index rows can be
    # built without reading them back; the write lock is held.
    (last_row,) = connection.execute("SELECT max(row) FROM graph_entities").fetchone()
    next_row = 1 if last_row is None else last_row + 1
    for tenant in sorted(by_tenant):
        next_row = put_tenant_entities(
            connection, str(UUID(int=tenant)), by_tenant[tenant], next_row
        )


def put_tenant_entities(
    connection: sqlite3.Connection, tenant: str, latest: dict[str, Entity], next_row: int
) -> int:
    """Write one tenant's entities (the last of each id); return the next free row."""
    # Sorted, each statement walks its index in order instead of at random.
    ids = sorted(latest)
    held: dict[str, int] = {}
    changes = Changes()
    for entity_id, row, body in select_by_ids(connection, "id, row, body", tenant, ids):
        held[entity_id] = row
        changes.remove(row, entity_from_json(body))
    inserted: list[tuple[int, str, str, str, str, str]] = []
    updated: list[tuple[str, str, str, int]] = []
    for entity_id in ids:
        entity = latest[entity_id]
        name, entity_type, body = (
            normalize_name(entity.name),
            entity.entity_type,
            entity_body(entity),
        )
        row = held.get(entity_id)
        if row is None:
            row, next_row = next_row, next_row + 1
            inserted.append((row, tenant, entity_id, name, entity_type, body))
        else:
            updated.append((name, entity_type, body, row))
        changes.add(row, entity)
    connection.executemany(UPDATE_ENTITY, updated)
    connection.executemany(INSERT_ENTITY, inserted)
    changes.apply(connection, tenant)
    return next_row


def entity_body(entity: Entity) -> str:
    """`entity.model_dump_json()`, without the keyword handling a bulk write pays per entity."""
    return type(entity).__pydantic_serializer__.to_json(entity).decode()


def relationship_row(relationship: Relationship) -> tuple[str, str, str, str, str, str]:
    return (
        str(relationship.tenant_id),
        str(relationship.id),
        str(relationship.source_entity_id),
        str(relationship.target_entity_id),
        relationship.relationship_type,
        relationship.model_dump_json(),
    )


def select_by_ids(
    connection: sqlite3.Connection, columns: str, tenant: str, entity_ids: Collection[str]
) -> Iterator[Any]:
    """`columns` of each entity the tenant holds among `entity_ids`, in no particular order."""
    for chunk in chunks(list(entity_ids), parameter_limit(connection) - 1):
        yield from connection.execute(
            f"SELECT {columns} FROM graph_entities "
            f"WHERE tenant_id = ? AND id IN ({placeholders(len(chunk))})",
            (tenant, *chunk),
        )


def select_rows(
    connection: sqlite3.Connection, columns: str, tenant: str, rows: Sequence[int]
) -> list[Any]:
    """`columns` of each of the tenant's entities among `rows`, in no particular order.

    Postings name only their tenant's rows; the tenant is checked all the
    same, so that no fault in them can ever answer with another tenant's
    entity. (`+` keeps SQLite on the rowid lookup.)
    """
    return [
        found
        for chunk in chunks(rows, parameter_limit(connection) - 1)
        for found in connection.execute(
            f"SELECT {columns} FROM graph_entities "
            f"WHERE row IN ({placeholders(len(chunk))}) AND +tenant_id = ?",
            (*chunk, tenant),
        ).fetchall()
    ]
