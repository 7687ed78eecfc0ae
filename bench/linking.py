"""What linking mentions costs `import_documents`, against importing the same text unlinked.

Builds `--documents` synthetic documents (about 700 characters each, seeded)
of filler prose with city names from `docs/examples/data/cities.jsonl`
planted in them, names and aliases both, and a graph of those 4,000 cities.
The filler is 14 words, or with `--prose` words drawn as often as the
docstrings of Python's standard library use them (thousands of distinct
words, as real prose has: what `link_lowercase` pays for). Prints, measured
in one run, for in-memory stores (the graph on SQLite with `--sqlite`, on
an embedded Postgres server started for the run with `--postgres`):

- `import_documents` without a graph (cut, indexed, recorded): the baseline;
- the same documents with the graph, so every mention is linked;
- the same with `link_lowercase=True` (ADR 0121), every distinct word
  looked up;

each as documents and chunks per second and as a ratio to the baseline,
then how many of the planted names were linked (recall) and how many links
were not planted (each namesake counts), and the machine's load.

Usage: `uv run --all-extras python bench/linking.py [--documents 2000]
[--prose] [--sqlite | --postgres]`
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import re
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from uuid import UUID, uuid5

if __package__ in (None, ""):  # run as `python bench/linking.py`, as its usage says
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.postgres import start_server
from redstring import (
    Entity,
    EntityId,
    ExtractionMethod,
    InMemoryChunkStore,
    InMemoryGraphStore,
    SourceDocument,
    SourceId,
    SqliteGraphStore,
    TenantId,
    import_documents,
    normalize_name,
)
from redstring.graph.adapters.postgres import PostgresGraphStore

CITIES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "data" / "cities.jsonl"
TENANT = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
FILLER = [
    "the",
    "harbour",
    "was",
    "busy",
    "that",
    "year",
    "and",
    "trade",
    "grew",
    "along",
    "the",
    "river",
    "while",
    "new",
    "roads",
]


def cities() -> list[Entity]:
    """The sample's 4,000 cities as entities of `TENANT`."""
    rows = [json.loads(line) for line in CITIES.read_text(encoding="utf-8").splitlines()]
    return [
        Entity(
            id=EntityId(uuid5(TENANT, row["name"])),
            tenant_id=TENANT,
            name=row["name"],
            normalized_name=normalize_name(row["name"]),
            entity_type="city",
            extraction_method=ExtractionMethod.MANUAL,
            confidence=1.0,
            properties={"aliases": row["properties"].get("aliases", [])},
        )
        for row in rows
    ]


def prose_words() -> list[str]:
    """Every lowercase word of the standard library's docstrings, repeats kept, in file order."""
    words: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                words += re.findall(r"\b[a-z]+\b", ast.get_docstring(node) or "")
    return words


def documents(
    count: int, entities: list[Entity], filler: list[str]
) -> tuple[list[SourceDocument], int]:
    """`count` documents with names planted among filler words, and how many were planted."""
    chooser = random.Random(7)
    latin = [
        (name, entity)
        for entity in entities
        for name in [entity.name, *entity.properties["aliases"]]
        if name.isascii() and name[:1].isupper()
    ]
    made, planted = [], 0
    for number in range(count):
        words: list[str] = []
        while sum(len(word) + 1 for word in words) < 700:
            if chooser.random() < 0.08:
                words.append(chooser.choice(latin)[0] + ",")
                planted += 1
            else:
                words.append(chooser.choice(filler))
        made.append(SourceDocument(id=SourceId(f"doc-{number}"), text=" ".join(words) + "."))
    return made, planted


async def timed(
    batch: list[SourceDocument],
    graph: InMemoryGraphStore | SqliteGraphStore | PostgresGraphStore | None,
    *,
    link_lowercase: bool = False,
) -> tuple[float, int]:
    """Seconds to import `batch` into a fresh chunk store, and the mentions linked."""
    chunks = InMemoryChunkStore()
    began = time.perf_counter()
    report = await import_documents(
        batch, TENANT, chunks=chunks, graph=graph, link_lowercase=link_lowercase
    )
    return time.perf_counter() - began, report.mentions


async def main(count: int, *, prose: bool, sqlite: Path | None, postgres: str | None) -> None:
    entities = cities()
    graph: InMemoryGraphStore | SqliteGraphStore | PostgresGraphStore = (
        InMemoryGraphStore()
        if sqlite is None and postgres is None
        else SqliteGraphStore(sqlite)
        if sqlite is not None
        else PostgresGraphStore(postgres or "", schema="bench_linking")
    )
    await graph.upsert_entities(entities)
    filler = prose_words() if prose else FILLER
    batch, planted = documents(count, entities, filler)
    chunk_count = sum(max(1, len(d.text) // 900) for d in batch)
    baseline, _ = await timed(batch, None)
    linked, mentions = await timed(batch, graph)
    lowercase, lowercase_mentions = await timed(batch, graph, link_lowercase=True)
    kind = {"InMemory": "in-memory", "Sqlite": "SQLite"}.get(type(graph).__name__[:-10], "Postgres")
    await graph.close()
    print(
        f"{count:,} documents (~{chunk_count:,} chunks), {len(entities):,} cities in the "
        f"{kind} graph, {len(set(filler)):,} distinct filler words"
    )
    for name, seconds in (
        ("unlinked (baseline)", baseline),
        ("linked", linked),
        ("linked, lowercase too", lowercase),
    ):
        print(
            f"{name:<22} {count / seconds:9,.0f} documents/s {chunk_count / seconds:9,.0f} "
            f"chunks/s {seconds / baseline:6.1f}x baseline"
        )
    print(
        f"planted names {planted:,}, mentions linked {mentions:,} "
        f"({lowercase_mentions:,} with lowercase; namesakes each count)"
    )
    load = await asyncio.to_thread(Path("/proc/loadavg").read_text)
    print(f"load average: {load.strip()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--prose", action="store_true", help="real prose's vocabulary as filler")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--sqlite", action="store_true", help="the graph in a SQLite file")
    where.add_argument("--postgres", action="store_true", help="the graph on a Postgres server")
    arguments = parser.parse_args()
    server, home, dsn = None, None, None
    if arguments.postgres:
        dsn, server, home = start_server(keep=False, shared_buffers="256MB")
    try:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(
                main(
                    arguments.documents,
                    prose=arguments.prose,
                    sqlite=Path(folder) / "graph.db" if arguments.sqlite else None,
                    postgres=dsn,
                )
            )
    finally:
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
            shutil.rmtree(home or "", ignore_errors=True)
