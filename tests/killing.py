"""Kill a writer process inside a batch: what the crash tests of every durable store share.

Each test's writer is a Python script that prints `writing N` before its
N-th batch and `wrote N` after it. The first batch is timed whole; the
process is then killed at a random point inside the second.
"""

from __future__ import annotations

import asyncio
import random
import signal
import sys
import textwrap
import time
from contextlib import suppress


async def kill_inside_second_batch(writer: str, *args: str, earliest: float = 0.2) -> float:
    """Run `writer` with `args`, SIGKILL it inside its second batch; the delay it was killed at.

    The kill falls between `earliest` and 0.9 of the first batch's time
    after the second batch began; each line may take up to two minutes.
    Fails if the writer finished first.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", textwrap.dedent(writer), *args, stdout=asyncio.subprocess.PIPE
    )

    async def announced(expected: str) -> float:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
        assert line.decode().strip() == expected
        return time.perf_counter()

    delay = 0.0
    try:
        began = await announced("writing 0")
        batch = await announced("wrote 0") - began
        await announced("writing 1")
        delay = random.uniform(earliest, 0.9) * batch
        await asyncio.sleep(delay)
    finally:
        with suppress(ProcessLookupError):  # already gone, if it failed early
            process.kill()
        status = await process.wait()
    assert status == -signal.SIGKILL, "the writer finished before it was killed"
    return delay
