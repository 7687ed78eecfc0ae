"""Reading entities from JSON Lines, a JSON array, CSV or TSV, every row checked first.

A row has a `name` and an `entity_type` (CSV and TSV headers match in any
case, and a byte-order mark is ignored); JSON rows may carry a
`properties` object, and any other column or key becomes a property. With
`id_column`, that column identifies the entity: a UUID is used as it is,
anything else is mapped to a fixed UUID within the tenant. A line that
`redstring export` wrote (`"redstring": "entity"` or `"relationship"`; a
`"mention"` line, which names a passage, is skipped)
keeps every field, its id included. A file with one bad row yields
nothing: the error names the file, the line and what is wrong.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from uuid import NAMESPACE_URL, UUID, uuid5

from pydantic import ValidationError

from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.extraction.mapping import entity_id_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from redstring.domain.ids import TenantId

#: What `source_id` says on an imported entity, before the file's name.
IMPORT_SOURCE_PREFIX: Final = "import:"
#: The key marking a line `redstring export` wrote, and the kinds it names.
EXPORT_KEY: Final = "redstring"
#: The formats `--format` accepts; `auto` goes by the file's suffix.
FORMATS: Final = ("auto", "jsonl", "json", "csv", "tsv")
#: The name shown for standard input.
STDIN: Final = "-"
_REQUIRED: Final = ("name", "entity_type")
_RESERVED: Final = frozenset({"name", "entity_type", "properties"})


class RowError(ValueError):
    """A row that cannot become an entity: names the file, the line and why."""

    def __init__(self, *, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {reason}")


@dataclass
class Rows:
    """What a file held: its entities (duplicates included, in file order) and relationships."""

    origin: str
    entities: list[Entity] = field(default_factory=list)
    relationships: list[Relationship] = field(default_factory=list)


def format_of(source: str, text: str, requested: str) -> str:
    """The format to read: `requested`, else the suffix, else a sniff of standard input."""
    if requested != "auto":
        return requested
    suffix = source.rsplit(".", 1)[-1].lower() if "." in source else ""
    if suffix in {"csv", "tsv", "json"}:
        return suffix
    if source == STDIN and text.lstrip()[:1] == "[":
        return "json"
    return "jsonl"


def decode(data: bytes, *, source: str) -> str:
    """`data` as UTF-8 text, a leading byte-order mark dropped.

    Raises:
        RowError: the bytes are not UTF-8; names the line and byte.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RowError(
            source=source, line=line, reason=f"not UTF-8 text (byte {exc.start:,} of the file)"
        ) from None


