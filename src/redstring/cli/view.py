"""`redstring view`: one entity's neighbourhood as a single offline HTML page.

The page (`assets/view.html`) holds its own script and style, and the
graph as JSON inside it: no CDN, nothing fetched, so it opens from a file
anywhere. Its script lays the nodes out with a small force simulation and
draws them as SVG, coloured by entity type, each edge labelled with its
relationship type; clicking a node shows its properties and the passages
that mention it (source, offsets and a snippet), when the database holds
passages. See ADRs 0069 and 0081.
"""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Final

from redstring.cli import actions
from redstring.cli.export import exported_entities, exported_relationships
from redstring.cli.passages import passages_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from uuid import UUID

    from redstring.cli.passages import PassageReader, PassageRecord
    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.graph_store import GraphReader

_MARKERS: Final = re.compile("__TITLE__|__DATA__")
#: The passages of one node the page holds at most; it says how many more there are.
NODE_PASSAGES: Final = 20
#: What JSON inside a `<script>` element must not hold as itself.
_SCRIPT_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def page(
    start: Entity,
    entities: Sequence[Entity],
    relationships: Sequence[Relationship],
    passages: Mapping[UUID, list[PassageRecord]] | None = None,
) -> str:
    """The HTML page drawing `entities` and `relationships` around `start`.

    `passages` holds each entity's passages, keyed by its id; a node
    shows the first `NODE_PASSAGES` and says how many more there are.
    """
    passages = passages or {}
    data: dict[str, Any] = {
        "title": f"{start.name} ({start.entity_type})",
        "start": str(start.id),
        "nodes": [
            {
                "id": str(entity.id),
                "name": entity.name,
                "entity_type": entity.entity_type,
                "description": entity.description,
                "properties": entity.properties,
                "passages": passages.get(entity.id, [])[:NODE_PASSAGES],
                "passage_count": len(passages.get(entity.id, [])),
            }
            for entity in entities
        ],
        "edges": [
            {
                "id": str(relationship.id),
                "source": str(relationship.source_entity_id),
                "target": str(relationship.target_entity_id),
                "relationship_type": relationship.relationship_type,
            }
            for relationship in relationships
        ],
    }
    payload = json.dumps(data, ensure_ascii=False)
    payload = re.sub("[<>&\u2028\u2029]", lambda m: _script_escape(m.group()), payload)
    replacements = {"__TITLE__": html.escape(start.name), "__DATA__": payload}
    template = files("redstring.cli").joinpath("assets/view.html").read_text(encoding="utf-8")
    return _MARKERS.sub(lambda match: replacements[match.group()], template)


def _script_escape(character: str) -> str:
    return _SCRIPT_ESCAPES.get(character, f"\\u{ord(character):04x}")


async def neighbourhood_page(
    graph: GraphReader,
    tenant_id: TenantId,
    reference: str,
    *,
    depth: int,
    chunks: PassageReader | None = None,
) -> str:
    """The page for the entity `reference` names and everything within `depth` hops.

    With `chunks`, the database's chunk store, each node shows its passages.

    Raises:
        CommandError: `reference` names no entity, or several.
    """
    start = await actions.entity_for(graph, tenant_id, reference)
    entities = await exported_entities(graph, tenant_id, around=start.id, depth=depth)
    relationships = [
        each async for each in exported_relationships(graph, tenant_id, entities, whole=False)
    ]
    passages = (
        await passages_of(chunks, tenant_id, entity_ids=[entity.id for entity in entities])
        if chunks is not None
        else {}
    )
    return page(start, entities, relationships, passages)
