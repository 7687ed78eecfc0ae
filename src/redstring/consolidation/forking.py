"""Spreading a round's pair scoring over forked processes (ADR 0117).

Scoring a pair is pure Python over objects the round already holds, so
threads would take turns at one interpreter lock; forked children see the
parent's profiles and memo as they are, without a copy or a pickle (building
100k profiles' pickles costs more than scoring a tenth of their pairs). Each
child scores its share and sends back only what it found, as plain values;
the caller folds them in, so the outcome is the one a single process reaches.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import warnings
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection

#: The most processes one consolidation round is spread over.
MAX_WORKERS: Final = 32


def check_workers(workers: object, *, argument: str = "workers") -> int:
    """`workers` as a count of processes or threads, 1 to `MAX_WORKERS`.

    Raises:
        ValueError: it is not an int in that range (a bool is not), naming it.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"{argument} must be an int from 1 to {MAX_WORKERS}, got {workers!r:.40}")
    return workers


def can_fork() -> bool:
    """Whether this platform starts processes by forking (POSIX; not Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


def fork_map[T](work: Callable[[int], T], shares: int) -> list[tuple[T, bool]]:
    """`work(share)` for each share of `0..shares - 1`, with whether it ran in a child.

    Share 0 runs here; each other share runs in a child forked for it, and
    its result comes back pickled over a pipe. A child that fails or dies
    before its result is whole has its share run here instead, so an
    exception `work` raises is raised here, and a result is never lost.
    With one share, or where processes cannot fork, every share runs here.

    Raises:
        ValueError: `shares` is not an int of at least 0, naming it.
    """
    if isinstance(shares, bool) or not isinstance(shares, int) or shares < 0:
        raise ValueError(f"shares must be an int of at least 0, got {shares!r:.40}")
    if shares <= 1 or not can_fork():
        return [(work(share), False) for share in range(shares)]
    context = multiprocessing.get_context("fork")
    children: list[tuple[int, multiprocessing.process.BaseProcess, Connection]] = []
    try:
        for share in range(1, shares):
            receiving, sending = context.Pipe(duplex=False)
            process = context.Process(target=_run_share, args=(work, share, sending), daemon=True)
            children.append((share, process, receiving))
            with warnings.catch_warnings():
                # The child runs `work` on memory it inherited and exits: it takes no
                # lock another thread could hold (a store's worker, the event loop).
                warnings.filterwarnings("ignore", "This process .* is multi-threaded")
                process.start()
            sending.close()
        results: dict[int, tuple[T, bool]] = {0: (work(0), False)}
        for share, child, receiving in children:
            results[share] = _collected(work, share, child, receiving)
    finally:
        for _, child, receiving in children:
            receiving.close()
            if child.pid is not None:  # started
                child.kill()
                child.join()
    return [results[share] for share in range(shares)]


def _collected[T](
    work: Callable[[int], T],
    share: int,
    child: multiprocessing.process.BaseProcess,
    receiving: Connection,
) -> tuple[T, bool]:
    """The child's result for `share`, or the share run here when the child gave none."""
    try:
        data = receiving.recv_bytes()
    except (EOFError, OSError):  # it failed or died before its result was whole
        data = None
    child.join()
    if data is None or child.exitcode != 0:
        return work(share), False
    result: T = pickle.loads(data)  # our own child's bytes, over our own pipe
    return result, True


def _run_share(
    work: Callable[[int], object], share: int, sending: Connection
) -> None:  # pragma: no cover - runs only in a child, whose coverage is never written
    """A child's whole life: run its share, send the pickled result, and leave at once.

    What it does is tested through `fork_map`'s results: each share's value
    comes back, and a failing share is run again in the parent.
    """
    try:
        data = pickle.dumps(work(share), protocol=pickle.HIGHEST_PROTOCOL)
        sending.send_bytes(data)
        sending.close()
    except BaseException:  # the parent runs the share itself, and raises what it raises
        os._exit(1)
    os._exit(0)
