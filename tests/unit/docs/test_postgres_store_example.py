"""The Postgres how-to's example: what one pair of stores built, a new pair finds."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

    from tests.postgres import PostgresSchemas

DOCS = Path(__file__).resolve().parents[3] / "docs"
EXAMPLE = DOCS / "examples" / "postgres_store.py"
HOW_TO = DOCS / "how-to" / "use-postgres.md"


def test_the_example_finds_the_misspelled_name_with_new_stores(
    postgres: PostgresSchemas, capsys: pytest.CaptureFixture[str]
) -> None:
    main = runpy.run_path(str(EXAMPLE))["main"]
    found = asyncio.run(main(postgres.dsn, postgres.new_schema()))
    assert found[0] == "Grace Hopper"
    printed = capsys.readouterr().out
    assert printed.strip()
    assert printed.strip() in HOW_TO.read_text(encoding="utf-8")
