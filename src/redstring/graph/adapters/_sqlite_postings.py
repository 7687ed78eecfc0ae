"""The SQLite graph store's posting-blob index: blocking keys and name units by entity row.

For each `(tenant_id, key)` and each `(tenant_id, unit)` of
`redstring.domain.names`, blobs of little-endian 64-bit signed rows: `row`
where the term gained the entity, `-row` where it lost it; the term's
entities are the rows whose signs sum to 1. A write appends one blob per
term it changes; a term at `MAX_POSTING_SEGMENTS` blobs has them merged.
Lookups read the blobs and count with numpy. ADR 0033 records why.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from redstring.domain.names import MIN_SHARED_UNITS, entity_name_units
from redstring.storage.adapters.sqlite import chunks, parameter_limit, placeholders

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Mapping, Sequence

    from redstring.domain.entity import Entity

#: How many blobs may hold one term's postings before a write merges them.
MAX_POSTING_SEGMENTS: Final = 8


#: A term's largest blob is rewritten once the others hold an eighth of its size.
MERGE_FRACTION: Final = 8


#: How an entity row is packed in a posting blob.
ROW: Final = np.dtype("<i8")


#: Postings are counted in an array spanning their rows while that span is
#: at most this many slots per posting, plus `BINCOUNT_SPAN`; else sorted.
BINCOUNT_SPAN_PER_ROW: Final = 8


BINCOUNT_SPAN: Final = 1 << 16


class Index(NamedTuple):
    """A posting table: per `(tenant_id, term)`, blobs of entity rows."""

    table: str
    term: str


UNITS: Final = Index("graph_name_postings", "unit")


KEYS: Final = Index("graph_key_postings", "key")


POSTINGS_SCHEMA: Final = tuple(
    statement
    for index in (KEYS, UNITS)
    for statement in (
        f"""CREATE TABLE IF NOT EXISTS {index.table} (
            tenant_id TEXT NOT NULL,
            {index.term} TEXT NOT NULL,
            entity_rows BLOB NOT NULL
        )""",
        f"""CREATE INDEX IF NOT EXISTS {index.table}_by_{index.term}
            ON {index.table} (tenant_id, {index.term})""",
    )
)


class Changes:
    """Rows to take out of, then put into, one tenant's posting tables."""

    __slots__ = ("added", "removed")

    def __init__(self) -> None:
        self.removed: dict[Index, defaultdict[str, list[int]]] = {
            index: defaultdict(list) for index in (KEYS, UNITS)
        }
        self.added: dict[Index, defaultdict[str, list[int]]] = {
            index: defaultdict(list) for index in (KEYS, UNITS)
        }

    def remove(self, row: int, entity: Entity) -> None:
        """Take `row` out of the postings of every key and unit `entity` has."""
        self._note(self.removed, row, entity)

    def add(self, row: int, entity: Entity) -> None:
        """Put `row` into the postings of every key and unit `entity` has."""
        self._note(self.added, row, entity)

    @staticmethod
    def _note(into: dict[Index, defaultdict[str, list[int]]], row: int, entity: Entity) -> None:
        if entity.blocking_keys:
            keys = into[KEYS]
            for key in entity.blocking_keys:
                keys[key].append(row)
        units = into[UNITS]
        for unit in entity_name_units(entity):
            units[unit].append(row)

    def apply(self, connection: sqlite3.Connection, tenant: str) -> None:
        """Write the changes; removals first, so a row both removed and added stays."""
        for index in (KEYS, UNITS):
            update_postings(connection, index, tenant, self.removed[index], self.added[index])


