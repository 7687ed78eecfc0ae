"""`redstring ask` and the MCP `retrieve_context` show how a relation chain reached its answer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from mcp import Client

from redstring.cli.mcp_server import GraphTools, build_server
from redstring.cli.stores import open_database, tenant_id_for
from tests.unit.cli.test_commands import imported, run
from tests.unit.cli.test_mcp import answer

if TYPE_CHECKING:
    from pathlib import Path

EVE, JOAN, RUTH, TOM, IVY = (f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 6))
PEOPLE = {EVE: "Eve Moss", JOAN: "Joan Moss", RUTH: "Ruth Hale", TOM: "Tom Hale", IVY: "Ivy Lund"}
#: Eve's cousin Tom is three stated relations away: her mother, her aunt, the aunt's son.
FACTS = ((EVE, "mother", JOAN), (RUTH, "sister_of", JOAN), (RUTH, "son", TOM), (EVE, "friend", IVY))
ARTICLES = {
    "Eve Moss": "Eve Moss paints.",
    "Tom Hale": "Tom Hale sails.",
    "Ivy Lund": "Ivy Lund sings with Eve Moss.",
}
QUESTION = "Who is the cousin of Eve Moss?"


@pytest.fixture
def family_db(tmp_path: Path) -> Path:
    """A database of Eve's family and friend, and an article about each of three of them."""
    db = tmp_path / "family.db"
    rows: list[dict[str, object]] = [
        {"redstring": "entity", "id": key, "name": name, "entity_type": "person",
         "extraction_method": "manual", "confidence": 1.0}
        for key, name in PEOPLE.items()
    ]  # fmt: skip
    rows += [
        {"redstring": "relationship", "id": f"00000000-0000-4000-8000-0000000000a{n}",
         "source_entity_id": source, "target_entity_id": target, "relationship_type": kind,
         "extraction_method": "manual", "confidence": 1.0}
        for n, (source, kind, target) in enumerate(FACTS)
    ]  # fmt: skip
    graph = tmp_path / "family.jsonl"
    graph.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert "4 relationships" in imported(graph, "--db", db)
    notes = tmp_path / "articles.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"id": title, "title": title, "text": text}) + "\n"
            for title, text in ARTICLES.items()
        ),
        encoding="utf-8",
    )
    status, _, err = run("add", notes, "--db", db)
    assert status == 0, err
    return db


def test_ask_gives_the_path_to_the_answer_through_entities_the_context_leaves_out(
    family_db: Path,
) -> None:
    db = family_db
    status, out, err = run("ask", QUESTION, "--db", db, "--json", "-k", "2")
    assert status == 0, err
    found = json.loads(out)
    assert [each["id"] for each in found["entities"]] == [EVE, TOM]
    [path] = found["paths"]
    assert [each["id"] for each in path["entities"]] == [EVE, JOAN, RUTH, TOM]
    assert [
        (each["source"]["id"], each["relationship_type"], each["target"]["id"])
        for each in path["relationships"]
    ] == list(FACTS[:3])
    status, out, err = run("ask", QUESTION, "--db", db, "-k", "2")
    assert status == 0, err
    table = out.splitlines()
    assert table[-2].split() == ["answer", "path"]
    assert table[-1].split() == [
        *("Tom", "Hale", "Eve", "Moss", "-[mother]->", "Joan", "Moss"),
        *("<-[sister_of]-", "Ruth", "Hale", "-[son]->", "Tom", "Hale"),
    ]


def test_a_question_composing_no_relation_has_no_path(family_db: Path) -> None:
    db = family_db
    status, out, err = run("ask", "What does Eve Moss paint?", "--db", db, "--json")
    assert status == 0, err
    assert json.loads(out)["paths"] == []
    status, out, err = run("ask", "What does Eve Moss paint?", "--db", db)
    assert status == 0, err
    assert "answer" not in out.split()


async def test_the_mcp_tool_serves_the_same_path(family_db: Path) -> None:
    reader = await open_database(str(family_db), read_only=True, chunks=True)
    async with reader:
        tools = GraphTools(reader, tenant_id_for("default"), None)
        async with Client(build_server(tools, allow_writes=False)) as client:
            found = answer(await client.call_tool("retrieve_context", {"query": QUESTION}))
    [path] = found["paths"]
    assert [each["name"] for each in path["entities"]] == [
        "Eve Moss",
        "Joan Moss",
        "Ruth Hale",
        "Tom Hale",
    ]
    assert [each["relationship_type"] for each in path["relationships"]] == [
        "mother",
        "sister_of",
        "son",
    ]
