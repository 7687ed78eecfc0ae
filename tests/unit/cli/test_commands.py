"""The commands beyond import/build/search, the input formats, and the edges of every command.

Driven in process through `main(argv, out=, err=)` against real SQLite
files, embedding with `--embeddings hash`.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sqlite3
import sys
import threading
from io import StringIO
from typing import TYPE_CHECKING, Any

import click
import pytest

from redstring import (
    FakeEmbeddingProvider,
    GraphProjection,
    InMemoryGraphStore,
    InMemoryVectorStore,
    SqliteEventLog,
    VectorProjection,
    replay,
)
from redstring.cli import actions, app, main
from redstring.cli.stores import CommandError, open_database, tenant_id_for
from redstring.composition import import_entities
from redstring.domain.exceptions import EmbeddingModelMismatchError
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from redstring.domain.entity import Entity


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


def imported(*argv: str | Path, stdin: bytes | None = None) -> str:
    status, out, err = run("import", *argv, "--embeddings", "hash", stdin=stdin)
    assert status == 0, err
    return out


def entities(db: Path, tenant: str = "default") -> list[Entity]:
    async def read() -> list[Entity]:
        async with SqliteGraphStore(db, read_only=True) as graph:
            return await graph.find_entities(tenant_id_for(tenant))

    return asyncio.run(read())


def by_name(db: Path, tenant: str = "default") -> dict[str, Entity]:
    return {entity.name: entity for entity in entities(db, tenant)}


def files(directory: Path) -> dict[str, bytes]:
    """Every file's bytes, less the shared-memory index and empty log a reader makes."""
    return {
        path.name: path.read_bytes()
        for path in sorted(directory.iterdir())
        if not path.name.endswith("-shm")
        and not (path.name.endswith("-wal") and not path.stat().st_size)
    }


PEOPLE = "name,entity_type,born\nAda Lovelace,person,1815\nAlan Turing,person,1912\n"


@pytest.fixture
def people(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text(PEOPLE, encoding="utf-8")
    return path


@pytest.fixture
def graph_db(tmp_path: Path) -> Path:
    """Three entities and two relationships, from an export-format file."""
    rows = [
        {"redstring": "entity", "id": f"00000000-0000-4000-8000-00000000000{n}", "name": name,
         "entity_type": kind, "extraction_method": "manual", "confidence": 1.0}
        for n, name, kind in [(1, "Ada", "person"), (2, "Babbage", "person"), (3, "Engine", "machine")]  # noqa: E501
    ] + [
        {"redstring": "relationship", "id": f"00000000-0000-4000-8000-0000000000a{n}",
         "source_entity_id": f"00000000-0000-4000-8000-00000000000{a}",
         "target_entity_id": f"00000000-0000-4000-8000-00000000000{b}",
         "relationship_type": "knows", "extraction_method": "manual", "confidence": 1.0}
        for n, a, b in [(1, 1, 2), (2, 2, 3)]
    ]  # fmt: skip
    source = tmp_path / "graph.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    db = tmp_path / "graph.db"
    assert "2 relationships" in imported(source, "--db", db)
    return db


# -- the command itself ---------------------------------------------------------


def test_version_prints_the_package_version() -> None:
    assert run("--version")[:2] == (0, "redstring 0.3.0\n")


def test_every_option_of_every_command_has_help() -> None:
    for name, command in app.cli.commands.items():
        assert command.help, name
        for parameter in command.params:
            if isinstance(parameter, click.Option):
                assert parameter.help, f"{name} {parameter.opts}"


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run("--help")
    assert status == 0
    for name in ("import", "build", "search", "stats", "export", "delete", "neighbors", "migrate"):
        assert f"  {name} " in out


def test_without_the_cli_extra_the_command_prints_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "click", None)
    monkeypatch.delitem(sys.modules, "redstring.cli.app")
    assert run("--version")[:2] == (0, "redstring 0.3.0\n")
    status, out, err = run("stats", "--db", "x.db")
    assert status == 1
    assert out == ""
    assert err == (
        "redstring: the command line needs the cli extra (click is missing): "
        "pip install 'redstring[cli]'\n"
    )


