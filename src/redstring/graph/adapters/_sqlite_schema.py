"""The SQLite graph store's schema: its tables, the check on connect, the migration.

- `graph_meta`: the schema version, as the row `('schema_version', '3')`.
  A version 1 file (no name index) or version 2 file (one row per name
  unit) is migrated when first opened: both posting tables are created and
  filled from the stored entities, and the old one-row-per-term tables
  (`graph_entity_keys`, version 2's `graph_name_units`) are dropped.
  `PRAGMA user_version` is left alone, since it belongs to the whole file.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Final

from redstring.graph.adapters._sqlite_postings import KEYS, POSTINGS_SCHEMA, UNITS, Changes
from redstring.graph.stored import entity_from_json
from redstring.storage.adapters.sqlite import check_schema_to_read, ensure_schema

if TYPE_CHECKING:
    import sqlite3

#: The schema this module reads and writes, recorded in `graph_meta`.
SCHEMA_VERSION: Final = 3


SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS graph_entities (
        row INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        normalized_name TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (tenant_id, id)
    )""",
    """CREATE INDEX IF NOT EXISTS graph_entities_by_name
        ON graph_entities (tenant_id, normalized_name, id)""",
    """CREATE INDEX IF NOT EXISTS graph_entities_by_type
        ON graph_entities (tenant_id, entity_type, id)""",
    *POSTINGS_SCHEMA,
    """CREATE TABLE IF NOT EXISTS graph_relationships (
        tenant_id TEXT NOT NULL,
        id TEXT NOT NULL,
        source_entity_id TEXT NOT NULL,
        target_entity_id TEXT NOT NULL,
        relationship_type TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (tenant_id, id)
    )""",
    """CREATE INDEX IF NOT EXISTS graph_relationships_by_source
        ON graph_relationships (tenant_id, source_entity_id)""",
    """CREATE INDEX IF NOT EXISTS graph_relationships_by_target
        ON graph_relationships (tenant_id, target_entity_id)""",
)


#: Which merged id resolves to which canonical one. Created on every connect,
#: so files written before merges existed gain it without a new schema version.
MERGES: Final = """CREATE TABLE IF NOT EXISTS graph_merges (
    tenant_id TEXT NOT NULL,
    merged_id TEXT NOT NULL,
    canonical_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, merged_id)
) WITHOUT ROWID"""


_META_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS graph_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
)


def prepare(connection: sqlite3.Connection, path: str) -> None:
    """The schema check, then the merges table, which files from before merges lack."""
    ensure_schema(
        connection,
        meta_schema=_META_SCHEMA,
        meta_table="graph_meta",
        version=SCHEMA_VERSION,
        statements=SCHEMA,
        store=f"sqlite graph store {path}",
        what="graph",
        migrations={1: migrate_to_postings, 2: migrate_to_postings},
    )
    connection.execute(MERGES)


def check_to_read(connection: sqlite3.Connection, path: str) -> None:
    """Refuse, without writing, a file that holds no graph or another schema version."""
    check_schema_to_read(
        connection,
        meta_table="graph_meta",
        version=SCHEMA_VERSION,
        store=f"sqlite graph store {path}",
        what="graph",
        held="graph",
    )


def migrate_to_postings(connection: sqlite3.Connection) -> None:
    """Index a version 1 or 2 file's entities in the posting tables.

    Both versions keep blocking keys one row per key (`graph_entity_keys`);
    version 2 keeps name units one row per unit too (`graph_name_units`).
    Both tables are dropped.
    """
    # Posting tables a failed or foreign rebuild left are rebuilt too.
    for table in ("graph_name_units", "graph_entity_keys", KEYS.table, UNITS.table):
        connection.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in POSTINGS_SCHEMA:
        connection.execute(statement)
    cursor = connection.execute("SELECT tenant_id, row, body FROM graph_entities")
    while batch := cursor.fetchmany(50_000):
        changes: defaultdict[str, Changes] = defaultdict(Changes)
        for tenant, row, body in batch:
            changes[tenant].add(row, entity_from_json(body))
        for tenant, change in changes.items():
            change.apply(connection, tenant)
    connection.execute(
        "UPDATE graph_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),)
    )
