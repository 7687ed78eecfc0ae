"""Progress for long work: a live bar on a terminal, a few plain lines in a pipe."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, Self

if TYPE_CHECKING:
    from typing import TextIO

    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

#: In a pipe, at most one line per this many seconds before the last one.
LINE_INTERVAL_SECONDS: Final = 10.0


class Progress:
    """Counts work done out of a total, reported on `stream` (standard error).

    On a terminal a rich bar shows the count, the rate and the time left,
    redrawn in place. Elsewhere (a pipe, a log) it writes one plain line at
    most every `LINE_INTERVAL_SECONDS`, and a last line with the rate when
    done, so captured output stays readable. Call it as
    `progress(done, total)`; use it as a context manager.
    """

    def __init__(self, label: str, unit: str, stream: TextIO) -> None:
        self._label = label
        self._unit = unit
        self._stream = stream
        self._live = stream.isatty()
        self._started = time.monotonic()
        self._last_line = self._started
        self._done = 0
        self._total = 0
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        if self._live:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(file=self._stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self._label, total=None, rate="")
        return self

    def __call__(self, done: int, total: int) -> None:
        """Record that `done` of `total` items are finished."""
        self._done, self._total = done, total
        now = time.monotonic()
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total, rate=self._rate(now))
        elif done < total and now - self._last_line >= LINE_INTERVAL_SECONDS:
            self._last_line = now
            self._write(f"{self._label}: {done:,}/{total:,} {self._unit}, {self._rate(now)}")

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            return
        if exc_info[0] is None and self._total:
            elapsed = time.monotonic() - self._started
            self._write(
                f"{self._label}: {self._done:,}/{self._total:,} {self._unit} in {elapsed:.1f}s, "
                f"{self._rate(time.monotonic())}"
            )

    def _rate(self, now: float) -> str:
        elapsed = now - self._started
        if elapsed <= 0 or not self._done:
            return f"0 {self._unit}/s"
        return f"{self._done / elapsed:,.0f} {self._unit}/s"

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()
