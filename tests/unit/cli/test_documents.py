"""`redstring add` and `redstring ask`, in process against real SQLite files, and killed midway."""

from __future__ import annotations

import asyncio
import io
import json
import random
import shutil
import signal
import sqlite3
import sys
import textwrap
import time
from contextlib import suppress
from io import StringIO
from typing import TYPE_CHECKING, Any

import pytest

from redstring import (
    InMemoryChunkStore,
    SourceId,
    SqliteChunkStore,
    SqliteEventLog,
    chunk_id_for,
    replay,
)
from redstring.cli import main
from redstring.cli.documents import add_documents, ask_documents
from redstring.cli.stores import CommandError, tenant_id_for
from redstring.projections import ChunkProjection
from redstring.testing.factories import TENANT
from tests.unit.chunks.adapters.test_sqlite import write_version_2

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

CITIES: list[dict[str, object]] = [
    {"name": "Tokyo", "entity_type": "city", "properties": {"aliases": ["Edo"]}},
    {"name": "Kyoto", "entity_type": "city"},
]
NOTES = [
    {"id": "edo", "title": "From Edo to Tokyo", "text": "Before 1868 Tokyo was called Edo."},
    {"id": "kyoto", "text": "The emperor left Kyoto for the eastern capital."},
]
DEFAULT = tenant_id_for("default")


def run(*argv: str | Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        status = main([str(each) for each in argv], out=out, err=err)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def passages(out: str) -> list[dict[str, Any]]:
    """The passages of `ask --json`'s output."""
    found = json.loads(out)["passages"]
    assert isinstance(found, list)
    return found


def lines(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "cities.db"
    status, _, err = run(
        "import", lines(tmp_path / "cities.jsonl", CITIES), "--db", path, "--embeddings", "none"
    )
    assert status == 0, err
    return path


def test_add_then_ask_prints_passages_with_sources_offsets_and_the_entities_named(
    tmp_path: Path, database: Path
) -> None:
    status, out, err = run("add", lines(tmp_path / "notes.jsonl", NOTES), "--db", database)
    assert status == 0, err
    assert out == f"added 2 documents (2 passages) to {database}, 3 mentions of 2 entities\n"
    assert "documents: 2/2 documents" in err

    status, out, err = run("ask", "what was Tokyo called", "--db", database, "--json")
    assert status == 0, err
    [first] = passages(out)
    assert (first["source_id"], first["title"], first["start"], first["end"]) == (
        "edo",
        "From Edo to Tokyo",
        0,
        33,
    )
    assert [entity["name"] for entity in first["entities"]] == ["Tokyo"]
    assert first["score"] > 0

    # "Tokyo" names an entity, so the graph channel ranks the passage too.
    assert first["bm25"] > 0
    assert first["graph"] is not None
    assert first["dense"] is None
    assert json.loads(out)["entities"][0]["name"] == "Tokyo"
    assert first["chunk_id"] == str(chunk_id_for(DEFAULT, SourceId("edo"), 0, first["text"]))

    status, out, _ = run("ask", "emperor", "--db", database)
    assert status == 0
    table = out.splitlines()
    assert table[0].split() == [
        "rank",
        "score",
        "bm25",
        "graph",
        "source",
        "offsets",
        "passage",
        "entities",
    ]
    assert table[1].split()[3:5] == ["-", "kyoto"]
    assert table[1].split()[5] == "0-47"
    assert table[1].endswith("Kyoto")
    assert len(table) == 2  # no entity linked from the question: no entity table


def test_add_links_names_written_in_lowercase_on_request(tmp_path: Path) -> None:
    path = tmp_path / "topics.db"
    topics: list[dict[str, object]] = [
        {"name": "machine learning", "entity_type": "topic"},
        *CITIES,
    ]
    status, _, err = run(
        "import", lines(tmp_path / "topics.jsonl", topics), "--db", path, "--embeddings", "none"
    )
    assert status == 0, err
    note = lines(
        tmp_path / "note.jsonl", [{"id": "ml", "text": "In Kyoto she read machine learning."}]
    )
    status, out, err = run("add", note, "--db", path)
    assert (status, out.endswith(", 1 mentions of 1 entities\n")) == (0, True), err
    status, out, err = run("add", note, "--db", path, "--link-lowercase")
    assert (status, out.endswith(", 2 mentions of 2 entities, 1 replaced\n")) == (0, True), err
    status, out, _ = run("ask", "machine learning", "--db", path, "--json")
    assert [entity["name"] for entity in passages(out)[0]["entities"]] == [
        "Kyoto",
        "machine learning",
    ]


def test_adding_again_replaces_and_another_tenant_sees_nothing(
    tmp_path: Path, database: Path
) -> None:
    notes = lines(tmp_path / "notes.jsonl", NOTES)
    assert run("add", notes, "--db", database)[0] == 0
    status, out, _ = run("add", notes, "--db", database)
    assert (status, out.endswith(", 2 replaced\n")) == (0, True)
    status, out, _ = run("ask", "Tokyo", "--db", database, "--tenant", "other")
    assert (status, out) == (0, "no passage matches\n")
    status, out, _ = run("ask", "Tokyo", "--db", database, "--tenant", "other", "--json")
    assert (status, passages(out)) == (0, [])


def test_add_reads_standard_input(database: Path) -> None:
    status, out, err = run("add", "-", "--db", database, stdin=b"Edo grew along the bay.")
    assert status == 0, err
    assert "1 mentions of 1 entities" in out
    status, out, _ = run("ask", "bay", "--db", database, "--json")
    assert passages(out)[0]["source_id"] == "stdin"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"   \n", "bad.txt: is blank", id="blank"),
        pytest.param(b"caf\xe9", "bad.txt:1: not UTF-8 text", id="not-utf8"),
    ],
)
def test_bad_input_is_named_and_writes_nothing(
    tmp_path: Path, database: Path, content: bytes, message: str
) -> None:
    good = lines(tmp_path / "notes.jsonl", NOTES)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    before = database.read_bytes()
    status, out, err = run("add", good, bad, "--db", database)
    assert (status, out) == (1, "")
    assert f"redstring add: {bad.parent}/{message}" in err
    assert database.read_bytes() == before


