"""Pausing the cyclic garbage collector for the length of a consolidation pass.

A pass allocates millions of small acyclic objects that reference counting
frees; each allocation burst would otherwise start collections that walk
every object the process holds, the pass's own profiles and memo included
(ADRs 0100 and 0110). The pause is owned by the task that took it: an
adjudicator's wait runs with the collector as the application had it, and
a collector the application had turned off stays off throughout.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_PAUSED_HERE: ContextVar[bool] = ContextVar("redstring_collector_paused", default=False)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector while the block runs, then leave it as it was found.

    Nested pauses are free: only the outermost one that found the collector
    running turns it back on.
    """
    if not gc.isenabled():
        yield
        return
    with _switched(on=False):
        yield


@contextmanager
def collector_resumed() -> Iterator[None]:
    """Run the block with the collector on again if this task's pause turned it off.

    For a wait of unknown length inside a pause (an adjudicator asking a
    model): other tasks run meanwhile, and their garbage is collected as
    usual. Outside a pause, or when the application had turned the
    collector off itself, nothing changes.
    """
    if not _PAUSED_HERE.get() or gc.isenabled():
        yield
        return
    with _switched(on=True):
        yield


@contextmanager
def _switched(*, on: bool) -> Iterator[None]:
    """The collector turned on or off for the block, and this task's pause marked so."""
    (gc.enable if on else gc.disable)()
    token = _PAUSED_HERE.set(not on)
    try:
        yield
    finally:
        _PAUSED_HERE.reset(token)
        (gc.disable if on else gc.enable)()
