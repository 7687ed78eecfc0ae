"""`redstring mcp`: the real server process, driven over stdio by the MCP SDK's own client.

Most tests spawn `python -m redstring.cli mcp` and talk to it as an agent
would; a few drive the same tools in process (where coverage follows). A
killed client or a closed session must leave the database whole, on
SQLite and on Postgres.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import asyncpg
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from redstring import CachingEmbeddingProvider, FakeEmbeddingProvider, SqliteEventLog
from redstring.cli import main
from redstring.cli.mcp_server import READ_TOOLS, WRITE_TOOLS, GraphTools, build_server
from redstring.cli.stores import HASH_DIMENSION, CommandError, open_database, tenant_id_for
from tests.unit.cli.test_commands import imported, run

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp_types import CallToolResult

ADA = "00000000-0000-4000-8000-000000000001"
BABBAGE = "00000000-0000-4000-8000-000000000002"
ENGINE = "00000000-0000-4000-8000-000000000003"
KNOWS = "00000000-0000-4000-8000-0000000000a1"
DESIGNED = "00000000-0000-4000-8000-0000000000a2"
GRAPH = [
    {"redstring": "entity", "id": ADA, "name": "Ada Lovelace", "entity_type": "person",
     "extraction_method": "manual", "confidence": 1.0, "properties": {"born": 1815}},
    {"redstring": "entity", "id": BABBAGE, "name": "Charles Babbage", "entity_type": "person",
     "extraction_method": "manual", "confidence": 1.0},
    {"redstring": "entity", "id": ENGINE, "name": "Analytical Engine", "entity_type": "machine",
     "extraction_method": "manual", "confidence": 1.0},
    {"redstring": "relationship", "id": KNOWS, "source_entity_id": ADA,
     "target_entity_id": BABBAGE, "relationship_type": "knows",
     "extraction_method": "manual", "confidence": 1.0},
    {"redstring": "relationship", "id": DESIGNED, "source_entity_id": BABBAGE,
     "target_entity_id": ENGINE, "relationship_type": "designed",
     "extraction_method": "manual", "confidence": 1.0, "properties": {"year": 1837}},
]  # fmt: skip


def load(tmp_path: Path, db: str | Path, *, tenant: str = "default") -> None:
    source = tmp_path / "graph.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in GRAPH), encoding="utf-8")
    assert "2 relationships" in imported(source, "--db", db, "--tenant", tenant)


#: A document naming Charles Babbage twice, the Analytical Engine and Ada Lovelace once.
NOTE = {
    "id": "engines",
    "title": "Engines",
    "text": "Charles Babbage designed the Analytical Engine. Ada Lovelace wrote for it, "
    "and Charles Babbage kept building.",
}


def add_note(tmp_path: Path, db: str | Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps(NOTE) + "\n", encoding="utf-8")
    status, _, err = run("add", notes, "--db", db)
    assert status == 0, err


@pytest.fixture
def graph_db(tmp_path: Path) -> Path:
    db = tmp_path / "graph.db"
    load(tmp_path, db)
    return db


@pytest.fixture
def noted_db(tmp_path: Path, graph_db: Path) -> Path:
    """The graph, and one document that names its entities."""
    add_note(tmp_path, graph_db)
    return graph_db


def server(db: str | Path, *extra: str) -> StdioServerParameters:
    """The real `redstring mcp` process, as an agent's configuration starts it."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "redstring.cli", "mcp", "--db", str(db), *extra]
    )


def answer(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(part, "text", "") for part in result.content)