def test_a_missing_module_other_than_the_extra_s_is_not_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redstring.cli.app", None)
    with pytest.raises(ModuleNotFoundError):
        run("--help")


# -- input formats ----------------------------------------------------------------


def test_a_csv_with_a_byte_order_mark_and_capitalised_headers_imports(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes("\ufeffName,Entity_Type,Born\nAda Lovelace,person,1815\n".encode())
    imported(path, "--db", tmp_path / "db")
    [ada] = entities(tmp_path / "db")
    assert (ada.name, ada.entity_type, ada.properties) == (
        "Ada Lovelace",
        "person",
        {"Born": "1815"},
    )


def test_tsv_json_arrays_and_standard_input_import(tmp_path: Path) -> None:
    db = tmp_path / "db"
    (tmp_path / "a.tsv").write_text("name\tentity_type\nAda\tperson\n", encoding="utf-8")
    (tmp_path / "b.json").write_text(
        json.dumps([{"name": "Alan", "entity_type": "person", "properties": {"born": 1912}}]),
        encoding="utf-8",
    )
    imported(tmp_path / "a.tsv", "--db", db)
    imported(tmp_path / "b.json", "--db", db)
    imported("-", "--db", db, stdin=b'{"name": "Grace", "entity_type": "person"}\n')
    imported("-", "--db", db, stdin=b'[{"name": "Edsger", "entity_type": "person"}]')
    out = imported("-", "--db", db, "--format", "csv", stdin=b"name,entity_type\nBarbara,person\n")
    assert out.startswith("imported 1 entity from - into ")
    assert sorted(by_name(db)) == ["Ada", "Alan", "Barbara", "Edsger", "Grace"]
    assert by_name(db)["Alan"].properties == {"born": 1912}
    assert by_name(db)["Grace"].source_id == "import:stdin"


def test_duplicate_rows_are_merged_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    rows = [{"name": "Ada", "entity_type": "person", "properties": {"n": n}} for n in (1, 2)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = imported(path, "--db", tmp_path / "db")
    assert out.endswith(", 1 duplicate row merged\n")
    [ada] = entities(tmp_path / "db")
    assert ada.properties == {"n": 2}


def test_an_id_column_sets_the_ids_a_uuid_kept_and_other_text_mapped(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    uuid = "00000000-0000-4000-8000-000000000007"
    path.write_text(f"sku,name,entity_type\n{uuid},Ada,person\nA-1,Alan,person\n", encoding="utf-8")
    imported(path, "--db", tmp_path / "db", "--id-column", "sku")
    imported(path, "--db", tmp_path / "other", "--id-column", "sku")
    found, again = by_name(tmp_path / "db"), by_name(tmp_path / "other")
    assert str(found["Ada"].id) == uuid
    assert found["Alan"].id == again["Alan"].id
    assert found["Ada"].properties == {}


def test_reimporting_embeds_only_what_changed(tmp_path: Path, people: Path) -> None:
    db = tmp_path / "db"
    assert "2 embedded" in imported(people, "--db", db)
    people.write_text(PEOPLE + "Grace Hopper,person,1906\n", encoding="utf-8")
    assert imported(people, "--db", db).endswith(
        ", 1 embedded with fake/hash-v1, 2 already embedded\n"
    )


BAD_INPUTS: dict[str, tuple[str, bytes, str]] = {
    "missing field": ("p.csv", b"name,type\nAda,person\n", "p.csv:2: missing field `entity_type`"),
    "not a string": ("p.jsonl", b'{"name": 7, "entity_type": "x"}\n', "p.jsonl:1: `name` must be a string"),  # noqa: E501
    "not an object": ("p.jsonl", b"[1]\n", "p.jsonl:1: a row must be a JSON object"),
    "bad properties": ("p.jsonl", b'{"name": "a", "entity_type": "x", "properties": 1}\n', "p.jsonl:1: `properties` must be an object"),  # noqa: E501
    "not json": ("p.jsonl", b'{"name": \n', "p.jsonl:1: not JSON: Expecting value"),
    "array of rows": ("p.json", b'{"name": "a"}', "p.json: a .json file must hold an array of rows"),  # noqa: E501
    "bad array": ("p.json", b"[\n1,\n", "p.json:3: not JSON: Expecting value"),
    "deep": ("p.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n", "p.jsonl:1: JSON nested too deeply"),  # noqa: E501
    "huge field": ("p.csv", b"name,entity_type\n" + b"a" * 200_000 + b",x\n", "p.csv:2: field larger than field limit (131072)"),  # noqa: E501
    "not utf-8": ("p.csv", b"name,entity_type\nCaf\xe9,place\n", "p.csv:2: not UTF-8 text (byte 20 of the file)"),  # noqa: E501
    "same column twice": ("p.csv", b"name,Name,entity_type\n", "p.csv:1: two columns have the same name"),  # noqa: E501
    "extra field": ("p.tsv", b"name\tentity_type\na\tb\tc\n", "p.tsv:2: more fields than the header names"),  # noqa: E501
    "blank name": ("p.jsonl", b'{"name": " ", "entity_type": "x"}\n', "p.jsonl:1: name: Value error, name must not be blank: ' '"),  # noqa: E501
    "no id": ("p.jsonl", b'{"name": "a", "entity_type": "x"}\n', "p.jsonl:1: missing field `sku` (the id column)"),  # noqa: E501
    "bad export kind": ("p.jsonl", b'{"redstring": "vector"}\n', "p.jsonl:1: `redstring` must be 'entity', 'relationship' or 'mention', got 'vector'"),  # noqa: E501
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_a_bad_input_is_one_line_naming_where_and_writes_nothing(tmp_path: Path, case: str) -> None:
    name, data, message = BAD_INPUTS[case]
    good = b'{"name": "Ada", "entity_type": "person", "sku": 1}\n' if name.endswith("l") else b""
    (tmp_path / name).write_bytes(good + data if good and case != "deep" else data)
    os.chdir(tmp_path)
    extra = ["--id-column", "sku"] if case == "no id" else []
    status, out, err = run("import", name, "--db", "out.db", "--embeddings", "hash", *extra)
    assert status == 1
    assert out == ""
    line = err.removesuffix("\n")
    assert "\n" not in line
    expected = message.replace(":1:", ":2:") if good and case not in {"deep"} else message
    assert line == f"redstring import: {expected}"
    assert not (tmp_path / "out.db").exists()


def test_a_directory_or_a_missing_directory_is_named(tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert (
        run("import", tmp_path, "--db", db)[2]
        == f"redstring import: {tmp_path} is a directory, not a file\n"
    )
    missing = tmp_path / "nowhere" / "p.csv"
    assert run("import", missing, "--db", db)[2] == (
        f"redstring import: no such directory: {missing.parent}\n"
    )
    assert run("build", missing, "--db", db, "--llm-url", "u", "--model", "m")[2] == (
        f"redstring build: no such directory: {missing.parent}\n"
    )


# -- one model per file, and the loser writes nothing --------------------------------


def test_importing_without_embeddings_into_a_file_with_vectors_is_refused(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "db"
    imported(people, "--db", db)
    before = files(tmp_path)
    status, _, err = run("import", people, "--db", db, "--embeddings", "none")
    assert status == 1
    assert "would hide its entities from semantic search; pass --embeddings hash" in err
    assert files(tmp_path) == before


def test_importing_with_embeddings_into_a_file_without_vectors_is_refused(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "db"
    assert run("import", people, "--db", db, "--embeddings", "none")[0] == 0
    status, _, err = run("import", people, "--db", db, "--embeddings", "hash")
    assert status == 1
    assert "holds 2 entities without vectors" in err
    assert run("import", people, "--db", db, "--embeddings", "none")[0] == 0


async def test_of_two_imports_racing_with_different_models_one_claims_the_file(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "new.db")
    first = FakeEmbeddingProvider(dimension=384)
    second = FakeEmbeddingProvider(model="fake/other", dimension=384)
    outcomes = await asyncio.gather(
        open_database(location, read_only=False, embeddings=first),
        open_database(location, read_only=False, embeddings=second),
        return_exceptions=True,
    )
    won = [each for each in outcomes if not isinstance(each, BaseException)]
    lost = [each for each in outcomes if isinstance(each, BaseException)]
    assert len(won) == 1
    assert [type(each) for each in lost] == [EmbeddingModelMismatchError]
    await won[0].close()


def test_two_concurrent_imports_with_different_models_leave_only_the_winner_s_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    (tmp_path / "a.csv").write_text("name,entity_type\nAda,person\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("name,entity_type\nAlan,person\n", encoding="utf-8")
    results: dict[str, int] = {}

    def one(name: str, model: str) -> None:
        out, err = StringIO(), StringIO()
        results[name] = main(
            ["import", str(tmp_path / name), "--db", str(db), "--embeddings", model],
            out=out,
            err=err,
        )

    threads = [
        threading.Thread(target=one, args=("a.csv", "hash")),
        threading.Thread(target=one, args=("b.csv", "local")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results.values()) == [0, 1]
    winner = "Ada" if results["a.csv"] == 0 else "Alan"
    assert list(by_name(db)) == [winner]


# -- read commands never write ---------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["search", "Ada"],
        ["stats"],
        ["export"],
        ["neighbors", "Ada"],
        ["delete", "Ada"],
    ],
)
def test_a_sqlite_file_that_is_not_a_redstring_database_is_refused_untouched(
    tmp_path: Path, command: list[str]
) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()
    before = files(tmp_path)
    status, _, err = run(*command, "--db", other)
    assert status == 1
    assert err == (
        f"redstring {command[0]}: {other} is not a redstring database "
        "(the file holds no redstring graph)\n"
    )
    assert files(tmp_path) == before


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    status, _, err = run("stats", "--db", junk)
    assert status == 1
    assert err.startswith(f"redstring stats: {junk} is not a redstring database (")


def test_reads_leave_the_database_byte_for_byte_unchanged(tmp_path: Path, graph_db: Path) -> None:
    before = files(tmp_path)
    for command in (["search", "Ada"], ["stats"], ["export"], ["neighbors", "Ada"]):
        assert run(*command, "--db", graph_db)[0] == 0
    assert files(tmp_path) == before


def test_a_lexical_only_database_is_searched_without_creating_vector_tables(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "db"
    assert run("import", people, "--db", db, "--embeddings", "none")[0] == 0
    status, out, err = run("search", "Ada Lovelace", "--db", db, "--json")
    assert status == 0
    assert err == "no vectors in this database: searching the lexical channel only\n"
    assert json.loads(out)["matches"][0]["semantic"] is None
    assert asyncio.run(SqliteVectorStore.stored_settings(db)) is None


# -- search, stats, export, delete, neighbors --------------------------------------


def test_search_json_has_ids_types_properties_and_both_scores(tmp_path: Path, people: Path) -> None:
    db = tmp_path / "db"
    imported(people, "--db", db)
    status, out, _ = run("search", "Ada Lovelace", "--db", db, "--json", "-k", "1")
    assert status == 0
    [match] = json.loads(out)["matches"]
    ada = by_name(db)["Ada Lovelace"]
    assert match == {
        "rank": 1,
        "id": str(ada.id),
        "name": "Ada Lovelace",
        "entity_type": "person",
        "score": pytest.approx(2 / 61),
        "semantic": pytest.approx(1.0),
        "lexical": pytest.approx(1.0),
        "properties": {"born": "1815"},
    }


def test_search_says_on_stderr_when_the_tenant_or_a_type_holds_nothing(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "db"
    imported(people, "--db", db, "--tenant", "acme")
    assert run("search", "Ada", "--db", db, "--tenant", "globex") == (
        0,
        "no matches\n",
        f"tenant 'globex' holds no entities in {db}\n",
    )
    status, out, err = run(
        "search",
        "Ada Lovelace",
        "--db",
        db,
        "--tenant",
        "acme",
        "--type",
        "robot",
        "--type",
        "person",
    )
    assert (status, err) == (0, "tenant 'acme' holds no entity of type 'robot'\n")
    assert "Ada Lovelace" in out
    status, out, err = run("search", "Ada", "--db", db, "--tenant", "globex", "--json")
    assert json.loads(out)["matches"] == []


def test_a_table_cuts_a_long_name_with_an_ellipsis_and_aligns_wide_characters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "name,entity_type\n" + "東京" * 30 + ",city\n" + "Tokyo Tower,building\n", encoding="utf-8"
    )
    db = tmp_path / "db"
    imported(path, "--db", db)
    out = run("search", "東京", "--db", db)[1]
    header, *rows = out.splitlines()
    assert rows[0].startswith("1  ") or rows[1].startswith("2  ")
    long_row = next(row for row in rows if "東京" in row)
    assert "…" in long_row
    from rich.cells import cell_len

    type_column = [header.index("type")]
    for row in rows:
        start = cell_len(row[: row.index("city" if "東京" in row else "building")])
        assert start == type_column[0]


def test_stats_counts_entities_relationships_vectors_models_and_tenants(
    tmp_path: Path, graph_db: Path, people: Path
) -> None:
    imported(people, "--db", graph_db, "--tenant", "acme")
    status, out, _ = run("stats", "--db", graph_db, "--json")
    assert status == 0
    stats = json.loads(out)
    assert {key: stats[key] for key in ("entities", "relationships", "vectors", "models")} == {
        "entities": 5,
        "relationships": 2,
        "vectors": 5,
        "models": ["fake/hash-v1"],
    }
    assert sorted((row["tenant"], row["entities"]) for row in stats["tenants"]) == [
        (str(tenant_id_for("acme")), 2),
        ("default", 3),
    ]
    text = run("stats", "--db", graph_db)[1]
    assert text.startswith(
        "5 entities, 2 relationships, 5 vectors in 2 tenants; model: fake/hash-v1\n"
    )


def test_stats_of_an_empty_lexical_file_says_there_is_no_model(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "db"
    assert run("import", people, "--db", db, "--embeddings", "none")[0] == 0
    assert run("delete", "--entire-tenant", "--db", db)[0] == 0
    assert run("stats", "--db", db)[1] == (
        "0 entities, 0 relationships, 0 vectors in 0 tenants; model: none (no vectors)\n"
    )


def test_export_reimports_to_the_same_content_in_another_file_and_tenant(
    tmp_path: Path, graph_db: Path
) -> None:
    status, exported, _ = run("export", "--db", graph_db)
    assert status == 0
    copy = tmp_path / "copy.db"
    imported("-", "--db", copy, "--tenant", "museum", stdin=exported.encode())

    def content(db: Path, tenant: str) -> list[dict[str, Any]]:
        return [entity.model_dump(exclude={"tenant_id"}) for entity in entities(db, tenant)]

    assert content(copy, "museum") == content(graph_db, "default")
    assert run("export", "--db", copy, "--tenant", "museum")[1] == exported
    assert run("neighbors", "Babbage", "--db", copy, "--tenant", "museum", "--json")[0] == 0


def test_delete_removes_an_entity_from_both_channels_by_id_or_name(graph_db: Path) -> None:
    ada = by_name(graph_db)["Ada"]
    assert run("delete", str(ada.id), "Engine", "--db", graph_db) == (
        0,
        f"deleted 2 entities from {graph_db}\n",
        "",
    )
    assert list(by_name(graph_db)) == ["Babbage"]
    stats = json.loads(run("stats", "--db", graph_db, "--json")[1])
    assert (stats["entities"], stats["relationships"], stats["vectors"]) == (1, 0, 1)
    search = json.loads(run("search", "Ada", "--db", graph_db, "--json", "--mode", "semantic")[1])
    assert [match["name"] for match in search["matches"]] == ["Babbage"]


def test_delete_refuses_an_unknown_or_ambiguous_entity_and_deletes_nothing(
    tmp_path: Path, graph_db: Path
) -> None:
    unknown = "00000000-0000-4000-8000-000000000099"
    assert run("delete", unknown, "--db", graph_db)[2] == (
        f"redstring delete: no entity {unknown} in this tenant\n"
    )
    assert run("delete", "Ada", "Nobody", "--db", graph_db)[2] == (
        "redstring delete: no entity named 'Nobody' in this tenant\n"
    )
    twins = tmp_path / "twins.jsonl"
    twins.write_text(
        '{"name": "Ada", "entity_type": "robot"}\n{"name": "ADA", "entity_type": "ship"}\n',
        encoding="utf-8",
    )
    imported(twins, "--db", graph_db)
    status, _, err = run("delete", "ada", "--db", graph_db)
    assert status == 1
    assert "3 entities are named 'ada': pass an id" in err
    assert len(entities(graph_db)) == 5


def test_delete_entire_tenant_leaves_other_tenants(
    tmp_path: Path, graph_db: Path, people: Path
) -> None:
    imported(people, "--db", graph_db, "--tenant", "acme")
    assert run("delete", "--entire-tenant", "--db", graph_db, "--tenant", "acme")[1] == (
        "deleted tenant 'acme': 2 entities, 2 vectors\n"
    )
    assert entities(graph_db, "acme") == []
    assert len(entities(graph_db)) == 3


def test_delete_needs_entities_or_entire_tenant_but_not_both(graph_db: Path) -> None:
    for argv in (
        ["delete"],
        ["delete", "Ada", "--entire-tenant"],
        ["delete", "--document", "x", "--entire-tenant"],
    ):
        status, _, err = run(*argv, "--db", graph_db)
        assert status == 2
        assert "name the entities to delete, or pass --document ID or --entire-tenant" in err


def test_delete_in_a_lexical_only_file(tmp_path: Path, people: Path) -> None:
    db = tmp_path / "db"
    assert run("import", people, "--db", db, "--embeddings", "none")[0] == 0
    assert run("delete", "Ada Lovelace", "--db", db)[1] == f"deleted 1 entity from {db}\n"
    assert run("delete", "--entire-tenant", "--db", db)[1] == (
        "deleted tenant 'default': 1 entity, 0 vectors\n"
    )


def test_neighbors_by_name_and_depth_as_a_table_and_as_json(graph_db: Path) -> None:
    status, out, _ = run("neighbors", "Ada", "--db", graph_db)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == ["name", "Babbage"]
    rows = json.loads(run("neighbors", "Ada", "--db", graph_db, "--depth", "2", "--json")[1])
    assert rows["entity"] == "00000000-0000-4000-8000-000000000001"
    assert [row["name"] for row in rows["neighbors"]] == ["Babbage", "Engine"]
    assert run("neighbors", "Ada", "--db", graph_db, "--depth", "0")[0] == 2


# -- Ctrl-C ------------------------------------------------------------------------


class InterruptingEmbeddings(FakeEmbeddingProvider):
    """The hash embedding, pressing Ctrl-C on itself during chosen calls."""

    def __init__(self, presses: Sequence[int]) -> None:
        super().__init__(dimension=384)
        self.made = 0
        self.presses = presses

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.made += 1
        for _ in range(self.presses.count(self.made)):
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0)
        return await super().embed(texts)


def _many(tmp_path: Path, rows: int = 600) -> Path:
    path = tmp_path / "many.csv"
    path.write_text(
        "name,entity_type\n" + "".join(f"City {n},city\n" for n in range(rows)), encoding="utf-8"
    )
    return path


@pytest.mark.parametrize("presses", [[1], [1, 1]], ids=["once", "twice"])
def test_ctrl_c_during_an_import_exits_130_with_one_line_and_writes_no_entity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presses: list[int]
) -> None:
    monkeypatch.setattr(app, "embedding_provider", lambda choice: InterruptingEmbeddings(presses))
    db = tmp_path / "db"
    status, out, err = run("import", _many(tmp_path), "--db", db, "--embeddings", "hash")
    assert status == 130
    assert out == ""
    expected = "redstring import: interrupted"
    if len(presses) == 1:
        expected += "; nothing of the unfinished step was written"
    assert err.splitlines()[-1] == expected
    assert entities(db) == []


def test_ctrl_c_during_a_read_stops_it_at_once(
    tmp_path: Path, people: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    imported(people, "--db", db)
    monkeypatch.setattr(
        app, "search_provider", lambda database: _press_then(InterruptingEmbeddings([1]))
    )
    status, out, err = run("search", "Ada", "--db", db)
    assert (status, out) == (130, "")
    assert err.splitlines()[-1] == "redstring search: interrupted"


async def _press_then(provider: InterruptingEmbeddings) -> InterruptingEmbeddings:
    return provider


def test_a_command_error_is_one_line_with_status_1() -> None:
    assert app._one_line(CommandError("two\nlines")) == "two lines"


def test_ctrl_c_while_an_import_writes_lets_the_writes_finish_then_exits_130(
    tmp_path: Path, people: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = import_entities

    async def then_press(*args: Any, **kwargs: Any) -> Any:
        report = await real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return report

    monkeypatch.setattr(actions, "import_entities", then_press)
    db = tmp_path / "db"
    status, out, err = run("import", people, "--db", db, "--embeddings", "hash")
    assert status == 130
    assert out.startswith("imported 2 entities")
    assert err.splitlines()[-1] == "redstring import: interrupted after the work was written"
    assert sorted(by_name(db)) == ["Ada Lovelace", "Alan Turing"]


def test_build_without_the_http_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    monkeypatch.delitem(sys.modules, "redstring.llm.adapters.openai", raising=False)
    (tmp_path / "doc.txt").write_text("Ada.", encoding="utf-8")
    status, _, err = run(
        "build", tmp_path / "doc.txt", "--db", tmp_path / "db", "--llm-url", "u", "--model", "m"
    )
    assert status == 1
    assert "redstring[http]" in err
    assert not (tmp_path / "db").exists()


def test_blank_lines_of_a_csv_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("name,entity_type\n\nAda,person\n,\n", encoding="utf-8")
    assert imported(path, "--db", tmp_path / "db").startswith("imported 1 entity ")


def test_an_import_is_recorded_in_the_file_s_event_log_so_replay_rebuilds_it(
    tmp_path: Path, graph_db: Path, people: Path
) -> None:
    imported(people, "--db", graph_db, "--tenant", "acme")

    async def rebuilt(tenant: str) -> tuple[list[Entity], int]:
        graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=384)
        async with SqliteEventLog(graph_db) as log:
            await replay(
                log,
                GraphProjection(graph),
                VectorProjection(vectors),
                tenant_id=tenant_id_for(tenant),
            )
        found = await graph.find_entities(tenant_id_for(tenant))
        held = [await vectors.get(entity.id, tenant_id_for(tenant)) for entity in found]
        return found, sum(record is not None for record in held)

    for tenant in ("default", "acme"):
        found, vectors = asyncio.run(rebuilt(tenant))
        assert found == entities(graph_db, tenant)
        assert vectors == len(found)


def test_a_deleted_tenant_stays_deleted_when_the_file_s_log_is_replayed(
    graph_db: Path, people: Path
) -> None:
    imported(people, "--db", graph_db, "--tenant", "acme")
    status, _, err = run("delete", "--entire-tenant", "--db", graph_db, "--tenant", "acme")
    assert status == 0, err

    async def rebuilt() -> dict[str, int]:
        graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(dimension=384)
        async with SqliteEventLog(graph_db) as log:
            await replay(log, GraphProjection(graph), VectorProjection(vectors))
        return {
            tenant: await graph.count(tenant_id_for(tenant))
            + await vectors.count(tenant_id_for(tenant))
            for tenant in ("default", "acme")
        }

    counts = asyncio.run(rebuilt())
    assert counts["acme"] == 0
    assert counts["default"] == 2 * len(entities(graph_db, "default")) > 0


# -- a database written by an older redstring ------------------------------------


def _downgrade_to_version_1(db: Path) -> None:
    """What a file written before the name index looks like: no units, version 1."""
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE graph_name_postings")
        connection.execute("DROP TABLE graph_key_postings")
        connection.execute("UPDATE graph_meta SET value = '1' WHERE name = 'schema_version'")
    connection.close()


@pytest.mark.parametrize(
    "command", [["search", "Ada"], ["stats"], ["export"], ["neighbors", "Ada"], ["delete", "Ada"]]
)
def test_a_read_of_an_older_database_says_how_to_migrate_it_and_writes_nothing(
    graph_db: Path, command: list[str]
) -> None:
    _downgrade_to_version_1(graph_db)
    before = files(graph_db.parent)
    status, _, err = run(*command, "--db", graph_db)
    assert status == 1
    assert err.startswith(f"redstring {command[0]}: {graph_db} holds an older redstring graph (")
    assert "schema version 1, older than" in err
    assert err.endswith(f"run `redstring migrate --db {graph_db}` once to upgrade it\n")
    assert files(graph_db.parent) == before


def test_migrate_upgrades_an_older_database_in_place_and_then_reads_work(graph_db: Path) -> None:
    _downgrade_to_version_1(graph_db)
    assert run("migrate", "--db", graph_db)[:2] == (
        0,
        f"{graph_db}: migrated to the current schema\n",
    )
    status, out, err = run("search", "Babage", "--db", graph_db)
    assert status == 0, err
    assert "Babbage" in out
    assert run("migrate", "--db", graph_db)[:2] == (
        0,
        f"{graph_db}: already at the current schema\n",
    )


def test_migrate_refuses_a_missing_file_or_one_that_is_not_redstring_untouched(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.db"
    assert run("migrate", "--db", missing) == (
        1,
        "",
        f"redstring migrate: no such database: {missing}\n",
    )
    assert not missing.exists()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    connection.close()
    before = files(tmp_path)
    status, _, err = run("migrate", "--db", other)
    assert (status, err) == (
        1,
        f"redstring migrate: {other} is not a redstring database "
        "(the file holds no redstring graph)\n",
    )
    assert files(tmp_path) == before


def test_an_import_into_an_older_database_with_vectors_migrates_it(
    graph_db: Path, people: Path
) -> None:
    _downgrade_to_version_1(graph_db)
    assert "2 entities" in imported(people, "--db", graph_db)
    assert "Alan Turing" in by_name(graph_db)


def test_an_embedding_import_into_an_older_database_without_vectors_is_refused(
    tmp_path: Path, people: Path
) -> None:
    db = tmp_path / "plain.db"
    status, _, err = run("import", people, "--db", db, "--embeddings", "none")
    assert status == 0, err
    _downgrade_to_version_1(db)
    before = files(tmp_path)
    status, _, err = run("import", people, "--db", db, "--embeddings", "hash")
    assert status == 1
    assert f"run `redstring migrate --db {db}` once" in err
    assert files(tmp_path) == before


def test_an_embedding_import_into_a_sqlite_file_without_a_graph_shares_it(
    tmp_path: Path, people: Path
) -> None:
    shared = tmp_path / "shared.db"
    with sqlite3.connect(shared) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('kept')")
    connection.close()
    assert "2 entities" in imported(people, "--db", shared)
    assert set(by_name(shared)) == {"Ada Lovelace", "Alan Turing"}
    with sqlite3.connect(shared) as connection:
        assert connection.execute("SELECT body FROM notes").fetchall() == [("kept",)]
    connection.close()
