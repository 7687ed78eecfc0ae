"""Every Python snippet in the docs runs.

A page's ```python fences run in page order in one namespace, as a reader
pasting them one after another would run them; a fence may `await` at top
level, and one that includes a file (`--8<-- "path"`) runs that file. A page
whose snippets continue an example's function says so with
`<!-- snippets run after: FILE FUNCTION -->`: that function's body runs
first, at top level, so its names are there. The
OpenAI-compatible server page runs against a stand-in server on 127.0.0.1
that answers like Ollama would; the Postgres page runs against the test
session's server, in a schema of its own.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.unit.llm.adapters.openai_server import FakeOpenAiServer, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INCLUDE = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)
OLLAMA = "http://localhost:11434/v1"
#: The DSN the Postgres page shows; its snippets run against the session's server.
POSTGRES = "postgresql://app:secret@db.internal:5432/app"
SETUP = re.compile(r"^<!-- snippets run after: (\S+) (\w+) -->$", re.MULTILINE)


def _snippets(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    snippets = [
        INCLUDE.sub(lambda found: (ROOT / found.group(1)).read_text(encoding="utf-8"), body)
        for body in FENCE.findall(text)
    ]
    for path, function in SETUP.findall(text):
        snippets.insert(_setup_position(text), _body_of(ROOT / path, function))
    return snippets


def _setup_position(text: str) -> int:
    """How many fences come before the setup comment."""
    return len(FENCE.findall(text[: SETUP.search(text).start()]))  # type: ignore[union-attr]


def _body_of(path: Path, function: str) -> str:
    """The statements of `function` in `path`, without its docstring or `return`."""
    [definition] = [
        node
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == function
    ]
    body = [
        statement
        for statement in definition.body
        if not isinstance(statement, ast.Return)
        and not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    return "\n".join(ast.unparse(statement) for statement in body)


PAGES_WITH_SNIPPETS = [page for page in PAGES if _snippets(page)]


def _chat(extraction: dict[str, Any]) -> Reply:
    message = {"role": "assistant", "content": json.dumps(extraction)}
    return Reply(body={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def _embeddings(count: int, dimension: int = 768) -> Reply:
    items = [
        {"object": "embedding", "index": n, "embedding": [float(n + 1)] + [0.5] * (dimension - 1)}
        for n in range(count)
    ]
    return Reply(body={"object": "list", "data": items, "model": "nomic-embed-text"})


@pytest.fixture
def server() -> Iterator[FakeOpenAiServer]:
    running = FakeOpenAiServer().start()
    yield running
    running.stop()


def test_the_docs_have_snippets() -> None:
    assert sum(len(_snippets(page)) for page in PAGES_WITH_SNIPPETS) >= 25


@pytest.mark.parametrize(
    "page", PAGES_WITH_SNIPPETS, ids=[str(page.relative_to(ROOT)) for page in PAGES_WITH_SNIPPETS]
)
def test_every_snippet_of_a_page_runs(
    page: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: FakeOpenAiServer,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["snippet"])
    dsn = POSTGRES
    if POSTGRES in page.read_text(encoding="utf-8"):
        schemas = request.getfixturevalue("postgres")
        dsn = schemas.dsn
        monkeypatch.setattr("sys.argv", ["snippet", dsn, schemas.new_schema()])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    extraction = {
        "entities": [
            {"name": "Ada Lovelace", "entity_type": "person"},
            {"name": "Charles Babbage", "entity_type": "person"},
            {"name": "Analytical Engine", "entity_type": "machine"},
        ],
        "relationships": [],
    }
    server.reply("/v1/chat/completions", _chat(extraction))
    server.reply("/v1/embeddings", _embeddings(3), _embeddings(1))
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for number, snippet in enumerate(_snippets(page), start=1):
        source = snippet.replace(OLLAMA, server.base_url).replace(POSTGRES, dsn)
        code = compile(
            source, f"{page.name}#{number}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        if code.co_flags & inspect.CO_COROUTINE:
            asyncio.run(eval(code, namespace))
        else:
            exec(code, namespace)
    capsys.readouterr()