def test_a_json_lines_row_without_text_is_named_and_creates_no_database(tmp_path: Path) -> None:
    rows = lines(tmp_path / "rows.jsonl", [NOTES[0], {"id": "x", "title": "no text"}])
    status, _, err = run("add", rows, "--db", tmp_path / "new.db")
    assert status == 1
    assert f"{rows}:2: has no text" in err
    assert not (tmp_path / "new.db").exists()


def test_ask_needs_an_existing_database(tmp_path: Path) -> None:
    status, _, err = run("ask", "x", "--db", tmp_path / "missing.db")
    assert status == 1
    assert "no such database" in err
    assert not (tmp_path / "missing.db").exists()


def test_ask_of_a_database_nothing_was_added_to_finds_nothing_and_changes_nothing(
    database: Path,
) -> None:
    before = database.read_bytes()
    status, out, err = run("ask", "Tokyo", "--db", database, "--json")
    assert (status, passages(out)) == (0, []), err
    assert database.read_bytes() == before


def test_delete_document_removes_its_passages_and_mentions_and_is_recorded(
    tmp_path: Path, database: Path
) -> None:
    notes = lines(tmp_path / "notes.jsonl", NOTES)
    assert run("add", notes, "--db", database)[0] == 0
    assert run("add", notes, "--db", database, "--tenant", "other")[0] == 0
    status, out, err = run("delete", "--document", "edo", "--document", "edo", "--db", database)
    assert (status, out) == (0, f"deleted 1 document (1 passage) from {database}\n"), err
    status, out, _ = run("ask", "Tokyo Edo", "--db", database, "--json")
    assert [each["source_id"] for each in passages(out)] == []
    status, out, _ = run("ask", "emperor", "--db", database, "--json")
    assert [each["source_id"] for each in passages(out)] == ["kyoto"]
    status, out, _ = run("ask", "Tokyo Edo", "--db", database, "--tenant", "other", "--json")
    assert [each["source_id"] for each in passages(out)] == ["edo"]

    async def replayed() -> list[str]:
        async with SqliteEventLog(database) as log:
            kinds = [type(stored.event).__name__ for stored in await log.read()]
            memory = InMemoryChunkStore()
            await replay(log, ChunkProjection(memory))
        found = await memory.search("Tokyo Edo emperor", DEFAULT)
        return kinds + sorted(each.chunk.source_id for each in found)

    assert asyncio.run(replayed())[-2:] == ["DocumentDeleted", "kyoto"]