def _parse_json(text: str, *, source: str, line: int | None) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise RowError(source=source, line=at, reason=f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise RowError(source=source, line=line, reason="JSON nested too deeply") from None


def _json_lines(text: str, source: str) -> Iterator[tuple[int, object]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, _parse_json(line, source=source, line=number)


def _json_array(text: str, source: str) -> Iterator[tuple[int, object]]:
    rows = _parse_json(text, source=source, line=None)
    if not isinstance(rows, list):
        raise RowError(source=source, line=None, reason="a .json file must hold an array of rows")
    for index, row in enumerate(rows):
        yield index + 1, row


def _table(text: str, source: str, delimiter: str) -> Iterator[tuple[int, object]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            return
        columns = [column.strip() for column in header]
        canonical = {column.casefold(): column for column in columns}
        if len(canonical) != len(columns):
            raise RowError(source=source, line=1, reason="two columns have the same name")
        for required in _REQUIRED:
            if required in canonical:
                columns[columns.index(canonical[required])] = required
        for values in reader:
            if not any(value.strip() for value in values):
                continue
            if len(values) > len(columns):
                raise RowError(
                    source=source, line=reader.line_num, reason="more fields than the header names"
                )
            row = dict(zip(columns, values, strict=False))
            entity: dict[str, Any] = {key: row[key] for key in _REQUIRED if key in row}
            entity["properties"] = {
                key: value for key, value in row.items() if key not in _REQUIRED and value != ""
            }
            yield reader.line_num, entity
    except csv.Error as exc:
        raise RowError(source=source, line=reader.line_num, reason=str(exc)) from None


def _validation_reason(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'row'}: {error['msg']}" for error in exc.errors()
    )


def _entity_id(
    value: object, tenant_id: TenantId, *, source: str, line: int, column: str
) -> EntityId:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise RowError(source=source, line=line, reason=f"missing field `{column}` (the id column)")
    text = str(value).strip()
    try:
        return EntityId(UUID(text))
    except ValueError:
        return EntityId(uuid5(NAMESPACE_URL, f"redstring:entity:{tenant_id}:{text}"))


def read_rows(
    text: str,
    *,
    source: str,
    tenant_id: TenantId,
    file_format: str = "auto",
    id_column: str | None = None,
) -> Rows:
    """Every row of `text` (read from `source`) as an entity of `tenant_id`.

    Without `id_column`, ids are uuid5 of tenant, source name, type and name,
    so importing the same file twice leaves one copy of each entity.

    Raises:
        RowError: a row is malformed or fails validation (the first one found).
    """
    chosen = format_of(source, text, file_format)
    rows = {
        "jsonl": lambda: _json_lines(text, source),
        "json": lambda: _json_array(text, source),
        "csv": lambda: _table(text, source, ","),
        "tsv": lambda: _table(text, source, "\t"),
    }[chosen]()
    origin = SourceId(IMPORT_SOURCE_PREFIX + ("stdin" if source == STDIN else _base(source)))
    result = Rows(origin=origin)
    for number, row in rows:
        if not isinstance(row, dict):
            raise RowError(source=source, line=number, reason="a row must be a JSON object")
        try:
            if row.get(EXPORT_KEY) is not None:
                _exported(row, tenant_id, result, source=source, line=number)
                continue
            result.entities.append(
                _entity(row, tenant_id, origin, id_column, source=source, line=number)
            )
        except ValidationError as exc:
            raise RowError(source=source, line=number, reason=_validation_reason(exc)) from None
    return result


def _base(source: str) -> str:
    return source.replace("\\", "/").rsplit("/", 1)[-1]


def _entity(
    row: dict[str, Any],
    tenant_id: TenantId,
    origin: SourceId,
    id_column: str | None,
    *,
    source: str,
    line: int,
) -> Entity:
    for required in _REQUIRED:
        if required not in row or row[required] is None:
            raise RowError(source=source, line=line, reason=f"missing field `{required}`")
        if not isinstance(row[required], str):
            raise RowError(source=source, line=line, reason=f"`{required}` must be a string")
    name, entity_type = row["name"], row["entity_type"]
    properties = row.get("properties", {})
    if not isinstance(properties, dict):
        raise RowError(source=source, line=line, reason="`properties` must be an object")
    extra = {key: value for key, value in row.items() if key not in _RESERVED}
    if id_column is not None:
        properties = dict(properties)
        value = extra.pop(id_column, properties.pop(id_column, None))
        entity_id = _entity_id(value, tenant_id, source=source, line=line, column=id_column)
    else:
        entity_id = entity_id_for(tenant_id, origin, entity_type, name)
    return _with_keys(
        Entity(
            id=entity_id,
            tenant_id=tenant_id,
            name=name,
            normalized_name=normalize_name(name),
            entity_type=entity_type,
            source_id=origin,
            properties={**extra, **properties},
            extraction_method=ExtractionMethod.MANUAL,
            confidence=1.0,
        )
    )


def _with_keys(entity: Entity) -> Entity:
    return entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)})


def _exported(
    row: dict[str, Any], tenant_id: TenantId, result: Rows, *, source: str, line: int
) -> None:
    fields = {key: value for key, value in row.items() if key != EXPORT_KEY}
    fields["tenant_id"] = str(tenant_id)
    kind = row[EXPORT_KEY]
    if kind == "entity":
        fields.pop("blocking_keys", None)
        result.entities.append(_with_keys(Entity.model_validate(fields)))
    elif kind == "relationship":
        result.relationships.append(Relationship.model_validate(fields))
    elif kind != "mention":  # a passage naming an entity: `redstring add` brings documents
        raise RowError(
            source=source,
            line=line,
            reason=f"`{EXPORT_KEY}` must be 'entity', 'relationship' or 'mention', got {kind!r}",
        )


def export_line(item: Entity | Relationship) -> str:
    """One JSON line that `read_rows` reads back into `item` (in the importing tenant)."""
    kind = "entity" if isinstance(item, Entity) else "relationship"
    fields = item.model_dump(mode="json", exclude={"tenant_id", "blocking_keys"})
    return json.dumps({EXPORT_KEY: kind, **fields}, ensure_ascii=False)
