"""A progress bar on a text stream, with no dependency."""

from __future__ import annotations

import time
from typing import TextIO

#: Characters the bar itself takes.
WIDTH = 30
#: At most this many redraws per second, so a fast loop is not slowed by output.
REDRAWS_PER_SECOND = 10


class Progress:
    """Counts work done out of `total` and redraws one line on `stream`.

    On a terminal the line is redrawn in place; elsewhere (a pipe, a log) only
    the finished line is written, so captured output stays readable.
    """

    def __init__(self, label: str, total: int, stream: TextIO) -> None:
        self._label = label
        self._total = max(total, 0)
        self._stream = stream
        self._done = 0
        self._started = time.monotonic()
        self._drawn = 0.0
        self._live = stream.isatty()

    def advance(self, count: int) -> None:
        """Record `count` more items done, redrawing at most a few times a second."""
        self._done = min(self._total, self._done + count)
        now = time.monotonic()
        if self._live and now - self._drawn >= 1 / REDRAWS_PER_SECOND:
            self._drawn = now
            self._stream.write("\r" + self._line())
            self._stream.flush()

    def finish(self) -> None:
        """Write the final line and end it."""
        self._done = self._total
        self._stream.write(("\r" if self._live else "") + self._line() + "\n")
        self._stream.flush()

    def _line(self) -> str:
        fraction = self._done / self._total if self._total else 1.0
        filled = round(WIDTH * fraction)
        elapsed = time.monotonic() - self._started
        return (
            f"{self._label:<10} [{'#' * filled}{'.' * (WIDTH - filled)}] "
            f"{self._done:,}/{self._total:,} {elapsed:5.1f}s"
        )
