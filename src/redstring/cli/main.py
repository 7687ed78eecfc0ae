"""The `redstring` command: import entities, build graphs from documents, search.

Everything lands in one SQLite file (`--db`), per tenant (`--tenant`, a UUID
or any name, which is mapped to a UUID; `default` when omitted). Entity names
are embedded with the model chosen at import (`--embeddings`), which the file
records, so `search` embeds queries with the same model.

Exit status: 0 on success, 1 when the work failed (a missing file, a bad row,
an unreachable endpoint), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from uuid import NAMESPACE_URL, UUID, uuid5

from redstring.cli.progress import Progress
from redstring.cli.rows import RowError, read_entities
from redstring.composition import Consolidator, Retriever, build_graph, embed_entity_names
from redstring.domain.exceptions import RedstringError
from redstring.domain.ids import SourceId, TenantId
from redstring.domain.retrieval import RetrievalMode
from redstring.domain.source import SourceDocument
from redstring.events.adapters.sqlite import SqliteEventLog
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.vector import VectorRecord
    from redstring.ports.embedding import EmbeddingProvider

#: The tenant used when `--tenant` is omitted.
DEFAULT_TENANT = "default"
#: Names embedded per call during an import, so progress moves steadily.
EMBED_BATCH = 256
#: The embedding choices `--embeddings` accepts.
EMBEDDINGS = ("local", "hash", "none")


class CommandError(Exception):
    """A failure to report in one line and exit with status 1."""


def tenant_id_for(value: str) -> TenantId:
    """`value` itself when it is a UUID, else a stable UUID derived from it."""
    try:
        return TenantId(UUID(value))
    except ValueError:
        return TenantId(uuid5(NAMESPACE_URL, f"redstring:tenant:{value}"))


def embedding_provider(choice: str) -> EmbeddingProvider | None:
    """The provider `--embeddings` names, or `None` for `none`."""
    if choice == "none":
        return None
    if choice == "hash":
        return FakeEmbeddingProvider(dimension=384)
    try:
        from redstring.llm.adapters.e5 import E5EmbeddingProvider
    except ImportError as exc:
        raise CommandError(f"{exc} (or pass --embeddings hash or none)") from exc
    return E5EmbeddingProvider()


async def _provider_for_search(database: Path) -> EmbeddingProvider | None:
    settings = await SqliteVectorStore.stored_settings(database)
    if settings is None:
        return None
    dimension, model = settings
    for choice in ("hash", "local"):
        if model == _model_name(choice):
            provider = embedding_provider(choice)
            if provider is not None and provider.dimension == dimension:
                return provider
    raise CommandError(f"{database} holds vectors of model {model!r}, which this command lacks")


async def _check_stored_model(database: Path, provider: EmbeddingProvider) -> None:
    """Refuse, before anything is written, a model other than the one `database` records."""
    settings = await SqliteVectorStore.stored_settings(database)
    if settings is None:
        return
    dimension, model = settings
    if dimension != provider.dimension or model not in (None, provider.model):
        raise CommandError(
            f"{database} holds vectors of model {model!r} ({dimension} dimensions), "
            f"not {provider.model!r}: pass the --embeddings it was made with, or another --db"
        )


def _model_name(choice: str) -> str:
    if choice == "hash":
        return FakeEmbeddingProvider(dimension=384).model
    try:
        from redstring.llm.adapters.e5 import MODEL
    except ImportError as exc:
        raise CommandError(str(exc)) from exc
    return MODEL


def _read_import(arguments: argparse.Namespace) -> list[Entity]:
    path: Path = arguments.file
    if not path.is_file():
        raise CommandError(f"no such file: {path}")
    try:
        return read_entities(path, tenant_id=tenant_id_for(arguments.tenant))
    except RowError as exc:
        raise CommandError(str(exc)) from exc


async def _import(
    arguments: argparse.Namespace, entities: list[Entity], out: TextIO, err: TextIO
) -> None:
    path: Path = arguments.file
    provider = embedding_provider(arguments.embeddings)
    records: list[VectorRecord] = []
    if provider is not None:
        await _check_stored_model(arguments.db, provider)
        records = await _embed(entities, provider, Progress("embedding", len(entities), err))
    # One transaction per store: a failed import leaves no partial graph.
    async with SqliteGraphStore(arguments.db) as graph:
        await graph.upsert_entities(entities)
    if provider is not None:
        async with SqliteVectorStore(
            arguments.db, dimension=provider.dimension, model=provider.model
        ) as vectors:
            await vectors.upsert_many(records)
    embedded = f", {len(records):,} embedded with {provider.model}" if provider else ""
    print(
        f"imported {len(entities):,} entities from {path} into {arguments.db}{embedded}", file=out
    )


async def _embed(
    entities: Sequence[Entity], provider: EmbeddingProvider, progress: Progress
) -> list[VectorRecord]:
    records: list[VectorRecord] = []
    for start in range(0, len(entities), EMBED_BATCH):
        batch = entities[start : start + EMBED_BATCH]
        records.extend(await embed_entity_names(batch, provider))
        progress.advance(len(batch))
    progress.finish()
    return records


def _read_documents(arguments: argparse.Namespace) -> list[SourceDocument]:
    documents: list[SourceDocument] = []
    for path in arguments.documents:
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            raise CommandError(f"{path} is empty")
        documents.append(SourceDocument(id=SourceId(str(path)), text=text, title=path.name))
    return documents


async def _build(
    arguments: argparse.Namespace, documents: list[SourceDocument], out: TextIO, err: TextIO
) -> None:
    try:
        from redstring.llm.adapters.openai import OpenAiCompatibleLlmProvider
    except ImportError as exc:
        raise CommandError(str(exc)) from exc

    tenant = tenant_id_for(arguments.tenant)
    embeddings = embedding_provider(arguments.embeddings)
    if embeddings is not None:
        await _check_stored_model(arguments.db, embeddings)
    progress = Progress("documents", len(documents), err)
    async with (
        OpenAiCompatibleLlmProvider(
            base_url=arguments.llm_url, model=arguments.model, api_key=arguments.api_key
        ) as llm,
        SqliteGraphStore(arguments.db) as graph,
    ):
        vectors = (
            SqliteVectorStore(arguments.db, dimension=embeddings.dimension, model=embeddings.model)
            if embeddings is not None
            else None
        )
        try:
            for document in documents:
                report = await build_graph(
                    document,
                    provider=llm,
                    store=graph,
                    tenant_id=tenant,
                    skip_failed_chunks=True,
                    embedding_provider=embeddings,
                    vector_store=vectors,
                )
                progress.advance(1)
                print(
                    f"{document.id}: {report.entities} entities, "
                    f"{report.relationships} relationships, {report.failed_chunks} failed chunks",
                    file=out,
                )
        finally:
            if vectors is not None:
                await vectors.close()
    progress.finish()


async def _search(arguments: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    mode = RetrievalMode(arguments.mode)
    provider = await _provider_for_search(arguments.db)
    if provider is None:
        if mode is not RetrievalMode.LEXICAL:
            print("no vectors in this database: searching the lexical channel only", file=err)
        mode = RetrievalMode.LEXICAL
        provider = FakeEmbeddingProvider(dimension=384)
    async with (
        SqliteGraphStore(arguments.db) as graph,
        SqliteVectorStore(
            arguments.db, dimension=provider.dimension, model=provider.model
        ) as vectors,
    ):
        retriever = Retriever(embeddings=provider, vectors=vectors, graph=graph)
        result = await retriever.retrieve(
            arguments.query,
            tenant_id_for(arguments.tenant),
            k=arguments.k,
            mode=mode,
            entity_types=arguments.type,
        )
    if not result.matches:
        print("no matches", file=out)
        return
    print(
        f"{'#':>3}  {'name':<32} {'type':<14} {'fused':>7} {'semantic':>9} {'lexical':>8}", file=out
    )
    for rank, match in enumerate(result.matches, start=1):
        semantic = "-" if match.semantic is None else f"{match.semantic:.3f}"
        lexical = "-" if match.lexical is None else f"{match.lexical:.3f}"
        print(
            f"{rank:>3}  {match.entity.name[:32]:<32} {match.entity.entity_type[:14]:<14} "
            f"{match.score:>7.4f} {semantic:>9} {lexical:>8}",
            file=out,
        )


async def _consolidate(arguments: argparse.Namespace, out: TextIO) -> None:
    tenant_id = tenant_id_for(arguments.tenant)
    settings = await SqliteVectorStore.stored_settings(arguments.db)
    async with SqliteGraphStore(arguments.db) as graph, SqliteEventLog(arguments.db) as log:
        vectors = (
            None
            if settings is None
            else SqliteVectorStore(arguments.db, dimension=settings[0], model=settings[1])
        )
        try:
            consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
            report = await consolidator.consolidate(tenant_id, dry_run=arguments.dry_run)
        finally:
            if vectors is not None:
                await vectors.close()
    merges: list[dict[str, Any]] = [
        {
            "event_id": None if merge.event_id is None else str(merge.event_id),
            "canonical_id": str(merge.canonical_id),
            "merged_ids": [str(each) for each in merge.merged_ids],
            "score": merge.score,
            "reason": merge.reason,
        }
        for merge in report.merges
    ]
    if arguments.json:
        summary = {"dry_run": report.dry_run, "entities": report.entities, "merges": merges}
        print(json.dumps(summary, ensure_ascii=False), file=out)
        return
    verb = "would merge" if report.dry_run else "merged"
    print(f"{verb} {len(merges)} groups of {report.entities} entities", file=out)
    for merge in merges:
        event = merge["event_id"] or "-"
        print(f"{event}  {merge['canonical_id']} <- {', '.join(merge['merged_ids'])}", file=out)
        print(f"    {merge['reason']}", file=out)


async def _undo_merge(arguments: argparse.Namespace, out: TextIO) -> None:
    try:
        merge_event_id = UUID(arguments.event_id)
    except ValueError:
        raise CommandError(f"EVENT_ID must be a UUID, got {arguments.event_id!r}") from None
    settings = await SqliteVectorStore.stored_settings(arguments.db)
    async with SqliteGraphStore(arguments.db) as graph, SqliteEventLog(arguments.db) as log:
        vectors = (
            None
            if settings is None
            else SqliteVectorStore(arguments.db, dimension=settings[0], model=settings[1])
        )
        try:
            consolidator = Consolidator(graph=graph, event_log=log, vectors=vectors)
            undone = await consolidator.undo(tenant_id_for(arguments.tenant), merge_event_id)
        finally:
            if vectors is not None:
                await vectors.close()
    print(f"undid merge {merge_event_id} (event {undone})", file=out)


def parser() -> argparse.ArgumentParser:
    """The argument parser, with one subcommand per job."""
    top = argparse.ArgumentParser(
        prog="redstring", description="Build a multi-tenant entity graph and search it."
    )
    commands = top.add_subparsers(dest="command", required=True)

    def common(command: argparse.ArgumentParser) -> None:
        command.add_argument("--db", type=Path, required=True, help="the SQLite database file")
        command.add_argument(
            "--tenant", default=DEFAULT_TENANT, help="a tenant UUID or name (default: default)"
        )

    imports = commands.add_parser("import", help="import entities from JSON Lines or CSV")
    imports.add_argument("file", type=Path, help="rows with name, entity_type, properties")
    common(imports)
    imports.add_argument("--embeddings", choices=EMBEDDINGS, default="local")

    builds = commands.add_parser("build", help="extract documents through an LLM endpoint")
    builds.add_argument("documents", type=Path, nargs="+", help="text files")
    common(builds)
    builds.add_argument("--llm-url", required=True, help="OpenAI-compatible API root, e.g. .../v1")
    builds.add_argument("--model", required=True, help="the chat model's name")
    builds.add_argument("--api-key", default=None, help="sent as a bearer token when given")
    builds.add_argument("--embeddings", choices=EMBEDDINGS, default="local")

    searches = commands.add_parser("search", help="rank entities for a free-text query")
    searches.add_argument("query")
    common(searches)
    searches.add_argument("-k", type=int, default=10, help="how many results (default 10)")
    searches.add_argument(
        "--mode", choices=[mode.value for mode in RetrievalMode], default=RetrievalMode.HYBRID
    )
    searches.add_argument(
        "--type", action="append", default=None, help="keep only this entity type (repeatable)"
    )
    consolidates = commands.add_parser(
        "consolidate", help="merge entities that are one real-world thing (undoable)"
    )
    common(consolidates)
    consolidates.add_argument("--dry-run", action="store_true", help="report, write nothing")
    consolidates.add_argument("--json", action="store_true", help="print JSON")

    undoes = commands.add_parser("undo-merge", help="undo one merge, by its event id")
    undoes.add_argument("event_id", metavar="EVENT_ID")
    common(undoes)
    return top


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line; return the exit status."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    arguments = parser().parse_args(argv)
    try:
        # Files are read and checked before anything is opened or written.
        if arguments.command == "import":
            asyncio.run(_import(arguments, _read_import(arguments), out, err))
        elif arguments.command == "build":
            asyncio.run(_build(arguments, _read_documents(arguments), out, err))
        else:
            if not arguments.db.is_file():
                raise CommandError(f"no such database: {arguments.db}")
            if arguments.command == "consolidate":
                asyncio.run(_consolidate(arguments, out))
            elif arguments.command == "undo-merge":
                asyncio.run(_undo_merge(arguments, out))
            else:
                asyncio.run(_search(arguments, out, err))
    except (CommandError, RedstringError, ValueError, OSError) as exc:
        print(f"redstring {arguments.command}: {exc}", file=err)
        return 1
    return 0