async def test_the_server_lists_its_read_tools_and_answers_each_over_stdio(
    noted_db: Path,
) -> None:
    async with Client(server(noted_db)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"retrieve_context", "search_entities", "get_entity", "list_neighbors"}
        assert all(tool.description for tool in tools.values())
        assert tools["search_entities"].input_schema["required"] == ["query"]

        found = answer(await client.call_tool("search_entities", {"query": "Ada Lovelace", "k": 2}))
        assert found["matches"][0]["id"] == ADA
        assert found["matches"][0]["properties"] == {"born": 1815}
        assert len(found["matches"]) == 2

        entity = answer(await client.call_tool("get_entity", {"entity": "Charles Babbage"}))
        assert entity["entity"]["id"] == BABBAGE
        assert [
            (each["id"], each["direction"], each["other"]["name"])
            for each in entity["relationships"]
        ] == [
            (KNOWS, "incoming", "Ada Lovelace"),
            (DESIGNED, "outgoing", "Analytical Engine"),
        ]
        assert entity["relationships"][1]["properties"] == {"year": 1837}
        assert [
            (each["source_id"], each["title"], each["start"], each["end"])
            for each in entity["passages"]
        ] == [("engines", "Engines", 0, 15), ("engines", "Engines", 79, 94)]
        assert entity["passage_count"] == 2
        assert entity["passages"][0]["snippet"].startswith("Charles Babbage designed")

        context = answer(
            await client.call_tool("retrieve_context", {"query": "what did Charles Babbage design"})
        )
        [passage] = context["passages"]
        assert (passage["source_id"], passage["start"], passage["end"]) == ("engines", 0, 109)
        assert passage["bm25"] > 0
        assert passage["graph"] is not None  # the question names Charles Babbage
        assert [each["id"] for each in passage["entities"]] == [BABBAGE, ENGINE, ADA]
        assert {each["id"] for each in context["entities"]} == {ADA, BABBAGE, ENGINE}
        assert [each["id"] for each in context["relationships"]] == [KNOWS, DESIGNED]
        cut = answer(
            await client.call_tool(
                "retrieve_context", {"query": "what did Charles Babbage design", "budget_chars": 60}
            )
        )
        [passage] = cut["passages"]
        assert (passage["start"], passage["end"]) == (0, 47)
        assert passage["text"] == "Charles Babbage designed the Analytical Engine."
        # Only the entities named in what the budget left of the passage.
        assert [each["id"] for each in passage["entities"]] == [BABBAGE, ENGINE]

        near = answer(await client.call_tool("list_neighbors", {"entity": ADA, "depth": 2}))
        assert near["entity"]["name"] == "Ada Lovelace"
        assert [each["id"] for each in near["neighbors"]] == [BABBAGE, ENGINE]


async def test_a_bad_argument_is_a_clear_tool_error_and_the_server_goes_on(
    graph_db: Path,
) -> None:
    async with Client(server(graph_db)) as client:
        missing = await client.call_tool("get_entity", {"entity": "Nobody"})
        assert "no entity named 'Nobody' in this tenant" in error_text(missing)
        negative = await client.call_tool("search_entities", {"query": "Ada", "k": -1})
        assert "k must be within" in error_text(negative)
        assert "-1" in error_text(negative)
        wrong_type = await client.call_tool(
            "list_neighbors", {"entity": "Ada Lovelace", "depth": "x"}
        )
        assert "depth" in error_text(wrong_type)
        too_deep = await client.call_tool("list_neighbors", {"entity": "Ada Lovelace", "depth": 0})
        assert "depth" in error_text(too_deep)
        mode = await client.call_tool("search_entities", {"query": "Ada", "mode": "psychic"})
        assert "mode" in error_text(mode)
        blank = await client.call_tool("retrieve_context", {"query": " "})
        assert "query" in error_text(blank)
        budget = await client.call_tool("retrieve_context", {"query": "Ada", "budget_chars": 0})
        assert "budget_chars" in error_text(budget)
        assert "0" in error_text(budget)
        empty = answer(await client.call_tool("retrieve_context", {"query": "Ada"}))
        assert empty["passages"] == []
        documents = await client.call_tool("add_documents", {"documents": []})
        assert "add_documents" in error_text(documents)
        write = await client.call_tool("add_entities", {"entities": []})
        assert "add_entities" in error_text(write)
        # Still serving after every refusal.
        assert answer(await client.call_tool("get_entity", {"entity": ADA}))["entity"]["id"] == ADA


