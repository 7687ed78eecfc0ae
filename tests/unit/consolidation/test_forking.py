"""Work spread over forked children: results in order, and never lost."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from redstring.consolidation.forking import can_fork, fork_map

pytestmark = pytest.mark.skipif(not can_fork(), reason="this platform cannot fork")

PARENT = os.getpid()


def _square(share: int) -> tuple[int, bool]:
    return share * share, os.getpid() == PARENT


def test_each_share_runs_once_in_order_the_first_here_the_others_in_children() -> None:
    results = fork_map(_square, 4)
    assert [value for (value, _), _ in results] == [0, 1, 4, 9]
    # Share 0 ran here; each other share ran in a child and came back pickled.
    assert [(here, forked) for (_, here), forked in results] == [
        (True, False),
        (False, True),
        (False, True),
        (False, True),
    ]
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("shares", [0, 1])
def test_one_share_or_none_runs_here(shares: int) -> None:
    assert fork_map(_square, shares) == [((0, True), False)][:shares]


@pytest.mark.parametrize("shares", [-1, True, "2", 2.0])
def test_shares_must_be_a_count(shares: object) -> None:
    with pytest.raises(ValueError, match="shares must be an int of at least 0"):
        fork_map(_square, shares)  # type: ignore[arg-type]


def test_a_child_that_dies_has_its_share_run_here() -> None:
    def work(share: int) -> int:
        if share == 2 and os.getpid() != PARENT:
            os._exit(3)  # dies without a word, as a killed child would
        return share + 10

    assert fork_map(work, 3) == [(10, False), (11, True), (12, False)]


def test_an_exception_in_a_share_is_raised_here() -> None:
    def work(share: int) -> int:
        if share == 1:
            raise ValueError(f"share {share} is bad")
        return share

    with pytest.raises(ValueError, match="share 1 is bad"):
        fork_map(work, 2)
    assert multiprocessing.active_children() == []


def test_a_failure_here_stops_every_child() -> None:
    def work(share: int) -> int:
        if share == 0:
            raise RuntimeError("here")
        time.sleep(600)  # a child still at work: it is killed, not waited for
        return share

    def late(signum: int, frame: object) -> None:
        raise AssertionError("fork_map waited for a child it should have stopped")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    try:
        with pytest.raises(RuntimeError, match="here"):
            fork_map(work, 3)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert multiprocessing.active_children() == []


def test_a_result_that_cannot_be_pickled_is_made_here() -> None:
    def work(share: int) -> object:
        return (share, (lambda: None) if os.getpid() != PARENT else None)

    assert [value for value, _ in fork_map(work, 2)] == [(0, None), (1, None)]
