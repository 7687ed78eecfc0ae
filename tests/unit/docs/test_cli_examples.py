"""Every `$ redstring ...` line in the docs runs, with the status and output the page shows.

Each page's console blocks are one session, run in one scratch directory
in page order, with the files the page shows (fences titled with a file name)
written there first. The cities sample is cut to its first rows to keep
the local model quick, so commands on `cities.db` are checked for their
exit status and error lines only; every other output must match the page
line for line, except progress lines, which carry timings. `build` runs
against a stand-in OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import shlex
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from redstring.cli import main
from tests.unit.llm.adapters.openai_server import FakeOpenAiServer, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
CITIES = ROOT / "docs" / "examples" / "data" / "cities.jsonl"
#: Enough cities for every query on the page to find something.
CITY_ROWS = 300
#: The API root the build examples name, served here by a stand-in.
DOCUMENTED_LLM = "http://localhost:11434/v1"
PROGRESS = re.compile(r"^(embedding|documents): .* (names|documents)/s$")
FENCE = re.compile(r"^```(\w+)(?: title=\"([^\"]+)\")?\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(page: Path) -> Iterator[tuple[str, str | None, str]]:
    for language, title, body in FENCE.findall(page.read_text(encoding="utf-8")):
        yield language, title or None, body


def _sessions() -> list[tuple[Path, list[str]]]:
    sessions = []
    for page in PAGES:
        blocks = [
            body
            for language, _, body in _blocks(page)
            if language == "console" and "$ redstring " in body
        ]
        if blocks:
            sessions.append((page, blocks))
    return sessions


def _steps(block: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _without_progress(lines: list[str]) -> list[str]:
    return [line for line in lines if not PROGRESS.match(line)]


def _answer(name: str) -> Reply:
    extraction = {"entities": [{"name": name, "entity_type": "person"}], "relationships": []}
    message = {"role": "assistant", "content": json.dumps(extraction)}
    return Reply(body={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


@pytest.fixture
def server() -> Iterator[FakeOpenAiServer]:
    running = FakeOpenAiServer().start()
    yield running
    running.stop()


def test_the_docs_have_command_line_examples() -> None:
    assert sum(len(blocks) for _, blocks in _sessions()) >= 8


@pytest.mark.parametrize(
    ("page", "blocks"), _sessions(), ids=[page.name for page, _ in _sessions()]
)
def test_every_command_line_example_runs_as_the_page_shows(
    page: Path,
    blocks: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: FakeOpenAiServer,
) -> None:
    for _, title, body in _blocks(page):
        if title is not None:
            (tmp_path / title).write_text(body, encoding="utf-8")
    for name in ("ada.txt", "turing.txt"):
        (tmp_path / name).write_text(f"A page about {name[:-4]}.", encoding="utf-8")
    sample = tmp_path / "docs" / "examples" / "data" / "cities.jsonl"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "\n".join(CITIES.read_text(encoding="utf-8").splitlines()[:CITY_ROWS]) + "\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)

    for command, shown in [step for block in blocks for step in _steps(block)]:
        words = shlex.split(command)
        assert words[0] == "redstring", command
        argv, redirect = words[1:], None
        if ">" in argv:
            argv, redirect = argv[: argv.index(">")], argv[argv.index(">") + 1]
        if DOCUMENTED_LLM in argv:
            argv[argv.index(DOCUMENTED_LLM)] = server.base_url
            for _ in argv:
                server.reply("/v1/chat/completions", _answer("Someone"))
        out, err = StringIO(), StringIO()
        status = main(argv, out=out, err=err)
        if redirect is not None:
            (tmp_path / redirect).write_text(out.getvalue(), encoding="utf-8")
        failed = any(line.startswith(f"redstring {argv[0]}:") for line in shown)
        assert status == (1 if failed else 0), (command, err.getvalue())
        printed = err.getvalue().splitlines()
        if redirect is None:
            printed += out.getvalue().splitlines()
        printed = _without_progress(printed)
        expected = _without_progress(shown)
        if failed or ("cities.db" not in argv and argv[0] != "build"):
            assert printed == expected, command