async def test_writes_are_offered_only_with_allow_writes_and_land_in_the_database(
    graph_db: Path,
) -> None:
    async with Client(server(graph_db, "--allow-writes", "--embeddings", "hash")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == set(READ_TOOLS + WRITE_TOOLS)
        added = answer(await client.call_tool("add_entities", {"entities": [
            {"name": "Lovelace Hall", "entity_type": "place", "properties": {"city": "London"}},
        ]}))["result"]  # fmt: skip
        assert [(each["name"], each["entity_type"]) for each in added] == [
            ("Lovelace Hall", "place")
        ]
        joined = answer(await client.call_tool("add_relationship", {
            "source": "Ada Lovelace", "target": added[0]["id"], "relationship_type": "named_after",
        }))  # fmt: skip
        assert joined["other"]["name"] == "Lovelace Hall"
        bad = await client.call_tool("add_relationship", {
            "source": "Ada Lovelace", "target": "Nowhere", "relationship_type": "x"})  # fmt: skip
        assert "no entity named 'Nowhere'" in error_text(bad)
        blank = await client.call_tool(
            "add_entities", {"entities": [{"name": " ", "entity_type": "x"}]}
        )
        assert "name" in error_text(blank)
        found = answer(
            await client.call_tool("search_entities", {"query": "Lovelace Hall", "k": 1})
        )
        assert found["matches"][0]["properties"] == {"city": "London"}
        wrote = answer(await client.call_tool("add_documents", {"documents": [
            {"id": "hall", "title": "The hall", "text": "Lovelace Hall honours Ada Lovelace."},
        ]}))  # fmt: skip
        assert wrote == {
            "documents": 1, "passages": 1, "replaced": 0, "mentions": 2, "linked_entities": 2,
        }  # fmt: skip
        hall = answer(await client.call_tool("get_entity", {"entity": "Lovelace Hall"}))
        assert [(each["source_id"], each["start"], each["end"]) for each in hall["passages"]] == [
            ("hall", 0, 13)
        ]
        context = answer(await client.call_tool("retrieve_context", {"query": "honours"}))
        assert [each["source_id"] for each in context["passages"]] == ["hall"]
    status, out, _ = await asyncio.to_thread(
        run, "neighbors", "Lovelace Hall", "--db", graph_db, "--json"
    )
    assert status == 0
    assert [row["id"] for row in json.loads(out)["neighbors"]] == [ADA]
    assert _integrity(graph_db) == "ok"


async def test_documents_added_while_a_read_only_server_runs_are_found(
    tmp_path: Path, graph_db: Path
) -> None:
    before = await asyncio.to_thread(graph_db.read_bytes)
    async with Client(server(graph_db)) as client:
        query = {"query": "what did Charles Babbage design"}
        assert answer(await client.call_tool("retrieve_context", query))["passages"] == []
        assert await asyncio.to_thread(graph_db.read_bytes) == before  # no chunk tables made
        await asyncio.to_thread(add_note, tmp_path, graph_db)
        found = answer(await client.call_tool("retrieve_context", query))
        assert [each["source_id"] for each in found["passages"]] == ["engines"]
        babbage = answer(await client.call_tool("get_entity", {"entity": BABBAGE}))
        assert babbage["passage_count"] == 2


async def test_a_bad_document_refuses_the_whole_batch_and_the_server_goes_on(
    graph_db: Path,
) -> None:
    async with Client(server(graph_db, "--allow-writes", "--embeddings", "hash")) as client:
        good = {"id": "good", "text": "Ada Lovelace wrote notes."}
        for bad, said in (
            ({"id": "blank", "text": "   "}, "documents[1] (id 'blank'): "),
            ({"id": " ", "text": "Some text."}, "documents[1] (id ' '): "),
            ({"id": "good", "text": "Again."}, "repeats the document id 'good'"),
            ({"id": "x", "text": "y", "author": "z"}, "author"),
            ({"text": "no id"}, "id"),
        ):
            refused = await client.call_tool("add_documents", {"documents": [good, bad]})
            assert said in error_text(refused)
        context = answer(await client.call_tool("retrieve_context", {"query": "Ada notes"}))
        assert context["passages"] == []
        wrote = answer(await client.call_tool("add_documents", {"documents": [good]}))
        assert (wrote["documents"], wrote["passages"]) == (1, 1)
    status, out, _ = await asyncio.to_thread(run, "ask", "notes", "--db", graph_db, "--json")
    assert status == 0
    assert [each["source_id"] for each in json.loads(out)["passages"]] == ["good"]


async def test_add_documents_links_names_written_in_lowercase_on_request(graph_db: Path) -> None:
    async with Client(server(graph_db, "--allow-writes", "--embeddings", "hash")) as client:
        await client.call_tool(
            "add_entities", {"entities": [{"name": "difference engine", "entity_type": "machine"}]}
        )
        note = {"id": "note", "text": "Ada Lovelace saw the difference engine."}
        plain = answer(await client.call_tool("add_documents", {"documents": [note]}))
        assert (plain["mentions"], plain["linked_entities"]) == (1, 1)
        lowercase = answer(
            await client.call_tool("add_documents", {"documents": [note], "link_lowercase": True})
        )
        assert (lowercase["mentions"], lowercase["linked_entities"]) == (2, 2)
        machine = answer(await client.call_tool("get_entity", {"entity": "difference engine"}))
        assert [each["source_id"] for each in machine["passages"]] == ["note"]


def test_the_tenant_option_scopes_every_tool(tmp_path: Path) -> None:
    db = tmp_path / "two.db"
    load(tmp_path, db)
    load(tmp_path, db, tenant="museum")

    async def names(tenant: str) -> list[str]:
        database = await open_database(str(db), read_only=True)
        async with database:
            tools = GraphTools(database, tenant_id_for(tenant), None)
            async with Client(build_server(tools, allow_writes=False)) as client:
                found = answer(
                    await client.call_tool("search_entities", {"query": "Ada", "mode": "lexical"})
                )
                return [each["id"] for each in found["matches"]]

    assert asyncio.run(names("museum"))[0] == ADA
    assert asyncio.run(names("nobody")) == []


async def test_tools_in_process_answer_as_over_stdio(graph_db: Path) -> None:
    reader = await open_database(str(graph_db), read_only=True)
    async with reader:
        tools = GraphTools(reader, tenant_id_for("default"), None)
        async with Client(build_server(tools, allow_writes=False)) as client:
            entity = answer(await client.call_tool("get_entity", {"entity": ENGINE}))
            assert entity["relationships"][0]["other"]["id"] == BABBAGE
            near = answer(await client.call_tool("list_neighbors", {"entity": "Analytical Engine"}))
            assert [each["id"] for each in near["neighbors"]] == [BABBAGE]
            lexical = answer(await client.call_tool("search_entities", {"query": "Babbage"}))
            assert lexical["matches"][0]["semantic"] is None
            bad = await client.call_tool("get_entity", {"entity": "Nobody"})
            assert "no entity named 'Nobody'" in error_text(bad)


async def test_a_query_asked_again_in_a_session_is_not_embedded_again(graph_db: Path) -> None:
    embeddings = FakeEmbeddingProvider(dimension=HASH_DIMENSION)
    reader = await open_database(str(graph_db), read_only=True)
    async with reader:
        tools = GraphTools(reader, tenant_id_for("default"), embeddings)
        assert isinstance(tools.embeddings, CachingEmbeddingProvider)
        async with Client(build_server(tools, allow_writes=False)) as client:
            first = answer(await client.call_tool("search_entities", {"query": "Babage"}))
            again = answer(await client.call_tool("search_entities", {"query": "Babage"}))
    assert again == first
    assert first["matches"][0]["semantic"] is not None
    assert embeddings.calls == (("Babage",),)


async def test_get_entity_gives_the_first_passages_and_counts_them_all(
    tmp_path: Path, graph_db: Path
) -> None:
    from redstring.cli.mcp_server import ENTITY_PASSAGES

    notes = tmp_path / "many.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"id": f"note-{n:02d}", "text": f"Ada Lovelace wrote note {n}."}) + "\n"
            for n in range(ENTITY_PASSAGES + 5)
        ),
        encoding="utf-8",
    )
    status, _, err = await asyncio.to_thread(run, "add", notes, "--db", graph_db)
    assert status == 0, err
    reader = await open_database(str(graph_db), read_only=True, chunks=True)
    async with reader:
        tools = GraphTools(reader, tenant_id_for("default"), None)
        found = await tools.get_entity("Ada Lovelace")
    assert found["passage_count"] == ENTITY_PASSAGES + 5
    assert [each["source_id"] for each in found["passages"]] == [
        f"note-{n:02d}" for n in range(ENTITY_PASSAGES)
    ]


