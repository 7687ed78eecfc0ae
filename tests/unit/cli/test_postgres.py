"""The command line against Postgres: `--db postgresql://...`, in a database of the test's own."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote_plus, urlsplit, urlunsplit
from uuid import uuid4

import asyncpg
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring import FakeEmbeddingProvider
from redstring.cli.stores import CommandError, _decoded, open_database, shown, tenant_id_for
from redstring.domain.exceptions import EmbeddingModelMismatchError
from tests.unit.cli.test_commands import PEOPLE, run

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:
    """A URL for a fresh database on the session's server, dropped afterwards."""
    name = f"cli_{uuid4().hex[:12]}"

    async def execute(statement: str) -> None:
        connection = await asyncpg.connect(postgres_dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(execute(f'CREATE DATABASE "{name}"'))
    yield urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{name}"))
    asyncio.run(execute(f'DROP DATABASE "{name}" WITH (FORCE)'))


@pytest.fixture
def people(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text(PEOPLE, encoding="utf-8")
    return path


def test_import_stats_search_delete_and_consolidate_run_on_postgres(
    database: str, people: Path
) -> None:
    status, out, err = run("import", people, "--db", database, "--embeddings", "hash")
    assert status == 0, err
    status, out, err = run("import", people, "--db", database, "--tenant", "acme",
                           "--embeddings", "hash")  # fmt: skip
    assert status == 0, err
    status, out, _ = run("stats", "--db", database, "--json")
    stats = json.loads(out)
    assert (stats["entities"], stats["vectors"], stats["models"]) == (4, 4, ["fake/hash-v1"])
    assert sorted((row["tenant"], row["entities"]) for row in stats["tenants"]) == [
        (str(tenant_id_for("acme")), 2),
        ("default", 2),
    ]
    status, out, _ = run("search", "Ada Lovelace", "--db", database, "--json")
    assert status == 0
    assert json.loads(out)["matches"][0]["name"] == "Ada Lovelace"
    status, out, err = run("consolidate", "--db", database, "--dry-run")
    assert status == 0, err
    status, out, err = run("delete", "Alan Turing", "--db", database)
    assert (status, out.strip()) == (0, f"deleted 1 entity from {shown(database)}"), err
    status, out, _ = run("stats", "--db", database, "--json")
    assert json.loads(out)["entities"] == 3
    status, _, err = run("migrate", "--db", database)
    assert status == 0, err


def test_a_read_of_an_empty_database_is_refused_and_creates_nothing(database: str) -> None:
    status, _, err = run("stats", "--db", database)
    assert status == 1
    assert "is not a redstring database" in err
    assert "holds no redstring graph" in err

    async def schemas() -> int:
        connection = await asyncpg.connect(database)
        try:
            return int(
                await connection.fetchval(
                    "SELECT count(*) FROM pg_namespace WHERE nspname = 'redstring'"
                )
            )
        finally:
            await connection.close()

    assert asyncio.run(schemas()) == 0


def test_importing_with_another_embedding_choice_is_refused(database: str, people: Path) -> None:
    assert run("import", people, "--db", database, "--embeddings", "none")[0] == 0
    status, _, err = run("import", people, "--db", database, "--embeddings", "hash")
    assert status == 1
    assert "entities without vectors" in err


@pytest.mark.parametrize("scheme", ["postgresql", "POSTGRESQL", "Postgres"])
def test_an_unreachable_server_is_one_line_without_the_password(scheme: str) -> None:
    location = f"{scheme}://app:secret@127.0.0.1:1/app"
    status, _, err = run("stats", "--db", location)
    assert status == 1
    assert "secret" not in err
    assert f"{scheme}://app:***@127.0.0.1:1/app" in err


async def test_of_two_imports_racing_with_different_models_one_claims_the_schema(
    database: str,
) -> None:
    first = FakeEmbeddingProvider(dimension=384)
    second = FakeEmbeddingProvider(model="fake/other", dimension=384)
    outcomes = await asyncio.gather(
        open_database(database, read_only=False, embeddings=first),
        open_database(database, read_only=False, embeddings=second),
        return_exceptions=True,
    )
    won = [each for each in outcomes if not isinstance(each, BaseException)]
    lost = [each for each in outcomes if isinstance(each, BaseException)]
    assert len(won) == 1
    assert [type(each) for each in lost] == [EmbeddingModelMismatchError]
    await won[0].close()


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("postgresql://app@db/app", "postgresql://app@db/app"),
        ("postgres://app:pw@db", "postgres://app:***@db"),
        (
            "postgresql://app:pw@db/app?sslmode=require",
            "postgresql://app:***@db/app?sslmode=require",
        ),
        ("postgresql:///app?host=/run/postgresql", "postgresql:///app?host=/run/postgresql"),
        ("graph.db", "graph.db"),
        ("postgresql://app@db/app?password=pw", "postgresql://app@db/app?password=***"),
        (
            "postgresql://db/app?sslmode=require&password=pw&application_name=x",
            "postgresql://db/app?sslmode=require&password=***&application_name=x",
        ),
        (
            "postgresql://app:pw@db/app?password=pw2&sslpassword=pw3",
            "postgresql://app:***@db/app?password=***&sslpassword=***",
        ),
        ("postgresql://db?password=p%26w%23d%3D", "postgresql://db?password=***"),
        (
            "postgresql://db/app?pass%77ord=pw&PassWord=pw2",
            "postgresql://db/app?pass%77ord=***&PassWord=***",
        ),
        (
            "postgresql://db/app?password=pw&password=pw2",
            "postgresql://db/app?password=***&password=***",
        ),
        ("postgresql://db/app?password=pw#password", "postgresql://db/app?password=***#password"),
        (
            "postgresql://db/app?user=password&passwords=x",
            "postgresql://db/app?user=password&passwords=x",
        ),
        ("postgresql://db/app#?password=x", "postgresql://db/app#?password=x"),
        ("POSTGRESQL://app:pw@db/app", "POSTGRESQL://app:***@db/app"),
        ("Postgres://app:pw@db/app?PASSWORD=pw2", "Postgres://app:***@db/app?PASSWORD=***"),
        ("postgresql.db", "postgresql.db"),
    ],
)
def test_a_location_is_shown_without_its_password(location: str, expected: str) -> None:
    assert shown(location) == expected


