"""`redstring export`: a tenant's graph, or one entity's neighbourhood, written as it is read.

Two formats: JSON Lines (`jsonl`, what `redstring import` reads back with
every field kept) and GraphML (`graphml`, for networkx, Gephi and yEd).
Both are written item by item to a text stream, never built whole in
memory; the relationships are read entity by entity, and only their ids
are kept, to write each once. See ADR 0069.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final
from xml.sax.saxutils import escape

from redstring.cli.rows import export_line

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from typing import TextIO

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader


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


async def write_jsonl(
    graph: GraphReader,
    tenant_id: TenantId,
    out: TextIO,
    *,
    around: EntityId | None = None,
    depth: int = 1,
) -> None:
    """Write the entities, then the relationships, one JSON line each."""
    entities = await exported_entities(graph, tenant_id, around=around, depth=depth)
    for entity in entities:
        out.write(export_line(entity) + "\n")
    async for relationship in exported_relationships(
        graph, tenant_id, entities, whole=around is None
    ):
        out.write(export_line(relationship) + "\n")


# -- GraphML -----------------------------------------------------------------------

#: The GraphML attributes every node carries: (key id, attribute name, GraphML type).
NODE_KEYS: Final = (
    ("n_label", "label", "string"),
    ("n_entity_type", "entity_type", "string"),
    ("n_description", "description", "string"),
    ("n_source_id", "source_id", "string"),
    ("n_extraction_method", "extraction_method", "string"),
    ("n_model", "model", "string"),
    ("n_confidence", "confidence", "double"),
    ("n_properties", "properties", "string"),
)
#: The GraphML attributes every edge carries.
EDGE_KEYS: Final = (
    ("e_label", "label", "string"),
    ("e_relationship_type", "relationship_type", "string"),
    ("e_description", "description", "string"),
    ("e_source_id", "source_id", "string"),
    ("e_extraction_method", "extraction_method", "string"),
    ("e_model", "model", "string"),
    ("e_confidence", "confidence", "double"),
    ("e_properties", "properties", "string"),
)
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


async def write_graphml(
    graph: GraphReader,
    tenant_id: TenantId,
    out: TextIO,
    *,
    around: EntityId | None = None,
    depth: int = 1,
) -> None:
    """Write the entities as nodes and the relationships as directed edges, in GraphML.

    Node ids are entity ids and edge ids relationship ids. Each node has
    `label` (the name), `entity_type`, `confidence`, `properties` (all of
    them, as JSON) and one `property.NAME` attribute per property whose
    values are not all null, typed `boolean`, `long` or `double` when all
    its values are, else `string` (JSON for a value that is not a string);
    each edge has `label` and `relationship_type` (the type), `confidence`
    and `properties`. Edges may be parallel: read it as a multigraph.
    """
    entities = await exported_entities(graph, tenant_id, around=around, depth=depth)
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
        fields = [
            _data("n_label", _text(entity.name)),
            _data("n_entity_type", _text(entity.entity_type)),
            _data("n_description", _optional(entity.description)),
            _data("n_source_id", _optional(entity.source_id)),
            _data("n_extraction_method", entity.extraction_method.value),
            _data("n_model", _optional(entity.model)),
            _data("n_confidence", repr(entity.confidence)),
            _data("n_properties", _text(_json(entity.properties))),
        ]
        for name, value in entity.properties.items():
            if value is not None:
                key, kind = properties[name]
                fields.append(_data(key, _typed(value, kind)))
        out.write(f'    <node id="{entity.id}">{"".join(fields)}</node>\n')
    async for relationship in exported_relationships(
        graph, tenant_id, entities, whole=around is None
    ):
        fields = [
            _data("e_label", _text(relationship.relationship_type)),
            _data("e_relationship_type", _text(relationship.relationship_type)),
            _data("e_description", _optional(relationship.description)),
            _data("e_source_id", _optional(relationship.source_id)),
            _data("e_extraction_method", relationship.extraction_method.value),
            _data("e_model", _optional(relationship.model)),
            _data("e_confidence", repr(relationship.confidence)),
            _data("e_properties", _text(_json(relationship.properties))),
        ]
        out.write(
            f'    <edge id="{relationship.id}" source="{relationship.source_entity_id}" '
            f'target="{relationship.target_entity_id}">{"".join(fields)}</edge>\n'
        )
    out.write("  </graph>\n</graphml>\n")


#: Each format's writer.
WRITERS: Final = {"jsonl": write_jsonl, "graphml": write_graphml}
