"""The SQLite vector store's rows: the statements that write them, and their encoding."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from redstring.domain.ids import EntityId
from redstring.domain.vector import Vector
from redstring.ports._vector_input import check_metadata
from redstring.vector.exact import entity_type_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

UPSERT = """
    INSERT INTO vector_records (tenant_id, entity_id, entity_type, vector, metadata)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, entity_id) DO UPDATE SET
        entity_type = excluded.entity_type,
        vector = excluded.vector,
        metadata = excluded.metadata
"""


BUMP = """
    INSERT INTO vector_tenants (tenant_id, generation) VALUES (?, 1)
    ON CONFLICT (tenant_id) DO UPDATE SET generation = generation + 1
"""


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def entity_id_of(text: str) -> EntityId:
    """The `EntityId` an id column holds as text."""
    return EntityId(UUID(text))


def dumps_checked(metadata: dict[str, Any], field: str) -> str:
    """The metadata as JSON text, refused now if it could not be read back."""
    try:
        return _ENCODER.encode(metadata)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{field} is not plain JSON: {exc}") from exc


def _encoded(metadata: object, field: str) -> tuple[str, str | None]:
    """`metadata` checked (`check_metadata`), as the JSON text and entity type a row stores."""
    stored = check_metadata(metadata, field)
    return dumps_checked(stored, field), entity_type_of(stored)


#: Value types a metadata dict may hold to be encoded once per batch. Not
#: `float`: `0.0 == -0.0`, so equal dicts would not mean equal JSON.
_SHAREABLE: Final = frozenset((str, int, bool, type(None)))


_NAME_TYPES: Final = frozenset((str,))


#: Metadata with more keys than this is encoded record by record.
_MAX_SHARED_KEYS: Final = 8


type _SharingKey = tuple[tuple[tuple[str, object], ...], tuple[type, ...]]


class BatchMetadata:
    """Each record's metadata as its row's JSON text and entity type, encoded once per value.

    Metadata is usually a handful of scalars repeated across a batch
    (`{"entity_type": "person"}`), so a flat dict equal to one already
    encoded, value types included (`1`, `True` and `1.0` are equal in
    Python but not in JSON), reuses its text instead of being checked,
    copied and encoded again. Any other dict takes `check_metadata`'s path.
    """

    __slots__ = ("_encoded",)

    def __init__(self) -> None:
        self._encoded: dict[_SharingKey, tuple[str, str | None]] = {}

    def get(self, metadata: object, field: str) -> tuple[str, str | None]:
        """`_encoded(metadata, field)`, shared with every equal flat dict before it.

        Raises:
            ValueError: `metadata` is not a dict of plain JSON; `field` names it.
        """
        if type(metadata) is not dict or len(metadata) > _MAX_SHARED_KEYS:
            return _encoded(metadata, field)
        kinds = tuple(map(type, metadata.values()))
        if not (_SHAREABLE.issuperset(kinds) and _NAME_TYPES.issuperset(map(type, metadata))):
            return _encoded(metadata, field)
        key = (tuple(metadata.items()), kinds)
        found = self._encoded.get(key)
        if found is None:
            found = self._encoded[key] = _encoded(metadata, field)
        return found


def blobs(vectors: Sequence[object], matrix: np.ndarray[Any, Any]) -> list[bytes]:
    """Each checked row as the bytes stored: a float32 `Vector`'s own bytes, without a copy."""
    return [
        vector.tobytes()
        if type(vector) is Vector and vector.itemsize == 4
        else matrix[index].tobytes()
        for index, vector in enumerate(vectors)
    ]
