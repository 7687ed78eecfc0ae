"""The SQLite graph store's merge chains: which merged id resolves to which canonical one."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from redstring.domain.exceptions import MissingEntityError
from redstring.domain.ids import EntityId
from redstring.domain.merging import repoint
from redstring.domain.relationship import Relationship
from redstring.graph.adapters._sqlite_postings import Changes
from redstring.graph.adapters._sqlite_rows import (
    UPSERT_RELATIONSHIP,
    put_entities,
    relationship_row,
    select_by_ids,
)
from redstring.graph.stored import entity_from_json
from redstring.storage.adapters.sqlite import (
    chunks,
    parameter_limit,
    placeholders,
    write_transaction,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Iterator, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId


def resolve_chain(
    connection: sqlite3.Connection, tenant: str, entity_ids: Sequence[str]
) -> dict[str, str]:
    """Each id's canonical id, following merges of merges; itself when never merged."""
    result = {entity_id: entity_id for entity_id in entity_ids}
    pending = set(result.values())
    seen = set(pending)
    redirect: dict[str, str] = {}
    while pending:
        found = dict(select_merges(connection, tenant, pending))
        redirect.update(found)
        pending = {target for target in found.values() if target not in seen}
        seen |= pending
    for entity_id in result:
        current, hops = entity_id, {entity_id}
        while (target := redirect.get(current)) is not None and target not in hops:
            hops.add(target)
            current = target
        result[entity_id] = current
    return result


def select_merges(
    connection: sqlite3.Connection, tenant: str, entity_ids: Collection[str]
) -> Iterator[tuple[str, str]]:
    for chunk in chunks(list(entity_ids), parameter_limit(connection) - 1):
        yield from connection.execute(
            "SELECT merged_id, canonical_id FROM graph_merges "
            f"WHERE tenant_id = ? AND merged_id IN ({placeholders(len(chunk))})",
            (tenant, *chunk),
        )


def merge_into(
    connection: sqlite3.Connection, canonical: Entity, merged: Sequence[EntityId]
) -> None:
    tenant, canonical_id = str(canonical.tenant_id), str(canonical.id)
    with write_transaction(connection):
        if resolve_chain(connection, tenant, [canonical_id])[canonical_id] != canonical_id:
            raise ValueError(f"canonical {canonical_id} is itself merged into another entity")
        merged_ids = [str(entity_id) for entity_id in merged]
        held = {entity_id for (entity_id,) in select_by_ids(connection, "id", tenant, merged_ids)}
        resolved = resolve_chain(connection, tenant, merged_ids)
        for entity_id in merged:
            if str(entity_id) not in held and resolved[str(entity_id)] != canonical_id:
                raise MissingEntityError(entity_id=entity_id, tenant_id=canonical.tenant_id)
        put_entities(connection, [canonical])
        absorbed = sorted(held)
        touching: dict[str, Relationship] = {}
        for chunk in chunks(absorbed, (parameter_limit(connection) - 2) // 2):
            marks = placeholders(len(chunk))
            for relationship_id, body in connection.execute(
                "SELECT id, body FROM graph_relationships WHERE tenant_id = ? AND "
                f"(source_entity_id IN ({marks}) OR target_entity_id IN ({marks}))",
                (tenant, *chunk, *chunk),
            ):
                touching[relationship_id] = Relationship.model_validate_json(body)
        rewritten = []
        for relationship in touching.values():
            for entity_id in absorbed:
                relationship = repoint(relationship, EntityId(UUID(entity_id)), canonical.id)
            rewritten.append(relationship)
        connection.executemany(UPSERT_RELATIONSHIP, [relationship_row(r) for r in rewritten])
        changes = Changes()
        for chunk in chunks(absorbed, parameter_limit(connection) - 1):
            for row, body in connection.execute(
                "DELETE FROM graph_entities "
                f"WHERE tenant_id = ? AND id IN ({placeholders(len(chunk))}) RETURNING row, body",
                (tenant, *chunk),
            ).fetchall():
                changes.remove(row, entity_from_json(body))
        changes.apply(connection, tenant)
        connection.executemany(
            "INSERT INTO graph_merges (tenant_id, merged_id, canonical_id) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, merged_id) DO UPDATE SET canonical_id = excluded.canonical_id",
            [(tenant, entity_id, canonical_id) for entity_id in absorbed],
        )


def forget_merges(
    connection: sqlite3.Connection, tenant_id: TenantId, merged: Sequence[str]
) -> None:
    with write_transaction(connection):
        connection.executemany(
            "DELETE FROM graph_merges WHERE tenant_id = ? AND merged_id = ?",
            [(str(tenant_id), entity_id) for entity_id in merged],
        )