async def test_write_tools_in_process_record_what_they_write(graph_db: Path) -> None:
    embeddings = FakeEmbeddingProvider(dimension=HASH_DIMENSION)
    writer = await open_database(str(graph_db), read_only=False, embeddings=embeddings)
    async with writer:
        tools = GraphTools(writer, tenant_id_for("default"), embeddings)
        async with Client(build_server(tools, allow_writes=True)) as client:
            added = answer(
                await client.call_tool(
                    "add_entities",
                    {
                        "entities": [
                            {
                                "name": "Lovelace Hall",
                                "entity_type": "place",
                                "description": "A hall.",
                            }
                        ]
                    },
                )
            )
            joined = answer(
                await client.call_tool(
                    "add_relationship",
                    {
                        "source": added["result"][0]["id"],
                        "target": "Ada Lovelace",
                        "relationship_type": "named_after",
                        "properties": {"since": 1990},
                    },
                )
            )
            bad = await client.call_tool(
                "add_relationship",
                {"source": "Ada Lovelace", "target": "Ada Lovelace", "relationship_type": " "},
            )
    assert joined["other"]["id"] == ADA
    assert joined["properties"] == {"since": 1990}
    assert "relationship_type" in error_text(bad)
    reader = await open_database(str(graph_db), read_only=True)
    async with reader:
        hall = await reader.graph.find_entities(tenant_id_for("default"), name="Lovelace Hall")
        assert [(each.description, each.entity_type) for each in hall] == [("A hall.", "place")]
        assert reader.vectors is not None
        assert await reader.vectors.get(hall[0].id, tenant_id_for("default")) is not None
    async with SqliteEventLog(graph_db) as log:
        kinds = [type(stored.event).__name__ for stored in await log.read()]
    assert kinds.count("DocumentExtracted") == 3


