"""Reading entities from JSON Lines or CSV, every row checked before any is used.

A row has a `name` and an `entity_type`; JSON Lines rows may carry a
`properties` object, and any other CSV column (or JSON key) becomes a
property. A file with one bad row yields no entities at all: the error names
the file, the line and what is wrong, so nothing is half-imported.
"""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.normalization import normalize_name
from redstring.extraction.mapping import entity_id_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from redstring.domain.ids import TenantId

#: What `source_id` says on an imported entity, before the file's name.
IMPORT_SOURCE_PREFIX = "import:"


class RowError(ValueError):
    """A row that cannot become an entity: names the file, the line and why."""

    def __init__(self, *, path: Path, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}")


def _json_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RowError(path=path, line=number, reason=f"not JSON: {exc.msg}") from exc
            if not isinstance(row, dict):
                raise RowError(path=path, line=number, reason="a row must be a JSON object")
            yield number, row


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return
        for row in reader:
            if None in row:
                raise RowError(
                    path=path, line=reader.line_num, reason="more fields than the header names"
                )
            properties = {
                key: value
                for key, value in row.items()
                if key not in {"name", "entity_type"} and value not in (None, "")
            }
            yield (
                reader.line_num,
                {
                    "name": row.get("name"),
                    "entity_type": row.get("entity_type"),
                    "properties": properties,
                },
            )


def read_entities(path: Path, *, tenant_id: TenantId) -> list[Entity]:
    """Every row of `path` as an `Entity` of `tenant_id`, with blocking keys.

    `.csv` files are read as CSV with a header; anything else as JSON Lines.
    Ids are deterministic (uuid5 of tenant, file name, type and name), so
    importing the same file twice leaves one copy of each entity.

    Raises:
        RowError: a row is malformed or fails validation (the first one found).
        OSError: the file cannot be read.
    """
    source = SourceId(IMPORT_SOURCE_PREFIX + path.name)
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else _json_rows(path)
    entities: dict[EntityId, Entity] = {}
    for number, row in rows:
        name, entity_type = row.get("name"), row.get("entity_type")
        properties = row.get("properties", {})
        extra = {k: v for k, v in row.items() if k not in {"name", "entity_type", "properties"}}
        if not isinstance(name, str) or not isinstance(entity_type, str):
            raise RowError(
                path=path, line=number, reason="`name` and `entity_type` must both be strings"
            )
        if not isinstance(properties, dict):
            raise RowError(path=path, line=number, reason="`properties` must be an object")
        try:
            entity = Entity(
                id=entity_id_for(tenant_id, source, entity_type, name),
                tenant_id=tenant_id,
                name=name,
                normalized_name=normalize_name(name),
                entity_type=entity_type,
                source_id=source,
                properties={**extra, **properties},
                extraction_method=ExtractionMethod.MANUAL,
                confidence=1.0,
            )
        except ValidationError as exc:
            reason = "; ".join(
                f"{'.'.join(map(str, error['loc'])) or 'row'}: {error['msg']}"
                for error in exc.errors()
            )
            raise RowError(path=path, line=number, reason=reason) from exc
        entities[entity.id] = entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)})
    return list(entities.values())
