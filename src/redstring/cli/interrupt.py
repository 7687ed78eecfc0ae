"""Ctrl-C in the command line: at once in a read, at the next safe point in a write."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Final

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED: Final = 130


class Interrupted(Exception):
    """Ctrl-C arrived; raised where stopping leaves nothing half-written."""


@dataclass
class Interrupt:
    """Ctrl-C: at once in a read; in a write, noted and acted on at the next safe point.

    A write command sets `deferring` and calls `check()` where stopping
    leaves nothing half-written; a second Ctrl-C stops at once.
    """

    deferring: bool = False
    pressed: bool = False

    def handle(self, signum: int, frame: object) -> None:
        """The SIGINT handler."""
        if self.pressed or not self.deferring:
            raise KeyboardInterrupt
        self.pressed = True
        print("stopping at the next safe point (Ctrl-C again to stop now)", file=sys.stderr)

    def check(self) -> None:
        """Raise `Interrupted` if Ctrl-C was pressed since the write began."""
        if self.pressed:
            raise Interrupted


#: The one handler of the running command line.
interrupt: Final = Interrupt()