# -- the command itself, in process ---------------------------------------------


def _in_process(argv: list[str], messages: list[dict[str, Any]]) -> tuple[int, list[Any], str]:
    """Run `redstring mcp` in this process on `messages`; end its input once each request is answered."""  # noqa: E501
    request = "".join(json.dumps(message) + "\n" for message in messages).encode()
    asked = sum("id" in message for message in messages)
    output = io.BytesIO()
    out, err = io.TextIOWrapper(output, encoding="utf-8"), io.StringIO()
    read_end, write_end = os.pipe()
    served = threading.Event()

    def client() -> None:
        os.write(write_end, request)
        deadline = time.monotonic() + 30
        while output.getvalue().count(b"\n") < asked and time.monotonic() < deadline:
            if served.wait(0.01):
                break
        os.close(write_end)

    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.FileIO(read_end, "rb"), encoding="utf-8")
    writer = threading.Thread(target=client)
    writer.start()
    try:
        status = main(argv, out=out, err=err)
    finally:
        served.set()
        writer.join()
        sys.stdin.close()
        sys.stdin = saved
    out.flush()
    return status, [json.loads(line) for line in output.getvalue().splitlines()], err.getvalue()


HELLO: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]  # fmt: skip


def test_the_command_serves_stdin_until_it_ends_then_exits_0(graph_db: Path) -> None:
    status, replies, err = _in_process(["mcp", "--db", str(graph_db)], HELLO)
    assert status == 0, err
    listed = next(reply for reply in replies if reply.get("id") == 2)
    assert {tool["name"] for tool in listed["result"]["tools"]} == set(READ_TOOLS)


def test_the_command_with_writes_offers_the_write_tools(graph_db: Path) -> None:
    argv = ["mcp", "--db", str(graph_db), "--allow-writes", "--embeddings", "hash"]
    status, replies, err = _in_process(argv, HELLO)
    assert status == 0, err
    listed = next(reply for reply in replies if reply.get("id") == 2)
    assert {tool["name"] for tool in listed["result"]["tools"]} == set(READ_TOOLS + WRITE_TOOLS)


def test_the_command_refuses_a_missing_database_in_one_line(tmp_path: Path) -> None:
    status, replies, err = _in_process(["mcp", "--db", str(tmp_path / "none.db")], HELLO)
    assert (status, replies) == (1, [])
    assert err == f"redstring mcp: no such database: {tmp_path / 'none.db'}\n"


