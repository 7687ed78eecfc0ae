"""The docs' front pages list every page they promise to."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_home_page_lists_every_how_to() -> None:
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    for page in sorted((DOCS / "how-to").glob("*.md")):
        assert f"(how-to/{page.name})" in home, page.name


def test_the_reference_index_lists_every_reference_page() -> None:
    index = (DOCS / "reference" / "index.md").read_text(encoding="utf-8")
    for page in sorted((DOCS / "reference").glob("*.md")):
        if page.name != "index.md":
            assert f"({page.name})" in index, page.name
