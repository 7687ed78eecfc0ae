"""What the read commands print: JSON for programs, a rich table for people."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from rich.table import Table

#: The width of a table written into a pipe or a file, where no terminal says.
PIPE_WIDTH: Final = 160


def print_json(value: object) -> None:
    """`value` as indented JSON on standard output, non-ASCII kept as it is."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    numeric: Collection[str] = (),
    widest: Mapping[str, int] | None = None,
    optional: Sequence[str] = (),
) -> None:
    """`rows` under `headers` on standard output, fitted to the terminal.

    A cell too long for its column ends in an ellipsis; wide (CJK)
    characters count as two columns, so the columns stay aligned.
    Columns named in `numeric` are right-aligned and never shrink; a
    column named in `widest` is at most that many cells wide. When the
    terminal is too narrow for every column, those in `optional` are left
    out, last first, until the rest fit.
    """
    from rich.cells import cell_len
    from rich.console import Console

    stream = sys.stdout
    live = stream.isatty()
    console = Console(
        file=stream,
        width=None if live else PIPE_WIDTH,
        color_system="auto" if live else None,
        highlight=False,
        soft_wrap=False,
    )
    caps = widest or {}
    wanted = {
        header: max([cell_len(header), *(cell_len(row[index]) for row in rows)])
        for index, header in enumerate(headers)
    }
    shown = list(headers)
    dropping = list(optional)
    while True:
        widths = _fit(shown, wanted, numeric, caps, console.width - _GAP * (len(shown) - 1))
        comfortable = widths is not None and all(
            widths[header] >= min(wanted[header], _COMFORTABLE)
            for header in shown
            if header not in optional
        )
        if comfortable or not dropping:
            break
        shown.remove(dropping.pop())
    table = _table(shown, headers, rows, numeric, widths or wanted, live)
    if live:
        console.print(table)
        return
    with console.capture() as captured:
        console.print(table)
    stream.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


#: Cells between two columns.
_GAP: Final = 2
#: The narrowest a text column is ever squeezed to.
_NARROWEST: Final = 6
#: Optional columns are dropped before a required one is squeezed below this.
_COMFORTABLE: Final = 12


def _fit(
    shown: Sequence[str],
    wanted: Mapping[str, int],
    numeric: Collection[str],
    caps: Mapping[str, int],
    room: int,
) -> dict[str, int] | None:
    """Column widths that fit `room`, numeric columns whole; `None` when they cannot."""
    widths = {
        header: wanted[header] if header in numeric else min(wanted[header], caps.get(header, room))
        for header in shown
    }
    texts = [header for header in shown if header not in numeric]
    while sum(widths.values()) > room:
        squeezable = [header for header in texts if widths[header] > _NARROWEST]
        if not squeezable:
            return None
        widest_now = max(squeezable, key=lambda header: widths[header])
        widths[widest_now] -= 1
    return widths


def _table(
    shown: Sequence[str],
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Collection[str],
    widths: Mapping[str, int],
    live: bool,
) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(
        box=None,
        header_style="bold" if live else "",
        show_edge=False,
        pad_edge=False,
        padding=(0, _GAP // 2),
        collapse_padding=False,
    )
    columns = [headers.index(header) for header in shown]
    for header in shown:
        table.add_column(
            header,
            justify="right" if header in numeric else "left",
            no_wrap=True,
            overflow="ellipsis",
            width=widths[header],
        )
    for row in rows:
        # As plain text: a name or passage holding "[bold]" is data, not markup.
        table.add_row(*(Text(row[column]) for column in columns))
    return table
