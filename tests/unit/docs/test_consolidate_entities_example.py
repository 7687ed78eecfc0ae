"""The consolidation how-to's example runs and says what the page says it prints."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "consolidate_entities.py"
PAGE = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "consolidate-entities.md"


def test_the_example_merges_two_names_and_undoes_it(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = runpy.run_path(str(EXAMPLE))
    result = asyncio.run(namespace["main"]())
    assert result == {
        "before": ["Ada Lovelace", "Lovelace, Ada"],
        "merged": "Ada Lovelace",
        "aliases": ["Lovelace, Ada"],
        "after": ["Ada Lovelace", "Lovelace, Ada"],
    }
    printed = capsys.readouterr().out
    assert printed in PAGE.read_text()
