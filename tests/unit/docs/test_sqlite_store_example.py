"""The SQLite how-to's example: what was built survives closing the file."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs"
EXAMPLE = DOCS / "examples" / "sqlite_store.py"
HOW_TO = DOCS / "how-to" / "use-the-sqlite-store.md"


def test_the_example_finds_the_misspelled_name_after_reopening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "redstring.db"
    found = asyncio.run(runpy.run_path(str(EXAMPLE))["main"](database))
    assert found[0] == "Grace Hopper"
    assert database.stat().st_size > 0
    printed = capsys.readouterr().out
    page = HOW_TO.read_text(encoding="utf-8")
    assert printed.strip()
    assert printed.strip() in page