def test_delete_of_a_document_the_tenant_lacks_is_refused_and_deletes_nothing(
    tmp_path: Path, database: Path
) -> None:
    assert run("add", lines(tmp_path / "notes.jsonl", NOTES), "--db", database)[0] == 0
    before = database.read_bytes()
    status, out, err = run(
        "delete", "--document", "kyoto", "--document", "nowhere", "--db", database
    )
    assert (status, out) == (1, "")
    assert err == "redstring delete: no document 'nowhere' in this tenant\n"
    status, _, err = run("delete", "--document", "kyoto", "--db", database, "--tenant", "x")
    assert (status, err) == (1, "redstring delete: no document 'kyoto' in this tenant\n")
    assert database.read_bytes() == before
    status, _, err = run("delete", "Tokyo", "--document", "kyoto", "--db", database)
    assert status == 2
    assert "one of them" in err


def test_deleting_an_entire_tenant_removes_its_passages_too(tmp_path: Path, database: Path) -> None:
    notes = lines(tmp_path / "notes.jsonl", NOTES)
    assert run("add", notes, "--db", database)[0] == 0
    assert run("add", notes, "--db", database, "--tenant", "other")[0] == 0
    status, out, err = run("delete", "--entire-tenant", "--db", database)
    assert (status, out) == (0, "deleted tenant 'default': 2 entities, 0 vectors, 2 passages\n")
    assert err == ""
    status, out, _ = run("ask", "Tokyo", "--db", database, "--json")
    assert passages(out) == []
    status, out, _ = run("ask", "Tokyo", "--db", database, "--tenant", "other", "--json")
    assert [each["source_id"] for each in passages(out)] == ["edo"]


async def test_the_actions_run_without_click_and_a_replay_of_the_log_agrees(
    tmp_path: Path, database: Path
) -> None:
    from redstring.cli.sources import read_sources

    documents = read_sources([str(lines(tmp_path / "n.jsonl", NOTES))], stdin=io.BytesIO())
    report = await add_documents(str(database), documents, DEFAULT)
    assert report.documents == 2
    [passage] = (await ask_documents(str(database), "eastern capital", DEFAULT, k=1))["passages"]
    assert [entity["name"] for entity in passage["entities"]] == ["Kyoto"]
    with pytest.raises(CommandError, match="no such database"):
        await ask_documents(str(tmp_path / "none.db"), "x", DEFAULT)

    rebuilt = InMemoryChunkStore()
    async with SqliteEventLog(database) as log:
        await replay(log, ChunkProjection(rebuilt))
    async with SqliteChunkStore(database) as held:
        for source in ("edo", "kyoto"):
            chunks = await held.get_source_chunks(SourceId(source), DEFAULT)
            assert await rebuilt.get_source_chunks(SourceId(source), DEFAULT) == chunks
            ids = [chunk.id for chunk in chunks]
            assert await rebuilt.mentions_in(ids, DEFAULT) == await held.mentions_in(ids, DEFAULT)


