"""What the storage adapters share, below the stores and the event log that use it.

`redstring.storage.adapters.sqlite` is the one SQLite worker every SQLite
adapter runs on. See
[ADR 0018](../adr/0018-one-sqlite-worker-serves-every-sqlite-adapter.md).
"""
