"""One tenant's name units as an inverted index that numpy counts, for a store to hold.

A store that keeps its entities elsewhere (a server) holds this index in
process so that a name-candidate lookup costs what the in-memory store's
does: the postings of the query's units are concatenated and counted with
`numpy.bincount`, in C, never with a walk over the tenant. The store keeps
it current itself (see ADR 0037).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.domain.names import MIN_SHARED_UNITS, entity_name_units

if TYPE_CHECKING:
    from collections.abc import Iterable

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

_LOW_64: Final = (1 << 64) - 1
#: Below this many dead rows an index never compacts.
_COMPACT_AFTER: Final = 1024


class NameIndex:
    """Entities' name units, each entity under a row; ties in a count break by `str(id)`.

    Replacing an entity retires its old row and appends a new one; the rows
    are rebuilt once more are dead than alive. Each row also keeps the
    revision the entity was indexed at, which the store compares with the
    revision of the entity it holds parsed.
    """

    __slots__ = ("alive", "dead", "high", "ids", "low", "postings", "revisions", "row_of", "units")

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.postings: dict[str, array[int]] = {}
        self.ids: list[EntityId | None] = []
        self.units: list[frozenset[str]] = []
        self.revisions: array[int] = array("q")
        self.row_of: dict[EntityId, int] = {}
        self.alive = bytearray()
        self.high: array[int] = array("Q")
        self.low: array[int] = array("Q")
        self.dead = 0

    def __len__(self) -> int:
        return len(self.row_of)

    def put(self, entity: Entity, revision: int) -> None:
        """Index `entity` at `revision` under a new row, retiring any row it held."""
        self.remove(entity.id)
        self._append(entity.id, entity_name_units(entity), revision)

    def _append(self, entity_id: EntityId, units: frozenset[str], revision: int) -> None:
        row = len(self.ids)
        self.ids.append(entity_id)
        self.units.append(units)
        self.revisions.append(revision)
        self.row_of[entity_id] = row
        self.alive.append(1)
        self.high.append(entity_id.int >> 64)
        self.low.append(entity_id.int & _LOW_64)
        for unit in units:
            rows = self.postings.get(unit)
            if rows is None:
                rows = self.postings[unit] = array("i")
            rows.append(row)

    def remove(self, entity_id: EntityId) -> None:
        """Retire `entity_id`'s row, if it has one; compact when most rows are dead."""
        row = self.row_of.pop(entity_id, None)
        if row is None:
            return
        self.alive[row] = 0
        self.ids[row] = None
        self.units[row] = frozenset()
        self.dead += 1
        if self.dead > max(_COMPACT_AFTER, len(self.row_of)):
            self._compact()

    def _compact(self) -> None:
        live = [
            (entity_id, self.units[row], self.revisions[row])
            for row, entity_id in enumerate(self.ids)
            if entity_id is not None
        ]
        self._clear()
        for entity_id, units, revision in live:
            self._append(entity_id, units, revision)

    def revision_of(self, entity_id: EntityId) -> int:
        """The revision `entity_id` was indexed at; it must be indexed."""
        return self.revisions[self.row_of[entity_id]]

    def find(self, query_units: Iterable[str], limit: int) -> list[EntityId]:
        """The ids of the best `limit` candidates, by shared units then `str(id)`."""
        units = [self.postings[unit] for unit in query_units if unit in self.postings]
        if not units or limit == 0:
            return []
        rows = np.concatenate([np.frombuffer(each, dtype=np.int32) for each in units])
        counts = np.bincount(rows, minlength=len(self.ids))
        counts *= np.frombuffer(self.alive, dtype=np.uint8)
        found = np.flatnonzero(counts >= MIN_SHARED_UNITS)
        if found.size > limit:
            # Keep every row that could be among the best `limit`: all those
            # sharing at least the `limit`-th largest count.
            shared = counts[found]
            cut = np.partition(shared, found.size - limit)[found.size - limit]
            found = found[shared >= cut]
        high = np.frombuffer(self.high, dtype=np.uint64)[found]
        low = np.frombuffer(self.low, dtype=np.uint64)[found]
        order = np.lexsort((low, high, -counts[found]))[:limit]
        ids = self.ids
        return [ids[row] for row in found[order].tolist()]
