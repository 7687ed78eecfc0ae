"""Tables fitted to the terminal, and JSON."""

from __future__ import annotations

import io
import json
import re
import sys
from typing import TYPE_CHECKING

from rich.cells import cell_len

from redstring.cli.output import PIPE_WIDTH, print_json, print_table

if TYPE_CHECKING:
    import pytest


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


HEADERS = ["#", "name", "score", "id", "notes"]
ROWS = [
    ["1", "A rather long name that will not fit", "0.5000", "x" * 36, "n" * 80],
    ["2", "北京市", "0.2500", "y" * 36, ""],
]


def _table(monkeypatch: pytest.MonkeyPatch, columns: int | None, **options: object) -> str:
    stream = Terminal() if columns is not None else io.StringIO()
    if columns is not None:
        monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(sys, "stdout", stream)
    print_table(HEADERS, ROWS, numeric={"#", "score"}, **options)  # type: ignore[arg-type]
    return re.sub(r"\x1b\[[0-9;]*m", "", stream.getvalue())


def test_in_a_pipe_the_table_is_wide_and_has_no_trailing_spaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = _table(monkeypatch, None).splitlines()
    assert lines[0].split() == HEADERS
    assert all(line == line.rstrip() for line in lines)
    assert max(cell_len(line) for line in lines) <= PIPE_WIDTH
    assert "A rather long name that will not fit" in lines[1]


def test_on_a_narrow_terminal_optional_columns_go_and_cells_end_in_an_ellipsis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = _table(monkeypatch, 30, optional=["id", "notes"])
    plain = [line.rstrip() for line in shown.splitlines() if line.strip()]
    assert "id" not in plain[0]
    assert "notes" not in plain[0]
    assert "…" in plain[1]
    assert all(cell_len(line) <= 30 for line in plain)
    score = [cell_len(line[: line.index(value) + len(value)]) for line, value in
             [(plain[1], "0.5000"), (plain[2], "0.2500")]]  # fmt: skip
    assert score[0] == score[1]


def test_a_terminal_too_narrow_even_without_optional_columns_still_prints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = _table(monkeypatch, 12, widest={"name": 10}, optional=["notes"])
    assert shown.strip()


def test_json_is_indented_and_keeps_non_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    print_json({"name": "北京"})
    assert stream.getvalue() == '{\n  "name": "北京"\n}\n'
    assert json.loads(stream.getvalue()) == {"name": "北京"}


def test_a_cell_that_looks_like_markup_is_printed_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for stream in (Terminal(), io.StringIO()):
        monkeypatch.setattr(sys, "stdout", stream)
        print_table(["name", "path"], [["[bold]Ada[/bold]", "Ann -[mother]-> Bea [1]"]])
        shown = re.sub(r"\x1b\[[0-9;]*m", "", stream.getvalue())
        assert shown.splitlines()[1].split() == [
            *("[bold]Ada[/bold]", "Ann", "-[mother]->", "Bea", "[1]"),
        ]
