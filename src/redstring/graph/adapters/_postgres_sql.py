"""The Postgres graph store's tables and every statement it runs."""

from __future__ import annotations

from typing import Final

TABLES: Final = (
    "CREATE SEQUENCE {schema}.graph_entity_revisions",
    """CREATE TABLE {schema}.graph_entities (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        normalized_name text NOT NULL,
        entity_type text NOT NULL,
        body text NOT NULL,
        revision bigint NOT NULL DEFAULT nextval('{schema}.graph_entity_revisions'),
        PRIMARY KEY (tenant_id, id)
    )""",
    """CREATE INDEX graph_entities_by_name
        ON {schema}.graph_entities (tenant_id, normalized_name, id)""",
    """CREATE INDEX graph_entities_by_type
        ON {schema}.graph_entities (tenant_id, entity_type, id)""",
    """CREATE TABLE {schema}.graph_entity_keys (
        tenant_id uuid NOT NULL,
        key text NOT NULL,
        entity_id uuid NOT NULL,
        PRIMARY KEY (tenant_id, key, entity_id)
    )""",
    """CREATE TABLE {schema}.graph_relationships (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        source_entity_id uuid NOT NULL,
        target_entity_id uuid NOT NULL,
        relationship_type text NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (tenant_id, id)
    )""",
    """CREATE INDEX graph_relationships_by_source
        ON {schema}.graph_relationships (tenant_id, source_entity_id)""",
    """CREATE INDEX graph_relationships_by_target
        ON {schema}.graph_relationships (tenant_id, target_entity_id)""",
    """CREATE INDEX graph_entities_by_revision
        ON {schema}.graph_entities (tenant_id, revision)""",
    """CREATE TABLE {schema}.graph_tenants (
        tenant_id uuid PRIMARY KEY,
        generation bigint NOT NULL DEFAULT 0,
        reset bigint NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE {schema}.graph_deletions (
        tenant_id uuid NOT NULL,
        entity_id uuid NOT NULL,
        revision bigint NOT NULL,
        PRIMARY KEY (tenant_id, entity_id)
    )""",
    """CREATE TABLE {schema}.graph_merges (
        tenant_id uuid NOT NULL,
        merged_id uuid NOT NULL,
        canonical_id uuid NOT NULL,
        PRIMARY KEY (tenant_id, merged_id)
    )""",
)


#: How many merges of merges `resolve` follows at most: a guard, never reached
#: by chains merges can make (a canonical id is never itself merged away).
_MAX_MERGE_HOPS: Final = 64


