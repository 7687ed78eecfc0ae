"""`redstring export --format jsonl|graphml`: the GraphML read back by networkx, whole."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redstring import InMemoryGraphStore
from redstring.cli.export import PROPERTY_PREFIX, Scope, write_graphml, write_jsonl
from tests.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from tests.unit.cli.test_commands import imported, run

if TYPE_CHECKING:
    from pathlib import Path

    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId
    from redstring.domain.relationship import Relationship


def read_graphml(text: str) -> nx.MultiDiGraph[str]:
    graph = nx.read_graphml(io.BytesIO(text.encode("utf-8")), force_multigraph=True)
    assert isinstance(graph, nx.MultiDiGraph)
    return graph


async def graphml(graph: InMemoryGraphStore, tenant_id: TenantId = TENANT, **around: Any) -> str:
    out = io.StringIO()
    await write_graphml(Scope(graph, tenant_id, **around), out)
    return out.getvalue()


def assert_node(node: dict[str, Any], entity: Entity) -> None:
    assert node["label"] == entity.name
    assert node["entity_type"] == entity.entity_type
    assert node["confidence"] == entity.confidence
    assert node["extraction_method"] == entity.extraction_method.value
    assert node.get("description") == entity.description
    assert json.loads(node["properties"]) == entity.properties


def assert_edge(edge: dict[str, Any], relationship: Relationship) -> None:
    assert edge["relationship_type"] == relationship.relationship_type
    assert edge["label"] == relationship.relationship_type
    assert edge["confidence"] == relationship.confidence
    assert json.loads(edge["properties"]) == relationship.properties


async def test_every_entity_and_relationship_round_trips_with_its_attributes() -> None:
    ada = make_entity(
        name='Ada <"Lovelace"> & Co',
        description="Wrote the first program.",
        properties={"born": 1815, "height": 1.65, "alive": False, "tags": ["math", "poetry"],
                    "note": "ünïcødé\u0001", "spouse": None, "mixed": 1},
    )  # fmt: skip
    babbage = make_entity(
        name="Charles Babbage",
        properties={"born": 1791, "height": 2, "alive": True, "mixed": "one"},
    )
    engine = make_entity(name="Analytical Engine", entity_type="machine")
    graph = InMemoryGraphStore()
    # The same ids in another tenant, with other data: never exported with this one.
    twin = make_entity(id=ada.id, tenant_id=OTHER_TENANT, name="Someone else")
    await graph.upsert_entities([ada, babbage, engine, twin])
    knows = make_relationship(ada, babbage, relationship_type="knows", properties={"since": 1833})
    also = make_relationship(ada, babbage, relationship_type="corresponded_with", confidence=0.5)
    designed = make_relationship(babbage, engine, relationship_type="designed")
    herself = make_relationship(ada, ada, relationship_type="is")
    await graph.upsert_relationships([knows, also, designed, herself])

    read = read_graphml(await graphml(graph))

    entities = {str(each.id): each for each in (ada, babbage, engine)}
    assert set(read.nodes) == set(entities)
    for node_id, entity in entities.items():
        assert_node(read.nodes[node_id], entity)
    relationships = {str(each.id): each for each in (knows, also, designed, herself)}
    assert {key for _, _, key in read.edges(keys=True)} == set(relationships)
    for source, target, key, data in read.edges(keys=True, data=True):
        relationship = relationships[key]
        assert (source, target) == (
            str(relationship.source_entity_id),
            str(relationship.target_entity_id),
        )
        assert_edge(data, relationship)
    node = read.nodes[str(ada.id)]
    assert node[PROPERTY_PREFIX + "born"] == 1815
    assert node[PROPERTY_PREFIX + "height"] == pytest.approx(1.65)
    assert read.nodes[str(babbage.id)][PROPERTY_PREFIX + "height"] == 2.0
    assert node[PROPERTY_PREFIX + "alive"] is False
    assert read.nodes[str(babbage.id)][PROPERTY_PREFIX + "alive"] is True
    assert json.loads(node[PROPERTY_PREFIX + "tags"]) == ["math", "poetry"]
    assert node[PROPERTY_PREFIX + "note"] == "ünïcødé\ufffd"
    assert node[PROPERTY_PREFIX + "mixed"] == "1"
    assert read.nodes[str(babbage.id)][PROPERTY_PREFIX + "mixed"] == "one"
    assert PROPERTY_PREFIX + "spouse" not in node
    assert PROPERTY_PREFIX + "born" not in read.nodes[str(engine.id)]


async def test_around_exports_the_neighbourhood_and_only_the_edges_inside_it() -> None:
    a, b, c, d = (make_entity(name=name) for name in "abcd")
    graph = InMemoryGraphStore()
    await graph.upsert_entities([a, b, c, d])
    ab, bc, cd = make_relationship(a, b), make_relationship(b, c), make_relationship(c, d)
    await graph.upsert_relationships([ab, bc, cd])

    near = read_graphml(await graphml(graph, around=b.id, depth=1))

    assert set(near.nodes) == {str(a.id), str(b.id), str(c.id)}
    assert {key for _, _, key in near.edges(keys=True)} == {str(ab.id), str(bc.id)}
    lines = io.StringIO()
    await write_jsonl(Scope(graph, TENANT, around=a.id, depth=2), lines)
    rows = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert [row["id"] for row in rows] == [str(a.id), str(b.id), str(c.id), str(ab.id), str(bc.id)]


async def test_an_empty_tenant_is_an_empty_graph() -> None:
    read = read_graphml(await graphml(InMemoryGraphStore()))
    assert (read.number_of_nodes(), read.number_of_edges()) == (0, 0)


# Entities hold integers of 63 bits at most, in lists as well as alone.
_integers = st.integers(min_value=-(2**62), max_value=2**62)
_values = st.one_of(
    st.none(),
    st.booleans(),
    _integers,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00")),
    st.lists(_integers, max_size=3),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.lists(
        st.dictionaries(
            st.text(
                st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1
            ),
            _values,
            max_size=4,
        ),
        min_size=2,
        max_size=4,
    )
)
@example(properties=[{"x": 1}, {"x": 1.5}])
@example(properties=[{"x": True}, {"x": 1}])
@example(properties=[{"\x01": "\x0b\ufffe"}, {"<&>": '"'}])
async def test_any_properties_come_back_whole_in_the_json_attribute(
    properties: list[dict[str, Any]],
) -> None:
    entities = [make_entity(name=f"e{n}", properties=each) for n, each in enumerate(properties)]
    graph = InMemoryGraphStore()
    await graph.upsert_entities(entities)

    read = read_graphml(await graphml(graph))

    for entity in entities:
        assert json.loads(read.nodes[str(entity.id)]["properties"]) == entity.properties


# -- the command ------------------------------------------------------------------


@pytest.fixture
def graph_db(tmp_path: Path) -> Path:
    from tests.unit.cli.test_mcp import GRAPH

    source = tmp_path / "graph.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in GRAPH), encoding="utf-8")
    db = tmp_path / "graph.db"
    imported(source, "--db", db)
    return db


def test_export_graphml_writes_the_tenant_and_around_its_neighbourhood(graph_db: Path) -> None:
    status, out, err = run("export", "--db", graph_db, "--format", "graphml")
    assert status == 0, err
    whole = read_graphml(out)
    assert (whole.number_of_nodes(), whole.number_of_edges()) == (3, 2)
    status, out, err = run(
        "export", "--db", graph_db, "--format", "graphml", "--around", "Ada Lovelace"
    )
    assert status == 0, err
    near = read_graphml(out)
    assert sorted(near.nodes[node]["label"] for node in near.nodes) == [
        "Ada Lovelace",
        "Charles Babbage",
    ]


def test_export_jsonl_stays_the_default_that_import_reads(graph_db: Path) -> None:
    default = run("export", "--db", graph_db)
    assert default == run("export", "--db", graph_db, "--format", "jsonl")
    assert len(default[1].splitlines()) == 5


def test_export_depth_needs_around_and_around_needs_an_entity(graph_db: Path) -> None:
    status, _, err = run("export", "--db", graph_db, "--depth", "2")
    assert status == 2
    assert "--depth needs --around ENTITY" in err
    status, _, err = run("export", "--db", graph_db, "--around", "Nobody")
    assert (status, err) == (1, "redstring export: no entity named 'Nobody' in this tenant\n")


def test_export_jsonl_ends_with_the_mentions_and_import_reads_it_back(
    tmp_path: Path, graph_db: Path
) -> None:
    from tests.unit.cli.test_mcp import ADA, BABBAGE, ENGINE, NOTE

    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps(NOTE) + "\n", encoding="utf-8")
    assert run("add", notes, "--db", graph_db)[0] == 0
    before = graph_db.read_bytes()
    status, out, err = run("export", "--db", graph_db)
    assert status == 0, err
    assert graph_db.read_bytes() == before
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["redstring"] for row in rows[:5]] == ["entity"] * 3 + ["relationship"] * 2
    mentions = [row for row in rows[5:] if "entity_id" in row]
    assert all(row["redstring"] == "mention" for row in rows[5:])
    text = str(NOTE["text"])
    assert [(row["entity_id"], row["start"], row["end"]) for row in mentions] == [
        (ADA, 48, 60),
        (BABBAGE, 0, 15),
        (BABBAGE, 79, 94),
        (ENGINE, 29, 46),
    ]
    assert {(row["chunk_id"], row["source_id"], row["title"]) for row in mentions} == {
        (mentions[0]["chunk_id"], "engines", "Engines")
    }
    assert mentions[1]["snippet"] == text[: text.index(" building")] + "\u2026"
    copy = tmp_path / "copy.db"
    exported = tmp_path / "export.jsonl"
    exported.write_text(out, encoding="utf-8")
    assert "3 entities" in imported(exported, "--db", copy)
    status, again, _ = run("export", "--db", copy)
    assert again.splitlines() == out.splitlines()[:5]