def test_the_command_refuses_vectors_of_a_model_it_lacks(graph_db: Path) -> None:
    connection = sqlite3.connect(graph_db)
    with connection:
        connection.execute("UPDATE vector_meta SET value = 'someone/else' WHERE key = 'model'")
    connection.close()
    status, _, err = _in_process(["mcp", "--db", str(graph_db)], HELLO)
    assert status == 1
    assert "'someone/else', which this command lacks" in err


def test_without_the_mcp_extra_the_command_says_what_to_install(
    graph_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "redstring.cli.mcp_server", None)
    status, out, err = run("mcp", "--db", graph_db)
    assert (status, out) == (1, "")
    assert "pip install 'redstring[mcp]'" in err


# -- what a closed session or a killed client leaves -------------------------------


def _integrity(db: Path) -> str:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


CLIENT = textwrap.dedent(
    """
    import asyncio, sys
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def main():
        params = StdioServerParameters(command=sys.executable, args=sys.argv[1:])
        async with Client(params) as client:
            for n in range(20):
                await client.call_tool("add_entities", {"entities": [
                    {"name": f"Written {n}", "entity_type": "note"}]})
                await client.call_tool("add_documents", {"documents": [
                    {"id": f"note-{n}", "text": f"Written {n} was noted."}]})
            print("written", flush=True)
            while True:
                await client.call_tool("search_entities", {"query": "Written", "k": 5})
                await client.call_tool("retrieve_context", {"query": "Written noted"})

    asyncio.run(main())
    """
)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _kill_client_mid_session(db: str) -> None:
    """Start a client that writes then reads on; SIGKILL it; wait for its server to go."""
    args = ["-m", "redstring.cli", "mcp", "--db", db, "--allow-writes", "--embeddings", "hash"]
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert client.stdout is not None
        assert client.stdout.readline() == "written\n"
        servers = _children(client.pid)
        assert servers
        os.kill(client.pid, signal.SIGKILL)
        client.wait(timeout=10)
        deadline = time.monotonic() + 20
        while any(Path(f"/proc/{pid}").exists() for pid in servers):
            assert time.monotonic() < deadline, "the server outlived its client"
            time.sleep(0.05)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if client.stdout is not None:
            client.stdout.close()


def test_killing_the_client_leaves_the_sqlite_database_whole(graph_db: Path) -> None:
    _kill_client_mid_session(str(graph_db))
    assert _integrity(graph_db) == "ok"
    status, out, err = run("stats", "--db", graph_db, "--json")
    assert status == 0, err
    stats = json.loads(out)
    assert (stats["entities"], stats["vectors"]) == (23, 23)
    status, out, _ = run("search", "Written 19", "--db", graph_db, "--json", "-k", "1")
    assert json.loads(out)["matches"][0]["name"] == "Written 19"
    _assert_every_note_held(graph_db)


def _assert_every_note_held(db: str | Path) -> None:
    """The 20 documents the killed client added are whole, each naming its entity."""
    status, out, err = run("ask", "Written noted", "--db", db, "--json", "-k", "50")
    assert status == 0, err
    found = json.loads(out)["passages"]
    assert sorted(each["source_id"] for each in found) == sorted(f"note-{n}" for n in range(20))
    assert all(
        [entity["name"] for entity in each["entities"]] == [f"Written {each['source_id'][5:]}"]
        for each in found
    )


