"""The progress bar: redrawn in place on a terminal, one line anywhere else."""

from __future__ import annotations

import io

from redstring.cli.progress import Progress


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_ends_full() -> None:
    stream = Terminal()
    progress = Progress("embedding", 4, stream)
    progress.advance(1)
    progress.finish()
    written = stream.getvalue()
    assert written.startswith("\r")
    assert written.count("\r") == 2
    assert "[#######" in written
    assert "4/4" in written.splitlines()[-1]


def test_in_a_pipe_only_the_finished_line_is_written() -> None:
    stream = io.StringIO()
    progress = Progress("writing", 3, stream)
    progress.advance(2)
    progress.advance(5)
    progress.finish()
    assert "\r" not in stream.getvalue()
    assert stream.getvalue().count("\n") == 1
    assert "3/3" in stream.getvalue()


def test_nothing_to_do_is_shown_as_done() -> None:
    stream = io.StringIO()
    Progress("nothing", 0, stream).finish()
    assert "[##############################] 0/0" in stream.getvalue()
