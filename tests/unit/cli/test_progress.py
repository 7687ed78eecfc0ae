"""Progress: a rich bar with rate and time left on a terminal, a few plain lines in a pipe."""

from __future__ import annotations

import io

import pytest

from redstring.cli import progress as progress_module
from redstring.cli.progress import Progress


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_bar_shows_the_count_the_rate_and_the_time_left() -> None:
    stream = Terminal()
    with Progress("embedding", "names", stream) as progress:
        progress(2, 4)
        progress(4, 4)
    shown = stream.getvalue()
    assert "embedding" in shown
    assert "4/4" in shown
    assert "names/s" in shown
    assert "eta" in shown


def test_in_a_pipe_only_the_finished_line_is_written_for_quick_work() -> None:
    stream = io.StringIO()
    with Progress("embedding", "names", stream) as progress:
        progress(1, 4)
        progress(4, 4)
    [line] = stream.getvalue().splitlines()
    assert line.startswith("embedding: 4/4 names in ")
    assert line.endswith("names/s")
    assert "\r" not in stream.getvalue()


def test_in_a_pipe_slow_work_writes_a_line_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "LINE_INTERVAL_SECONDS", 0.0)
    stream = io.StringIO()
    with Progress("documents", "documents", stream) as progress:
        progress(1, 3)
        progress(2, 3)
        progress(3, 3)
    lines = stream.getvalue().splitlines()
    assert [line.split(",")[0].split(" in ")[0] for line in lines] == [
        "documents: 1/3 documents",
        "documents: 2/3 documents",
        "documents: 3/3 documents",
    ]


def test_nothing_to_do_writes_nothing_and_a_failure_writes_no_finished_line() -> None:
    stream = io.StringIO()
    with Progress("embedding", "names", stream) as progress:
        progress(0, 0)
    assert stream.getvalue() == ""

    def fail() -> None:
        with Progress("embedding", "names", stream) as progress:
            progress(1, 4)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail()
    assert stream.getvalue() == ""


def test_the_rate_is_zero_until_something_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "LINE_INTERVAL_SECONDS", 0.0)
    stream = io.StringIO()
    with Progress("embedding", "names", stream) as progress:
        progress(0, 4)
        progress(4, 4)
    assert stream.getvalue().splitlines()[0] == "embedding: 0/4 names, 0 names/s"