class Sql:
    """Every statement the store runs, with its schema filled in once."""

    def __init__(self, schema: str) -> None:
        s = f'"{schema}"'
        # Per tenant, with `= ANY`: a join against `unnest` gets a generic plan
        # after five runs that scans the whole table once per row.
        self.delete_keys = f"""
            DELETE FROM {s}.graph_entity_keys
            WHERE tenant_id = $1 AND entity_id = ANY($2::uuid[])"""
        self.upsert_entities = f"""
            INSERT INTO {s}.graph_entities (tenant_id, id, normalized_name, entity_type, body)
            SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[])
            ON CONFLICT (tenant_id, id) DO UPDATE SET
                normalized_name = excluded.normalized_name,
                entity_type = excluded.entity_type,
                body = excluded.body,
                revision = excluded.revision"""  # a fresh nextval, the column default
        sequence = f"{s}.graph_entity_revisions"
        # Writers of one tenant take turns on its row, so its revisions commit in order.
        self.lock_tenant = f"""
            INSERT INTO {s}.graph_tenants (tenant_id) VALUES ($1)
            ON CONFLICT (tenant_id) DO UPDATE SET generation = {s}.graph_tenants.generation"""
        self.bump = f"""
            UPDATE {s}.graph_tenants SET generation = nextval('{sequence}')
            WHERE tenant_id = $1"""
        self.purge_generation = f"""
            UPDATE {s}.graph_tenants SET generation = fresh.value, reset = fresh.value
            FROM (SELECT nextval('{sequence}') AS value) AS fresh WHERE tenant_id = $1"""
        self.count_entities = (
            f"SELECT tenant_id, count(*) FROM {s}.graph_entities GROUP BY tenant_id"
        )
        self.held_tenants = f"SELECT DISTINCT tenant_id FROM {s}.graph_entities ORDER BY 1"
        self.count_tenant = f"SELECT count(*) FROM {s}.graph_entities WHERE tenant_id = $1"
        self.count_relationships = (
            f"SELECT tenant_id, count(*) FROM {s}.graph_relationships GROUP BY tenant_id"
        )
        self.generation = f"SELECT generation, reset FROM {s}.graph_tenants WHERE tenant_id = $1"
        self.forget_deletions = f"""
            DELETE FROM {s}.graph_deletions
            WHERE tenant_id = $1 AND entity_id = ANY($2::uuid[])"""
        self.record_deletions = f"""
            INSERT INTO {s}.graph_deletions (tenant_id, entity_id, revision)
            SELECT $1, gone, nextval('{sequence}') FROM unnest($2::uuid[]) AS deleted (gone)
            ON CONFLICT (tenant_id, entity_id) DO UPDATE SET revision = excluded.revision"""
        self.rows_since = f"""
            SELECT id, revision, body FROM {s}.graph_entities
            WHERE tenant_id = $1 AND revision > $2"""
        self.deletions_since = f"""
            SELECT entity_id FROM {s}.graph_deletions WHERE tenant_id = $1 AND revision > $2"""
        self.insert_keys = f"""
            INSERT INTO {s}.graph_entity_keys (tenant_id, key, entity_id)
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[])"""
        self.held_endpoints = f"""
            SELECT id FROM {s}.graph_entities
            WHERE tenant_id = $1 AND id = ANY($2::uuid[])
            FOR KEY SHARE"""
        self.upsert_relationships = f"""
            INSERT INTO {s}.graph_relationships
                (tenant_id, id, source_entity_id, target_entity_id, relationship_type, body)
            SELECT * FROM unnest(
                $1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[])
            ON CONFLICT (tenant_id, id) DO UPDATE SET
                source_entity_id = excluded.source_entity_id,
                target_entity_id = excluded.target_entity_id,
                relationship_type = excluded.relationship_type,
                body = excluded.body"""
        self.delete_tenant = (
            f"DELETE FROM {s}.graph_merges WHERE tenant_id = $1",
            f"DELETE FROM {s}.graph_deletions WHERE tenant_id = $1",
            f"DELETE FROM {s}.graph_relationships WHERE tenant_id = $1",
            f"DELETE FROM {s}.graph_entity_keys WHERE tenant_id = $1",
        )
        self.delete_tenant_entities = f"DELETE FROM {s}.graph_entities WHERE tenant_id = $1"
        self.lock_entity = (
            f"SELECT 1 FROM {s}.graph_entities WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        )
        self.delete_entity = (
            f"""DELETE FROM {s}.graph_relationships
            WHERE tenant_id = $1 AND (source_entity_id = $2 OR target_entity_id = $2)""",
            f"DELETE FROM {s}.graph_entity_keys WHERE tenant_id = $1 AND entity_id = $2",
            f"DELETE FROM {s}.graph_entities WHERE tenant_id = $1 AND id = $2",
        )
        self.entities_by_id = (
            f"SELECT body FROM {s}.graph_entities WHERE tenant_id = $1 AND id = ANY($2::uuid[])"
        )
        # Each requested id ($2) with every link of its chain of merges, and
        # how many hops it took to reach it (0: the id itself).
        chain = f"""
            WITH RECURSIVE chain (start, current, hops) AS (
                SELECT id, id, 0 FROM unnest($2::uuid[]) AS requested (id)
                UNION ALL
                SELECT c.start, m.canonical_id, c.hops + 1
                FROM chain AS c JOIN {s}.graph_merges AS m
                  ON m.tenant_id = $1 AND m.merged_id = c.current
                WHERE c.hops < {_MAX_MERGE_HOPS}
            )"""
        # Each requested id with the end of its chain of merges (itself if none).
        self.resolve = f"""{chain}
            SELECT DISTINCT ON (start) start, current FROM chain ORDER BY start, hops DESC"""
        self.resolved_entities = f"""{chain}, ends AS (
                SELECT DISTINCT ON (start) current FROM chain ORDER BY start, hops DESC
            )
            SELECT body FROM {s}.graph_entities
            WHERE tenant_id = $1 AND id IN (SELECT current FROM ends)"""
        self.touching = f"""
            SELECT body FROM {s}.graph_relationships
            WHERE tenant_id = $1
              AND (source_entity_id = ANY($2::uuid[]) OR target_entity_id = ANY($2::uuid[]))"""
        # `relationships` of every id of $2 at once, of any type, by id.
        self.touching_with_ids = f"""
            SELECT id, body FROM (
                SELECT id, body FROM {s}.graph_relationships
                WHERE tenant_id = $1 AND source_entity_id = ANY($2::uuid[])
                UNION
                SELECT id, body FROM {s}.graph_relationships
                WHERE tenant_id = $1 AND target_entity_id = ANY($2::uuid[])
            ) AS both_ends ORDER BY id"""
        self.drop_absorbed = (
            self.delete_keys,
            f"DELETE FROM {s}.graph_entities WHERE tenant_id = $1 AND id = ANY($2::uuid[])",
        )
        self.record_merges = f"""
            INSERT INTO {s}.graph_merges (tenant_id, merged_id, canonical_id)
            SELECT $1, merged_id, $3 FROM unnest($2::uuid[]) AS absorbed (merged_id)
            ON CONFLICT (tenant_id, merged_id) DO UPDATE SET canonical_id = excluded.canonical_id"""
        # Every id whose chain of merges ends at $2 (none when $2 is merged away itself):
        # the merges into it, walked backwards.
        self.merged_into = f"""
            WITH RECURSIVE merged (id, hops) AS (
                SELECT $2::uuid, 0 WHERE NOT EXISTS (
                    SELECT 1 FROM {s}.graph_merges WHERE tenant_id = $1 AND merged_id = $2)
                UNION ALL
                SELECT m.merged_id, c.hops + 1 FROM merged AS c JOIN {s}.graph_merges AS m
                  ON m.tenant_id = $1 AND m.canonical_id = c.id
                WHERE c.hops < {_MAX_MERGE_HOPS}
            )
            SELECT DISTINCT id FROM merged WHERE hops > 0"""
        # `merged_into` for every id of $2 at once, each row (requested id, merged id).
        self.merged_into_each = f"""
            WITH RECURSIVE merged (root, id, hops) AS (
                SELECT asked.id, asked.id, 0 FROM unnest($2::uuid[]) AS asked (id)
                WHERE NOT EXISTS (
                    SELECT 1 FROM {s}.graph_merges WHERE tenant_id = $1 AND merged_id = asked.id)
                UNION ALL
                SELECT c.root, m.merged_id, c.hops + 1 FROM merged AS c
                JOIN {s}.graph_merges AS m ON m.tenant_id = $1 AND m.canonical_id = c.id
                WHERE c.hops < {_MAX_MERGE_HOPS}
            )
            SELECT DISTINCT root, id FROM merged WHERE hops > 0"""
        self.forget_merges_into = f"""
            WITH RECURSIVE gone (id) AS (
                SELECT $2::uuid
                UNION SELECT m.merged_id FROM {s}.graph_merges AS m JOIN gone
                  ON m.tenant_id = $1 AND m.canonical_id = gone.id
            )
            DELETE FROM {s}.graph_merges
            WHERE tenant_id = $1 AND merged_id IN (SELECT id FROM gone)"""
        self.unmerge = (
            f"DELETE FROM {s}.graph_merges WHERE tenant_id = $1 AND merged_id = ANY($2::uuid[])"
        )
        # One statement per filter combination, so each is planned for its own index.
        select = f"SELECT body FROM {s}.graph_entities WHERE tenant_id = $1"
        self.find_entities = {
            (False, False): f"{select} ORDER BY id LIMIT $2",
            (True, False): f"{select} AND normalized_name = $2 ORDER BY id LIMIT $3",
            (False, True): f"{select} AND entity_type = $2 ORDER BY id LIMIT $3",
            (True, True): (
                f"{select} AND normalized_name = $2 AND entity_type = $3 ORDER BY id LIMIT $4"
            ),
        }
        self.by_keys = f"""
            SELECT k.key, e.id, e.revision FROM {s}.graph_entity_keys AS k
            JOIN {s}.graph_entities AS e ON e.tenant_id = k.tenant_id AND e.id = k.entity_id
            WHERE k.tenant_id = $1 AND k.key = ANY($2::text[])
            ORDER BY k.entity_id"""
        self.revisions_by_id = f"""
            SELECT id, revision, body FROM {s}.graph_entities
            WHERE tenant_id = $1 AND id = ANY($2::uuid[])"""
        # The tenant's generation on every row, and at least one row, from one snapshot.
        self.generation_and_rows = f"""
            SELECT (SELECT generation FROM {s}.graph_tenants WHERE tenant_id = $1),
                   e.id, e.revision, e.body
            FROM (SELECT) AS one
            LEFT JOIN {s}.graph_entities AS e ON e.tenant_id = $1 AND e.id = ANY($2::uuid[])"""
        self.relationship = (
            f"SELECT body FROM {s}.graph_relationships WHERE tenant_id = $1 AND id = $2"
        )
        # UNION, not UNION ALL: a self-loop matches both halves and is returned once.
        self.relationships = f"""
            SELECT id, body FROM (
                SELECT id, body FROM {s}.graph_relationships
                WHERE tenant_id = $1 AND source_entity_id = $2
                  AND ($3::text IS NULL OR relationship_type = $3)
                UNION
                SELECT id, body FROM {s}.graph_relationships
                WHERE tenant_id = $1 AND target_entity_id = $2
                  AND ($3::text IS NULL OR relationship_type = $3)
            ) AS both_ends ORDER BY id"""
        self.step = f"""
            SELECT source_entity_id, target_entity_id FROM {s}.graph_relationships
            WHERE tenant_id = $1 AND source_entity_id = ANY($2::uuid[])
            UNION ALL
            SELECT source_entity_id, target_entity_id FROM {s}.graph_relationships
            WHERE tenant_id = $1 AND target_entity_id = ANY($2::uuid[])"""
