"""What the storage adapters share, below the stores and the event log that use it.

`redstring.storage.adapters.sqlite` is the one SQLite worker every SQLite
adapter runs on (see
[ADR 0018](../adr/0018-one-sqlite-worker-serves-every-sqlite-adapter.md));
`redstring.storage.adapters.postgres` is the pool, schema and error
translation every Postgres adapter shares (see
[ADR 0031](../adr/0031-postgres-adapters-speak-asyncpg-in-one-schema.md)).
"""