@pytest.fixture
def postgres_db(postgres_dsn: str) -> Iterator[str]:
    """A URL for a fresh database on the session's server, dropped afterwards."""
    name = f"mcp_{uuid4().hex[:12]}"

    async def execute(statement: str) -> None:
        connection = await asyncpg.connect(postgres_dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(execute(f'CREATE DATABASE "{name}"'))
    from urllib.parse import urlsplit, urlunsplit

    yield urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{name}"))
    asyncio.run(execute(f'DROP DATABASE "{name}" WITH (FORCE)'))


async def test_closing_a_session_on_postgres_leaves_what_was_written(
    tmp_path: Path, postgres_db: str
) -> None:
    await asyncio.to_thread(load, tmp_path, postgres_db)
    async with Client(server(postgres_db, "--allow-writes", "--embeddings", "hash")) as client:
        answer(await client.call_tool("add_entities", {"entities": [
            {"name": "Lovelace Hall", "entity_type": "place"}]}))  # fmt: skip
        answer(await client.call_tool("add_documents", {"documents": [NOTE]}))
    async with Client(server(postgres_db)) as client:
        found = answer(await client.call_tool("get_entity", {"entity": "Lovelace Hall"}))
        assert found["entity"]["entity_type"] == "place"
        babbage = answer(await client.call_tool("get_entity", {"entity": BABBAGE}))
        assert [(each["start"], each["end"]) for each in babbage["passages"]] == [(0, 15), (79, 94)]
        context = answer(
            await client.call_tool("retrieve_context", {"query": "what did Charles Babbage design"})
        )
        assert [each["source_id"] for each in context["passages"]] == ["engines"]
        assert [each["id"] for each in context["relationships"]] == [KNOWS, DESIGNED]


def test_killing_the_client_leaves_the_postgres_database_whole(
    tmp_path: Path, postgres_db: str
) -> None:
    load(tmp_path, postgres_db)
    _kill_client_mid_session(postgres_db)
    status, out, err = run("stats", "--db", postgres_db, "--json")
    assert status == 0, err
    stats = json.loads(out)
    assert (stats["entities"], stats["vectors"]) == (23, 23)
    status, out, _ = run("neighbors", "Ada Lovelace", "--db", postgres_db, "--json")
    assert [row["id"] for row in json.loads(out)["neighbors"]] == [BABBAGE]
    _assert_every_note_held(postgres_db)


async def test_document_tools_in_process_write_whole_batches_and_serve_the_context(
    graph_db: Path,
) -> None:
    embeddings = FakeEmbeddingProvider(dimension=HASH_DIMENSION)
    writer = await open_database(str(graph_db), read_only=False, embeddings=embeddings, chunks=True)
    async with writer:
        tools = GraphTools(writer, tenant_id_for("default"), embeddings)
        async with Client(build_server(tools, allow_writes=True)) as client:
            bad = await client.call_tool(
                "add_documents", {"documents": [NOTE, {"id": " ", "text": "Nothing."}]}
            )
            assert "documents[1] (id ' ')" in error_text(bad)
            empty = answer(await client.call_tool("retrieve_context", {"query": "Babbage"}))
            assert empty["passages"] == []
            added = answer(await client.call_tool("add_documents", {"documents": [NOTE]}))
            assert (added["documents"], added["passages"], added["replaced"]) == (1, 1, 0)
            question = {"query": "What did Charles Babbage do?"}
            found = answer(await client.call_tool("retrieve_context", question))
    assert [each["source_id"] for each in found["passages"]] == ["engines"]
    assert {each["id"] for each in found["entities"]} >= {BABBAGE, ENGINE}


async def test_a_reader_started_before_any_passage_finds_them_once_added(
    tmp_path: Path, graph_db: Path
) -> None:
    reader = await open_database(str(graph_db), read_only=True, chunks=True)
    async with reader:
        assert reader.chunks is None
        tools = GraphTools(reader, tenant_id_for("default"), None, str(graph_db))
        before = await tools.retrieve_context("Babbage")
        await asyncio.to_thread(add_note, tmp_path, graph_db)
        after = await tools.retrieve_context("Babbage")
    assert before["passages"] == []
    assert [each["source_id"] for each in after["passages"]] == ["engines"]


async def test_passages_of_another_layout_version_are_refused_for_reading_and_writing(
    tmp_path: Path, graph_db: Path
) -> None:
    await asyncio.to_thread(add_note, tmp_path, graph_db)
    with sqlite3.connect(graph_db) as connection:
        connection.execute("UPDATE chunks_meta SET value = '99' WHERE name = 'schema_version'")
    connection.close()
    embeddings = FakeEmbeddingProvider(dimension=HASH_DIMENSION)
    for read_only in (True, False):
        with pytest.raises(CommandError, match=r"cannot read the passages of .*version 99"):
            await open_database(
                str(graph_db), read_only=read_only, embeddings=embeddings, chunks=True
            )