@given(st.text(alphabet=st.sampled_from("%+pasLword0Ff7E2C3A9é"), max_size=12))
@example("pass%77ord")
@example("%C3%A9%zz%4")
@example("%E2%84%AApas%73")
def test_a_parameter_name_is_decoded_as_the_driver_decodes_it(name: str) -> None:
    assert _decoded(name) == unquote_plus(name)


def test_without_the_postgres_extra_a_postgres_url_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redstring.graph.adapters.postgres", None)
    with pytest.raises(CommandError, match="a postgresql:// --db needs it"):
        asyncio.run(open_database("postgresql://app@db/app", read_only=True))


def test_a_password_in_the_query_string_is_never_printed(database: str, people: Path) -> None:
    # asyncpg reads `password` from the query, decoding its name; the session's
    # server trusts every login, so the passwords are carried, never checked.
    secret, encoded = f"s3cret{uuid4().hex}", f"{uuid4().hex}&#="
    query = f"pass%77ord={secret}&sslpassword={quote(encoded, safe='')}"
    location = f"{database}{'&' if '?' in database else '?'}{query}"
    unreachable = f"postgresql://app@127.0.0.1:1/app?{query}"
    outputs = [
        run("import", people, "--db", location, "--embeddings", "hash"),
        run("stats", "--db", location, "--json"),
        run("delete", "Alan Turing", "--db", location),
        run("migrate", "--db", location),
        run("stats", "--db", unreachable),
    ]
    assert [status for status, _, _ in outputs] == [0, 0, 0, 0, 1]
    assert json.loads(outputs[1][1])["database"] == shown(location)
    for (_, out, err), shown_as in zip(outputs, [location] * 4 + [unreachable], strict=True):
        assert shown(shown_as).endswith("pass%77ord=***&sslpassword=***")
        assert shown(shown_as) in out + err
        for hidden in (secret, encoded, quote(encoded, safe=""), encoded[:32]):
            assert hidden not in out + err


def test_add_ask_and_delete_document_run_on_postgres(database: str, tmp_path: Path) -> None:
    cities = tmp_path / "cities.jsonl"
    cities.write_text(
        json.dumps({"name": "Tokyo", "entity_type": "city", "properties": {"aliases": ["Edo"]}})
        + "\n",
        encoding="utf-8",
    )
    assert run("import", cities, "--db", database, "--embeddings", "none")[0] == 0
    notes = tmp_path / "notes.jsonl"
    notes.write_text(
        json.dumps({"id": "edo", "title": "Edo", "text": "Before 1868 Tokyo was called Edo."})
        + "\n"
        + json.dumps({"id": "bay", "text": "The city grew along the bay."})
        + "\n",
        encoding="utf-8",
    )
    status, out, err = run("add", notes, "--db", database)
    assert status == 0, err
    assert out == f"added 2 documents (2 passages) to {shown(database)}, 2 mentions of 1 entities\n"
    status, out, err = run("ask", "what was Tokyo called", "--db", database, "--json")
    assert status == 0, err
    [first, *_] = json.loads(out)["passages"]
    assert (first["source_id"], first["start"], first["end"]) == ("edo", 0, 33)
    assert [entity["name"] for entity in first["entities"]] == ["Tokyo"]
    status, out, err = run("delete", "--document", "edo", "--db", database)
    assert (status, out) == (0, f"deleted 1 document (1 passage) from {shown(database)}\n"), err
    status, out, _ = run("ask", "Tokyo bay", "--db", database, "--json")
    assert [each["source_id"] for each in json.loads(out)["passages"]] == ["bay"]
    status, out, err = run("delete", "--entire-tenant", "--db", database)
    assert (status, out) == (0, "deleted tenant 'default': 1 entity, 0 vectors, 1 passage\n"), err
    status, out, _ = run("ask", "Tokyo bay", "--db", database, "--json")
    assert json.loads(out)["passages"] == []


def test_ask_of_a_postgres_database_nothing_was_added_to_creates_no_chunk_tables(
    database: str, people: Path
) -> None:
    assert run("import", people, "--db", database, "--embeddings", "none")[0] == 0
    status, out, err = run("ask", "Ada", "--db", database, "--json")
    assert (status, json.loads(out)["passages"]) == (0, []), err

    async def tables() -> list[str]:
        connection = await asyncpg.connect(database)
        try:
            rows = await connection.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_name LIKE '%chunk%'"
            )
        finally:
            await connection.close()
        return [row[0] for row in rows]

    assert asyncio.run(tables()) == []