def update_postings(
    connection: sqlite3.Connection,
    index: Index,
    tenant: str,
    removed: Mapping[str, Sequence[int]],
    added: Mapping[str, Sequence[int]],
) -> None:
    """Take `removed` rows out of the tenant's postings in `index`, then add `added` ones.

    A blob holds signed rows: `row` where the term gained it, `-row` where
    it lost it, so a change appends one blob per term and a term's rows are
    those whose signs sum to 1. A row both removed and added is left alone.
    A term reaching `MAX_POSTING_SEGMENTS` blobs has them merged, see
    `blobs_to_merge`.
    """
    table, term = index
    entries: dict[str, np.ndarray[Any, np.dtype[np.int64]]] = {}
    for each in sorted(removed.keys() | added.keys()):
        if each not in removed:
            entries[each] = np.asarray(added[each], dtype=ROW)
            continue
        gone, came = set(removed[each]), set(added.get(each, ()))
        if gone != came:
            entries[each] = np.asarray(
                [*sorted(came - gone), *(-row for row in sorted(gone - came))], dtype=ROW
            )
    # length() reads a blob's size from its row header, not the blob.
    sizes: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
    for each, rowid, size in select_terms(
        connection,
        f"SELECT {term}, rowid, length(entity_rows) FROM {table} "
        f"WHERE tenant_id = ? AND {term} IN ({{}})",
        tenant,
        list(entries),
    ):
        sizes[each].append((rowid, size // ROW.itemsize))
    merging = {
        each: blobs_to_merge(sizes[each], entries[each].size)
        for each in entries
        if len(sizes.get(each, ())) >= MAX_POSTING_SEGMENTS - 1
    }
    read = dict(
        select_blobs(
            connection, table, [rowid for rowids, _ in merging.values() for rowid in rowids]
        )
    )
    dropped: list[tuple[int]] = []
    blobs: list[tuple[str, str, bytes]] = []
    for each, new in entries.items():
        if each in merging:
            rowids, whole = merging[each]
            dropped.extend((rowid,) for rowid in rowids)
            new = net_rows(
                np.concatenate([*(np.frombuffer(read[rowid], dtype=ROW) for rowid in rowids), new]),
                keep_removals=not whole,
            )
        if new.size:
            blobs.append((tenant, each, new.tobytes()))
    connection.executemany(f"DELETE FROM {table} WHERE rowid = ?", dropped)
    connection.executemany(
        f"INSERT INTO {table} (tenant_id, {term}, entity_rows) VALUES (?, ?, ?)", blobs
    )


def blobs_to_merge(sizes: Sequence[tuple[int, int]], new: int) -> tuple[list[int], bool]:
    """Which of a term's blobs (rowid, entries) to merge with `new` entries, and if all.

    The largest blob is left alone while the others, with `new`, hold less
    than an eighth of its entries: they are merged into one signed blob, so
    a term written one row at a time rewrites its small blobs, not its large
    one. Otherwise every blob is merged into plain rows.
    """
    base, base_size = max(sizes, key=lambda size: size[1])
    rest = [(rowid, size) for rowid, size in sizes if rowid != base]
    if MERGE_FRACTION * (sum(size for _, size in rest) + new) < base_size:
        return [rowid for rowid, _ in rest], False
    return [rowid for rowid, _ in sizes], True


def select_blobs(
    connection: sqlite3.Connection, table: str, rowids: Sequence[int]
) -> Iterator[tuple[int, bytes]]:
    for chunk in chunks(rowids, parameter_limit(connection)):
        yield from connection.execute(
            f"SELECT rowid, entity_rows FROM {table} WHERE rowid IN ({placeholders(len(chunk))})",
            chunk,
        )


def net_rows(
    entries: np.ndarray[Any, np.dtype[np.int64]], *, keep_removals: bool
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The signed rows that `entries` come to: each row once, with its sign's sum."""
    rows, where = np.unique(np.abs(entries), return_inverse=True)
    net = np.bincount(where, weights=np.sign(entries), minlength=rows.size)
    if keep_removals:
        return np.concatenate([rows[net > 0], -rows[net < 0]])
    return rows[net > 0]


def select_terms(
    connection: sqlite3.Connection, sql: str, tenant: str, terms: Sequence[str]
) -> Iterator[Any]:
    """The rows of `sql`, whose `{}` takes the placeholders of a chunk of `terms`."""
    for chunk in chunks(terms, parameter_limit(connection) - 1):
        yield from connection.execute(sql.format(placeholders(len(chunk))), (tenant, *chunk))


def count_rows(
    entries: np.ndarray[Any, np.dtype[np.int64]],
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], np.ndarray[Any, np.dtype[np.int64]]]:
    """The rows sharing at least `MIN_SHARED_UNITS` units, and how many each shares.

    A unit's signed entries sum to 1 for each row it holds and 0 for any
    other, so the sum over the query's units is the units a row shares.
    """
    rows = np.abs(entries)
    weights = None if entries.min() > 0 else np.sign(entries)
    low, high = int(rows.min()), int(rows.max())
    if high - low > BINCOUNT_SPAN_PER_ROW * rows.size + BINCOUNT_SPAN:
        # Rows far apart (a tenant among many, or rows an older file assigned):
        # sorting them costs less than counting into a vast array.
        found, where = np.unique(rows, return_inverse=True)
        shared = np.bincount(where, weights=weights, minlength=found.size).astype(np.int64)
        enough = shared >= MIN_SHARED_UNITS
        return found[enough], shared[enough]
    counts = np.bincount(rows - low, weights=weights).astype(np.int64)
    found = np.flatnonzero(counts >= MIN_SHARED_UNITS)
    return found + low, counts[found]
