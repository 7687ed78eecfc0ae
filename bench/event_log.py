"""The durable event log's append cost, and the lifetime guard's, measured in the same run.

Prints, for `--appends` single-event appends (300 by default) of a
one-entity `DocumentExtracted`:

- `InMemoryEventLog`, the baseline;
- `SqliteEventLog` as shipped (`synchronous=FULL`, one fsync per batch);
- the same log at `synchronous=NORMAL`, to show what the fsync costs;
- one batch of all the events through `append_many`, as shipped;

each as milliseconds per append and as a ratio to the in-memory log. Then
the closed check every adapter's coroutine methods carry (`AsyncClosable`),
as nanoseconds per call of a trivial method with and without it.

Usage: `uv run python bench/event_log.py [--appends 300]`
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from redstring import AsyncClosable, InMemoryEventLog, SqliteEventLog
from redstring.testing.event_log import event_in
from redstring.testing.factories import TENANT

if TYPE_CHECKING:
    from redstring.ports.event_log import EventLog


async def per_append(log: EventLog, appends: int, *, batched: bool = False) -> float:
    """Seconds per event appended, one event per call unless `batched`."""
    await log.last_sequence()  # open the file first
    events = [event_in(TENANT) for _ in range(appends)]
    began = time.perf_counter()
    if batched:
        await log.append_many(events)
    else:
        for event in events:
            await log.append(event)
    return (time.perf_counter() - began) / appends


class _Plain:
    async def call(self) -> int:
        return 1


class _Guarded(AsyncClosable):
    async def call(self) -> int:
        return 1


async def per_call(target: _Plain | _Guarded, calls: int = 200_000) -> float:
    began = time.perf_counter()
    for _ in range(calls):
        await target.call()
    return (time.perf_counter() - began) / calls


async def main(appends: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        memory = await per_append(InMemoryEventLog(), appends)
        results = {"in-memory": memory}
        async with SqliteEventLog(Path(folder) / "full.db") as log:
            results["sqlite (FULL, shipped)"] = await per_append(log, appends)
        async with SqliteEventLog(Path(folder) / "normal.db") as log:
            log._worker._synchronous = "NORMAL"  # the comparison point only
            results["sqlite (NORMAL)"] = await per_append(log, appends)
        async with SqliteEventLog(Path(folder) / "batch.db") as log:
            results["sqlite, one append_many"] = await per_append(log, appends, batched=True)
    for name, seconds in results.items():
        print(f"{name:<26} {seconds * 1e3:8.3f} ms/event  {seconds / memory:8.1f}x in-memory")
    plain, guarded = await per_call(_Plain()), await per_call(_Guarded())
    print(f"trivial coroutine method   {plain * 1e9:8.0f} ns bare, {guarded * 1e9:.0f} ns guarded")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=300)
    asyncio.run(main(parser.parse_args().appends))