ADDER = """
    import sys
    import redstring.cli.app
    import redstring.cli.progress
    from redstring.cli import main
    redstring.cli.progress.LINE_INTERVAL_SECONDS = 0.0  # a progress line per document linked
    sys.exit(main(["add", sys.argv[1], "--db", sys.argv[2]]))
"""
#: Documents in the killed add: enough that its writes take a while.
KILLED_DOCUMENTS = 3000
#: The add's last progress line before its writes: every document but the last is linked.
LAST_LINKED = f"documents: {KILLED_DOCUMENTS - 1:,}/{KILLED_DOCUMENTS:,} documents"
#: How many adds may finish before the kill lands, each timing the next, before the test fails.
KILL_ATTEMPTS = 4


async def _adder(notes: Path, path: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        textwrap.dedent(ADDER),
        str(notes),
        str(path),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def _writing(process: asyncio.subprocess.Process) -> float:
    """When the add printed its last progress line before its writes (read from its stderr)."""
    assert process.stderr is not None
    while True:
        line = await asyncio.wait_for(process.stderr.readline(), timeout=120)
        assert line, "the add ended before linking its documents"
        if line.decode().startswith(LAST_LINKED):
            return time.perf_counter()


async def _killed_while_writing(notes: Path, database: Path, scratch: Path) -> float:
    """Run the add on `database`, SIGKILLed inside its writes; the delay it was killed at.

    The writes are timed on a copy of `database` first, from the add's last
    progress line to its exit; the kill falls at a random 5-90% of that
    after the same line. An add that finishes first (the machine got
    faster) times the next attempt, on the database as it was. `scratch`
    is a directory for the copies.
    """
    before, timing = scratch / "before.db", scratch / "timing.db"
    await asyncio.to_thread(shutil.copyfile, database, before)
    await asyncio.to_thread(shutil.copyfile, database, timing)
    process = await _adder(notes, timing)
    began = await _writing(process)
    assert await process.wait() == 0
    writes = time.perf_counter() - began
    for _ in range(KILL_ATTEMPTS):
        await asyncio.to_thread(shutil.copyfile, before, database)
        process = await _adder(notes, database)
        try:
            began = await _writing(process)
            delay = random.uniform(0.05, 0.9) * writes
            await asyncio.sleep(delay)
        finally:
            with suppress(ProcessLookupError):
                process.kill()
            status = await process.wait()
        if status == -signal.SIGKILL:
            return delay
        assert status == 0
        writes = time.perf_counter() - began
    raise AssertionError(f"every one of {KILL_ATTEMPTS} adds finished before it was killed")


async def _held(path: Path) -> tuple[int, int, int]:
    """(events in the log, chunks, mentions of Tokyo) the file holds for the default tenant."""
    async with SqliteEventLog(path) as log:
        events = len(await log.read())
    async with SqliteChunkStore(path) as chunks:
        count = await chunks.count_chunks(DEFAULT)
        edo = await chunks.get_source_chunks(SourceId("doc-0"), DEFAULT)
        mentions = len(await chunks.mentions_in([c.id for c in edo], DEFAULT)) if edo else 0
    return events, count, mentions


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
async def test_an_add_killed_midway_leaves_its_writes_whole_or_absent(
    tmp_path: Path, database: Path
) -> None:
    rows = [
        {"id": f"doc-{n}", "text": f"Edo and Tokyo, entry {n}: the bay, the river and the hills."}
        for n in range(KILLED_DOCUMENTS)
    ]
    notes = lines(tmp_path / "many.jsonl", rows)
    delay = await _killed_while_writing(notes, database, tmp_path)

    imported_events = 1  # the cities' import
    events, chunks, mentions = await _held(database)
    assert events - imported_events in (0, KILLED_DOCUMENTS), f"killed {delay:.3f}s in"
    assert chunks in (0, KILLED_DOCUMENTS), f"killed {delay:.3f}s in"
    assert mentions in (0, 2), f"killed {delay:.3f}s in"
    assert chunks == 0 or events - imported_events == KILLED_DOCUMENTS  # the log comes first
    if events - imported_events == KILLED_DOCUMENTS:  # a replay finishes what the log holds
        async with SqliteEventLog(database) as log, SqliteChunkStore(database) as store:
            await replay(log, ChunkProjection(store))
        assert await _held(database) == (events, KILLED_DOCUMENTS, 2)


def test_ask_gives_the_context_entities_relationships_and_fits_a_budget(tmp_path: Path) -> None:
    from tests.unit.cli.test_mcp import ADA, BABBAGE, DESIGNED, ENGINE, KNOWS, NOTE, load

    db = tmp_path / "graph.db"
    load(tmp_path, db)
    assert run("add", lines(tmp_path / "notes.jsonl", [NOTE]), "--db", db)[0] == 0
    status, out, err = run("ask", "what did Charles Babbage design", "--db", db, "--json")
    assert status == 0, err
    found = json.loads(out)
    assert found["query"] == "what did Charles Babbage design"
    [passage] = found["passages"]
    assert (passage["source_id"], passage["start"], passage["end"]) == ("engines", 0, 109)
    assert [each["id"] for each in passage["entities"]] == [BABBAGE, ENGINE, ADA]
    assert {each["id"] for each in found["entities"]} == {ADA, BABBAGE, ENGINE}
    assert found["entities"][0]["id"] == BABBAGE  # named in the question
    assert [
        (each["id"], each["source"]["id"], each["relationship_type"], each["target"]["id"])
        for each in found["relationships"]
    ] == [(KNOWS, ADA, "knows", BABBAGE), (DESIGNED, BABBAGE, "designed", ENGINE)]

    status, out, err = run(
        "ask", "what did Charles Babbage design", "--db", db, "--json", "--budget-chars", "60"
    )
    assert status == 0, err
    [trimmed] = json.loads(out)["passages"]
    assert (trimmed["text"], trimmed["start"], trimmed["end"]) == (
        "Charles Babbage designed the Analytical Engine.",
        0,
        47,
    )
    status, out, _ = run("ask", "what did Charles Babbage design", "--db", db)
    table = out.splitlines()
    assert table[-3].split() == ["source", "relationship", "target"]
    assert table[-2].split() == ["Ada", "Lovelace", "knows", "Charles", "Babbage"]
    assert table[-1].split() == ["Charles", "Babbage", "designed", "Analytical", "Engine"]


def test_ask_refuses_a_bad_budget_or_a_blank_question_naming_it(database: Path) -> None:
    status, _, err = run("ask", "Tokyo", "--db", database, "--budget-chars", "0")
    assert status == 2
    assert "--budget-chars" in err
    status, _, err = run("ask", "   ", "--db", database)
    assert status == 1
    assert err.startswith("redstring ask: ")
    assert "query" in err


def test_ask_of_older_passages_names_migrate_which_upgrades_them(database: Path) -> None:
    write_version_2(database)  # passages as chunk store schema version 2 laid them out
    status, _, err = run("ask", "apple", "--db", database)
    assert status == 1
    assert "holds older redstring passages" in err
    assert f"run `redstring migrate --db {database}` once" in err
    status, out, err = run("migrate", "--db", database)
    assert (status, out) == (0, f"{database}: migrated to the current schema\n"), err
    status, _, err = run("ask", "apple", "--db", database, "--tenant", str(TENANT))
    assert status == 0, err
    status, out, _ = run("migrate", "--db", database)
    assert out == f"{database}: already at the current schema\n"


def test_ask_of_passages_from_a_newer_redstring_does_not_offer_migrate(
    database: Path, tmp_path: Path
) -> None:
    notes = lines(tmp_path / "notes.jsonl", [{"id": "n", "text": "Tokyo was Edo."}])
    assert run("add", notes, "--db", database)[0] == 0
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE chunks_meta SET value = '99' WHERE name = 'schema_version'")
    connection.close()
    status, _, err = run("ask", "Tokyo", "--db", database)
    assert status == 1
    assert "version 99 (written by a newer redstring)" in err
    assert "migrate" not in err
