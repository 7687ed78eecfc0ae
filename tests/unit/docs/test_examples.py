"""The documented examples run, say what they claim, and import only redstring."""

from __future__ import annotations

import ast
import asyncio
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
#: "Fits on a screen."
MAX_LINES = 80


def _example(name: str) -> Path:
    return EXAMPLES / name


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda path: path.name)
def test_an_example_imports_nothing_but_redstring_and_the_standard_library(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert {name for name in imported if name not in sys.stdlib_module_names} <= {"redstring"}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda path: path.name)
def test_an_example_fits_on_a_screen(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_build_a_graph_finds_the_people_and_babbages_neighbours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace = runpy.run_path(str(_example("build_a_graph.py")))
    result = asyncio.run(namespace["main"]())
    assert result["people"] == ["Ada Lovelace", "Charles Babbage"]
    assert result["neighbours"] == ["Ada Lovelace", "Analytical Engine"]
    printed = capsys.readouterr().out
    assert "3 entities, 2 relationships, 3 embedded" in printed
    assert "Babbage's neighbours: Ada Lovelace, Analytical Engine" in printed


def test_build_a_graph_retrieves_the_misspelled_babbage_first() -> None:
    """The misspelled query "Charles Babage" ranks "Charles Babbage" first."""
    namespace = runpy.run_path(str(_example("build_a_graph.py")))
    found = asyncio.run(namespace["main"]())["found"]
    assert found[0] == "Charles Babbage"
    assert len(found) <= 3
