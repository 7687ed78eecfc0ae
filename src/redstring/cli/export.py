"""`redstring export`: a tenant's graph, or one entity's neighbourhood, written as it is read.

Two formats: JSON Lines (`jsonl`, what `redstring import` reads back with
every field kept) and GraphML (`graphml`, for networkx, Gephi and yEd).
Both are written item by item to a text stream, never built whole in
memory; the relationships are read entity by entity, and only their ids
are kept, to write each once. Given the database's chunk store, JSON Lines
ends with one `mention` line per passage that names an exported entity or
relationship (`import` skips them). See ADRs 0069 and 0081.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from xml.sax.saxutils import escape

from redstring.cli.passages import passages_of
from redstring.cli.rows import EXPORT_KEY, export_line

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from typing import TextIO

    from redstring.cli.passages import PassageReader
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader


@dataclass(frozen=True)
class Scope:
    """What an export reads: a tenant's graph, or the neighbourhood of one entity.

    `around` narrows it to that entity and those within `depth` hops;
    `chunks` is the database's chunk store, whose mentions JSON Lines
    writes (`None`: the database holds no passages).
    """

    graph: GraphReader
    tenant_id: TenantId
    around: EntityId | None = None
    depth: int = 1
    chunks: PassageReader | None = None


async def exported_entities(
    graph: GraphReader, tenant_id: TenantId, *, around: EntityId | None = None, depth: int = 1
) -> list[Entity]:
    """The entities to export: the tenant's, or `around` and those within `depth` hops of it."""
    if around is None:
        return await graph.find_entities(tenant_id)
    start = await graph.get_entity(around, tenant_id)
    found = await graph.neighbors(around, tenant_id, depth=depth)
    return ([start] if start is not None else []) + found


async def exported_relationships(
    graph: GraphReader, tenant_id: TenantId, entities: Sequence[Entity], *, whole: bool
) -> AsyncIterator[Relationship]:
    """Each relationship touching `entities` once, entity by entity.

    Unless `whole` (the entire tenant is exported), only those with both
    ends among `entities`.
    """
    held = {entity.id for entity in entities}
    seen: set[str] = set()
    for entity in entities:
        for relationship in await graph.get_relationships(entity.id, tenant_id):
            key = str(relationship.id)
            if key in seen:
                continue
            if not whole and not (
                relationship.source_entity_id in held and relationship.target_entity_id in held
            ):
                continue
            seen.add(key)
            yield relationship


async def write_jsonl(scope: Scope, out: TextIO) -> None:
    """Write the entities, the relationships, then their mentions, one JSON line each.

    A mention line is `{"redstring": "mention", "entity_id"` or
    `"relationship_id", "chunk_id", "source_id", "title", "start", "end",
    "snippet"}`: the passage that names it, with the span in the document.
    """
    graph, tenant_id = scope.graph, scope.tenant_id
    entities = await exported_entities(graph, tenant_id, around=scope.around, depth=scope.depth)
    for entity in entities:
        out.write(export_line(entity) + "\n")
    relationship_ids = []
    async for relationship in exported_relationships(
        graph, tenant_id, entities, whole=scope.around is None
    ):
        relationship_ids.append(relationship.id)
        out.write(export_line(relationship) + "\n")
    if scope.chunks is None:
        return
    for key, ids in (
        ("entity_id", {"entity_ids": [entity.id for entity in entities]}),
        ("relationship_id", {"relationship_ids": relationship_ids}),
    ):
        found = await passages_of(scope.chunks, tenant_id, **ids)
        for target, records in found.items():
            for record in records:
                line = {EXPORT_KEY: "mention", key: str(target), **record}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")


# -- GraphML -----------------------------------------------------------------------

#: The attributes every node and edge carries after its label and its type.
_SHARED_KEYS: Final = (
    ("description", "string"),
    ("source_id", "string"),
    ("extraction_method", "string"),
    ("model", "string"),
    ("confidence", "double"),
    ("properties", "string"),
)


def _keys(prefix: str, type_name: str) -> tuple[tuple[str, str, str], ...]:
    """(key id, attribute name, GraphML type) for each attribute of a node or an edge."""
    named = (("label", "string"), (type_name, "string"), *_SHARED_KEYS)
    return tuple((f"{prefix}_{name}", name, kind) for name, kind in named)


