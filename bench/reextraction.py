"""The graph projection's cost of re-extracting documents, against their first extraction.

Applies `--documents` `DocumentExtracted` events of 20 entities each to a
fresh SQLite graph store (the baseline: nothing held), then applies them
again three ways, each on its own fresh store:

- `unchanged`: the same events again (every entity held, equal);
- `changed`: events whose entities dropped a property (every entity held,
  different, so the projection asks the store whether others were merged
  into it: ADR 0120);
- `changed, merged`: the same, with every fifth entity a merge canonical
  (the projection keeps what its merge gave it).

Prints the median of `--rounds` rounds as milliseconds and as a ratio to
the first extraction measured in the same round.

Usage: `uv run python bench/reextraction.py [--documents 250] [--rounds 3]`
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from redstring import SqliteGraphStore
from redstring.domain.merging import absorb
from redstring.projections.graph import GraphProjection
from redstring.testing.event_log import make_document_extracted, make_entities_merged
from redstring.testing.factories import make_entity

WIDTH = 20


async def _round(directory: Path, documents: int, kind: str) -> tuple[float, float]:
    """Seconds of the first extraction and of the re-extraction of `kind`, on one store."""
    store = SqliteGraphStore(directory / f"{kind}-{time.perf_counter_ns()}.db")
    projection = GraphProjection(store)
    first = [
        make_document_extracted(
            [
                make_entity(name=f"Person {number} {index}", properties={"born": str(index)})
                for index in range(WIDTH)
            ]
        )
        for number in range(documents)
    ]
    started = time.perf_counter()
    for event in first:
        await projection.apply(event)
    baseline = time.perf_counter() - started
    again = first
    if kind != "unchanged":
        again = [
            make_document_extracted(
                [entity.model_copy(update={"properties": {}}) for entity in event.entities]
            )
            for event in first
        ]
    if kind == "changed, merged":
        for event in first:
            entities = event.entities
            for at in range(0, WIDTH - 1, 5):
                canonical, merged = entities[at], entities[at + 1]
                await projection.apply(make_entities_merged(absorb(canonical, [merged]), [merged]))
    started = time.perf_counter()
    for event in again:
        await projection.apply(event)
    seconds = time.perf_counter() - started
    await store.close()
    return baseline, seconds


async def main(documents: int, rounds: int) -> None:
    print(f"{documents} documents x {WIDTH} entities, SQLite graph store, {rounds} rounds")
    print("| re-extraction | first extraction ms | re-extraction ms | ratio |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for kind in ("unchanged", "changed", "changed, merged"):
            pairs = [await _round(Path(directory), documents, kind) for _ in range(rounds)]
            base = statistics.median(first for first, _ in pairs)
            seconds = statistics.median(again for _, again in pairs)
            ratio = statistics.median(again / first for first, again in pairs)
            print(f"| {kind} | {base * 1000:.0f} | {seconds * 1000:.0f} | {ratio:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--documents", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.documents, arguments.rounds))