#: The GraphML attributes every node carries: (key id, attribute name, GraphML type).
NODE_KEYS: Final = _keys("n", "entity_type")
#: The GraphML attributes every edge carries.
EDGE_KEYS: Final = _keys("e", "relationship_type")
#: What a node's own property `born` is called as a GraphML attribute: `property.born`.
PROPERTY_PREFIX: Final = "property."

_HEADER: Final = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
    'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
)
#: Characters XML 1.0 cannot hold, even as a character reference.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    """`value` as XML character data; a character XML cannot hold becomes U+FFFD."""
    return escape(_NOT_XML.sub("\ufffd", value), {'"': "&quot;"})


def _json(value: object) -> str:
    """`value` as JSON whose every character XML can hold (others become JSON escapes)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _property_type(values: list[object]) -> str:
    """The GraphML type that holds every value of one property."""
    if all(isinstance(value, bool) for value in values):
        return "boolean"
    if all(isinstance(value, int) and not isinstance(value, bool) for value in values):
        return "long"
    if all(isinstance(value, int | float) and not isinstance(value, bool) for value in values):
        return "double"
    return "string"


def _typed(value: object, kind: str) -> str:
    """One property value as GraphML data of type `kind`."""
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("long", "double"):
        return repr(value)
    return _text(value) if isinstance(value, str) else _json(value)


def _data(key: str, value: str | None) -> str:
    return "" if value is None else f'<data key="{key}">{value}</data>'


def _optional(value: str | None) -> str | None:
    return None if value is None else _text(value)


def _fields(
    keys: tuple[tuple[str, str, str], ...], item: Entity | Relationship, label: str, kind: str
) -> list[str]:
    """The `<data>` of the attributes in `keys` for a node or an edge."""
    values = (
        label,
        kind,
        item.description,
        item.source_id,
        item.extraction_method.value,
        item.model,
        repr(item.confidence),
        _json(item.properties),
    )
    return [_data(key, _optional(value)) for (key, _, _), value in zip(keys, values, strict=True)]


async def write_graphml(scope: Scope, out: TextIO) -> None:
    """Write the entities as nodes and the relationships as directed edges, in GraphML.

    Node ids are entity ids and edge ids relationship ids. Each node has
    `label` (the name), `entity_type`, `confidence`, `properties` (all of
    them, as JSON) and one `property.NAME` attribute per property whose
    values are not all null, typed `boolean`, `long` or `double` when all
    its values are, else `string` (JSON for a value that is not a string);
    each edge has `label` and `relationship_type` (the type), `confidence`
    and `properties`. Edges may be parallel: read it as a multigraph.
    """
    graph, tenant_id = scope.graph, scope.tenant_id
    entities = await exported_entities(graph, tenant_id, around=scope.around, depth=scope.depth)
    values: dict[str, list[object]] = {}
    for entity in entities:
        for name, value in entity.properties.items():
            if value is not None:
                values.setdefault(name, []).append(value)
    properties = {
        name: (f"n_p{index}", _property_type(values[name]))
        for index, name in enumerate(sorted(values))
    }
    out.write(_HEADER)
    for key, name, kind in NODE_KEYS:
        out.write(f'  <key id="{key}" for="node" attr.name="{name}" attr.type="{kind}"/>\n')
    for name, (key, kind) in properties.items():
        attribute = _text(PROPERTY_PREFIX + name)
        out.write(f'  <key id="{key}" for="node" attr.name="{attribute}" attr.type="{kind}"/>\n')
    for key, name, kind in EDGE_KEYS:
        out.write(f'  <key id="{key}" for="edge" attr.name="{name}" attr.type="{kind}"/>\n')
    out.write(f'  <graph id="{tenant_id}" edgedefault="directed">\n')
    for entity in entities:
        fields = _fields(NODE_KEYS, entity, entity.name, entity.entity_type)
        for name, value in entity.properties.items():
            if value is not None:
                key, kind = properties[name]
                fields.append(_data(key, _typed(value, kind)))
        out.write(f'    <node id="{entity.id}">{"".join(fields)}</node>\n')
    async for relationship in exported_relationships(
        graph, tenant_id, entities, whole=scope.around is None
    ):
        kind = relationship.relationship_type
        fields = _fields(EDGE_KEYS, relationship, kind, kind)
        out.write(
            f'    <edge id="{relationship.id}" source="{relationship.source_entity_id}" '
            f'target="{relationship.target_entity_id}">{"".join(fields)}</edge>\n'
        )
    out.write("  </graph>\n</graphml>\n")


#: Each format's writer.
WRITERS: Final = {"jsonl": write_jsonl, "graphml": write_graphml}
