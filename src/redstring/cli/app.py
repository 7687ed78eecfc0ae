"""The `redstring` command, built with click: one function per subcommand.

Everything lands in one SQLite file (`--db`), per tenant (`--tenant`, a UUID
or any name, which is mapped to a UUID; `default` when omitted). Read
commands (`search`, `stats`, `export`, `neighbors`) open the file
read-only and take `--json`. Exit status: 0 done, 1 the work failed (one
line on standard error), 2 a usage error, 130 interrupted. See ADR 0022.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO
from uuid import UUID

import click

from redstring import __version__
from redstring.cli.output import print_json, print_table
from redstring.cli.progress import Progress
from redstring.cli.rows import FORMATS, STDIN, RowError, Rows, decode, export_line, read_rows
from redstring.cli.stores import (
    DEFAULT_TENANT,
    EMBEDDINGS,
    CommandError,
    Database,
    embedding_provider,
    event_log,
    migrate_database,
    open_database,
    open_for_delete,
    search_provider,
    shown,
    tenant_id_for,
    tenant_label,
)
from redstring.composition import (
    Consolidator,
    Retriever,
    build_graphs,
    delete_entity,
    import_entities,
)
from redstring.domain.exceptions import RedstringError
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.retrieval import RetrievalMode
from redstring.domain.source import SourceDocument
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.vector.adapters.memory import InMemoryVectorStore

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

    from redstring.composition import ConsolidationReport
    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId
    from redstring.domain.relationship import Relationship

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED: Final = 130
#: Documents `build` sends to the model at once by default.
BUILD_CONCURRENCY: Final = 4


class Interrupted(Exception):
    """Ctrl-C arrived; raised where stopping leaves nothing half-written."""


@dataclass
class _Interrupt:
    """Ctrl-C: at once in a read; in a write, noted and acted on at the next safe point.

    A write command calls `check()` where stopping leaves nothing
    half-written; a second Ctrl-C stops at once.
    """

    deferring: bool = False
    pressed: bool = False

    def handle(self, signum: int, frame: object) -> None:
        if self.pressed or not self.deferring:
            raise KeyboardInterrupt
        self.pressed = True
        print("stopping at the next safe point (Ctrl-C again to stop now)", file=sys.stderr)

    def check(self) -> None:
        if self.pressed:
            raise Interrupted


_interrupt = _Interrupt()


def _run[T](work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(work)


# -- shared options ------------------------------------------------------------


def _db_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db",
        required=True,
        metavar="FILE|URL",
        help="The SQLite database file that holds the graph and its vectors, or a "
        "postgresql:// URL (the postgres extra) whose redstring schema holds them.",
    )(function)


def _tenant_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--tenant",
        default=DEFAULT_TENANT,
        show_default=True,
        help="A tenant UUID, or any name (mapped to a fixed UUID).",
    )(function)


def _json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(
        function
    )


def _embeddings_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--embeddings",
        type=click.Choice(EMBEDDINGS),
        default="local",
        show_default=True,
        help="How names are embedded: local (multilingual-e5-small), hash "
        "(meaningless, fast, for trying things out) or none (lexical search only).",
    )(function)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(
    __version__, "--version", prog_name="redstring", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Build a multi-tenant entity graph in one SQLite file, and search it."""


# -- import ----------------------------------------------------------------------


@cli.command("import")
@click.argument("file", metavar="FILE")
@_db_option
@_tenant_option
@_embeddings_option
@click.option(
    "--format",
    "file_format",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="The file's format; auto goes by the suffix (.csv, .tsv, .json, else JSON Lines).",
)
@click.option(
    "--id-column",
    default=None,
    metavar="NAME",
    help="The column or key that identifies each entity (a UUID, or any text).",
)
def import_command(
    file: str, db: str, tenant: str, embeddings: str, file_format: str, id_column: str | None
) -> None:
    """Import entities from FILE (JSON Lines, a JSON array, CSV or TSV; - reads stdin).

    Every row is read and checked before the database is opened. Names
    already embedded with the same model are not embedded again.
    """
    tenant_id = tenant_id_for(tenant)
    rows = _read_input(file, tenant_id, file_format, id_column)
    provider = embedding_provider(embeddings)
    _interrupt.deferring = True

    async def work() -> str:
        database = await open_database(db, read_only=False, embeddings=provider)
        try:
            with Progress("embedding", "names", sys.stderr) as progress:

                def report(done: int, total: int) -> None:
                    progress(done, total)
                    _interrupt.check()

                result = await import_entities(
                    rows.entities,
                    graph=database.graph,
                    embeddings=provider,
                    vectors=database.vectors,
                    relationships=rows.relationships,
                    event_log=database.events,
                    source_id=rows.origin,
                    on_progress=report,
                )
        finally:
            await database.close()
        parts = [
            f"imported {_count(result.entities, 'entity', 'entities')} from {file} into {shown(db)}"
        ]
        if result.relationships:
            parts.append(_count(result.relationships, "relationship", "relationships"))
        if provider is not None:
            parts.append(f"{result.embedded:,} embedded with {provider.model}")
            if result.already_embedded:
                parts.append(f"{result.already_embedded:,} already embedded")
        if result.duplicates:
            parts.append(f"{_count(result.duplicates, 'duplicate row', 'duplicate rows')} merged")
        return ", ".join(parts)

    click.echo(_run(work()))


def _read_input(file: str, tenant_id: TenantId, file_format: str, id_column: str | None) -> Rows:
    if file == STDIN:
        data = sys.stdin.buffer.read()
    else:
        path = Path(file)
        if path.is_dir():
            raise CommandError(f"{file} is a directory, not a file")
        if not path.parent.is_dir():
            raise CommandError(f"no such directory: {path.parent}")
        if not path.is_file():
            raise CommandError(f"no such file: {file}")
        data = path.read_bytes()
    return read_rows(
        decode(data, source=file),
        source=file,
        tenant_id=tenant_id,
        file_format=file_format,
        id_column=id_column,
    )


# -- build -----------------------------------------------------------------------


@cli.command("build")
@click.argument("documents", nargs=-1, required=True, metavar="DOCUMENT...")
@_db_option
@_tenant_option
@click.option("--llm-url", required=True, help="The OpenAI-compatible API root, e.g. .../v1.")
@click.option("--model", required=True, help="The chat model's name.")
@click.option("--api-key", default=None, help="Sent as a bearer token when given.")
@_embeddings_option
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=BUILD_CONCURRENCY,
    show_default=True,
    help="How many documents are sent to the model at once.",
)
def build_command(
    documents: Sequence[str],
    db: str,
    tenant: str,
    llm_url: str,
    model: str,
    api_key: str | None,
    embeddings: str,
    concurrency: int,
) -> None:
    """Extract entities and relationships from text DOCUMENTs through a chat model.

    Every document is read before the first request. A chunk the model
    answers badly is skipped; a document none of whose chunks succeed stops
    the command, and documents not yet started are not sent.
    """
    try:
        from redstring.llm.adapters.openai import OpenAiCompatibleLlmProvider
    except ImportError as exc:
        raise CommandError(str(exc)) from exc
    sources = _read_documents(documents)
    provider = embedding_provider(embeddings)
    _interrupt.deferring = True

    async def work() -> list[str]:
        database = await open_database(db, read_only=False, embeddings=provider)
        try:
            async with OpenAiCompatibleLlmProvider(
                base_url=llm_url, model=model, api_key=api_key
            ) as llm:
                with Progress("documents", "documents", sys.stderr) as progress:

                    def report(done: int, total: int) -> None:
                        progress(done, total)
                        _interrupt.check()

                    reports = await build_graphs(
                        sources,
                        provider=llm,
                        store=database.graph,
                        tenant_id=tenant_id_for(tenant),
                        concurrency=concurrency,
                        on_progress=report,
                        skip_failed_chunks=True,
                        embedding_provider=provider,
                        vector_store=database.vectors,
                        event_log=database.events,
                    )
        finally:
            await database.close()
        return [
            f"{document.id}: {_count(report.entities, 'entity', 'entities')}, "
            f"{_count(report.relationships, 'relationship', 'relationships')}, "
            f"{_count(report.failed_chunks, 'failed chunk', 'failed chunks')}"
            for document, report in zip(sources, reports, strict=True)
        ]

    for line in _run(work()):
        click.echo(line)


def _read_documents(paths: Sequence[str]) -> list[SourceDocument]:
    documents: list[SourceDocument] = []
    for name in paths:
        path = Path(name)
        if not path.parent.is_dir():
            raise CommandError(f"no such directory: {path.parent}")
        if not path.is_file():
            raise CommandError(f"no such file: {name}")
        text = decode(path.read_bytes(), source=name)
        if not text.strip():
            raise CommandError(f"{name} is empty")
        documents.append(SourceDocument(id=SourceId(name), text=text, title=path.name))
    return documents


# -- search ----------------------------------------------------------------------


@cli.command("search")
@click.argument("query")
@_db_option
@_tenant_option
@click.option(
    "-k", type=click.IntRange(min=0), default=10, show_default=True, help="How many results."
)
@click.option(
    "--mode",
    type=click.Choice([mode.value for mode in RetrievalMode]),
    default=RetrievalMode.HYBRID.value,
    show_default=True,
    help="Which channels rank: both, the embedding (semantic) or the name (lexical).",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    metavar="TYPE",
    help="Keep only entities of this type, exactly as written (repeatable).",
)
@_json_option
def search_command(
    query: str, db: str, tenant: str, k: int, mode: str, types: Sequence[str], as_json: bool
) -> None:
    """Rank the tenant's entities for a free-text QUERY."""
    tenant_id = tenant_id_for(tenant)
    err = sys.stderr

    async def work() -> list[dict[str, Any]]:
        database = await open_database(db, read_only=True)
        try:
            chosen = RetrievalMode(mode)
            provider = await search_provider(database)
            vectors: Any = database.vectors
            if provider is None:
                if chosen is not RetrievalMode.LEXICAL:
                    print(
                        "no vectors in this database: searching the lexical channel only", file=err
                    )
                chosen = RetrievalMode.LEXICAL
                provider = FakeEmbeddingProvider(dimension=384)
                vectors = InMemoryVectorStore(dimension=384)
            await _say_what_is_missing(database, tenant, tenant_id, types, err)
            retriever = Retriever(embeddings=provider, vectors=vectors, graph=database.graph)
            result = await retriever.retrieve(
                query, tenant_id, k=k, mode=chosen, entity_types=list(types) or None
            )
        finally:
            await database.close()
        return [
            {
                "rank": rank,
                "id": str(match.entity.id),
                "name": match.entity.name,
                "entity_type": match.entity.entity_type,
                "score": match.score,
                "semantic": match.semantic,
                "lexical": match.lexical,
                "properties": match.entity.properties,
            }
            for rank, match in enumerate(result.matches, start=1)
        ]

    matches = _run(work())
    if as_json:
        print_json({"query": query, "tenant": tenant, "matches": matches})
        return
    if not matches:
        click.echo("no matches")
        return
    print_table(
        ["#", "name", "type", "fused", "semantic", "lexical", "id", "properties"],
        [
            [
                str(match["rank"]),
                match["name"],
                match["entity_type"],
                f"{match['score']:.4f}",
                _score(match["semantic"]),
                _score(match["lexical"]),
                match["id"],
                json.dumps(match["properties"], ensure_ascii=False) if match["properties"] else "",
            ]
            for match in matches
        ],
        numeric={"#", "fused", "semantic", "lexical"},
        widest={"name": 40, "type": 16, "properties": 48},
        optional=["id", "properties"],
    )


def _count(number: int, one: str, many: str) -> str:
    return f"{number:,} {one if number == 1 else many}"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


async def _say_what_is_missing(
    database: Database, tenant: str, tenant_id: TenantId, types: Sequence[str], err: TextIO
) -> None:
    """A note on stderr when the tenant, or a type asked for, holds nothing."""
    if not await database.graph.find_entities(tenant_id, limit=1):
        print(f"tenant {tenant!r} holds no entities in {database.location}", file=err)
        return
    for entity_type in types:
        if not await database.graph.find_entities(tenant_id, entity_type=entity_type, limit=1):
            print(f"tenant {tenant!r} holds no entity of type {entity_type!r}", file=err)


# -- stats -----------------------------------------------------------------------


@cli.command("stats")
@_db_option
@_json_option
def stats_command(db: str, as_json: bool) -> None:
    """Count what the database holds: entities, relationships and vectors per tenant."""

    async def work() -> dict[str, Any]:
        database = await open_database(db, read_only=True)
        try:
            graph = await database.graph.count_by_tenant()
            vectors = (
                await database.vectors.count_by_tenant() if database.vectors is not None else {}
            )
        finally:
            await database.close()
        tenants = sorted(set(graph) | set(vectors), key=str)
        rows = [
            {
                "tenant": tenant_label(tenant),
                "tenant_id": str(tenant),
                "entities": graph.get(tenant, (0, 0))[0],
                "relationships": graph.get(tenant, (0, 0))[1],
                "vectors": vectors.get(tenant, 0),
            }
            for tenant in tenants
        ]
        return {
            "database": shown(db),
            "entities": sum(row["entities"] for row in rows),
            "relationships": sum(row["relationships"] for row in rows),
            "vectors": sum(row["vectors"] for row in rows),
            "models": [database.model] if database.model else [],
            "dimension": database.dimension,
            "tenants": rows,
        }

    stats = _run(work())
    if as_json:
        print_json(stats)
        return
    models = ", ".join(stats["models"]) or "none (no vectors)"
    click.echo(
        f"{stats['entities']:,} entities, {stats['relationships']:,} relationships, "
        f"{stats['vectors']:,} vectors in {_count(len(stats['tenants']), 'tenant', 'tenants')}; "
        f"model: {models}"
    )
    if stats["tenants"]:
        print_table(
            ["tenant", "entities", "relationships", "vectors"],
            [
                [
                    row["tenant"],
                    f"{row['entities']:,}",
                    f"{row['relationships']:,}",
                    f"{row['vectors']:,}",
                ]
                for row in stats["tenants"]
            ],
            numeric={"entities", "relationships", "vectors"},
        )


# -- export ----------------------------------------------------------------------


@cli.command("export")
@_db_option
@_tenant_option
def export_command(db: str, tenant: str) -> None:
    """Write the tenant's entities and relationships to stdout as JSON Lines.

    `redstring import` reads the output back with every field and id kept,
    into any tenant.
    """
    tenant_id = tenant_id_for(tenant)

    async def work() -> tuple[list[Entity], list[Relationship]]:
        database = await open_database(db, read_only=True)
        try:
            entities = await database.graph.find_entities(tenant_id)
            relationships: dict[str, Relationship] = {}
            for entity in entities:
                for relationship in await database.graph.get_relationships(entity.id, tenant_id):
                    relationships[str(relationship.id)] = relationship
        finally:
            await database.close()
        return entities, [relationships[key] for key in sorted(relationships)]

    entities, relationships = _run(work())
    for entity in entities:
        click.echo(export_line(entity))
    for relationship in relationships:
        click.echo(export_line(relationship))


# -- delete ----------------------------------------------------------------------


@cli.command("delete")
@click.argument("entities", nargs=-1, metavar="ENTITY...")
@_db_option
@_tenant_option
@click.option(
    "--entire-tenant",
    is_flag=True,
    help="Delete every entity, relationship and vector of the tenant.",
)
def delete_command(entities: Sequence[str], db: str, tenant: str, entire_tenant: bool) -> None:
    """Delete ENTITYs (ids, or exact names) from both channels, or an entire tenant."""
    if bool(entities) == entire_tenant:
        raise click.UsageError("name the entities to delete, or pass --entire-tenant, not both")
    tenant_id = tenant_id_for(tenant)

    async def work() -> str:
        database = await open_database(db, read_only=True)
        try:
            ids = [await _resolve(database, tenant_id, entity) for entity in entities]
        finally:
            await database.close()
        database = await open_for_delete(db)
        try:
            if entire_tenant:
                removed = await database.graph.delete_by_tenant(tenant_id)
                vectors = (
                    await database.vectors.delete_by_tenant(tenant_id)
                    if database.vectors is not None
                    else 0
                )
                return (
                    f"deleted tenant {tenant!r}: {_count(removed, 'entity', 'entities')}, "
                    f"{_count(vectors, 'vector', 'vectors')}"
                )
            deleted = 0
            async with event_log(db) as log:
                for entity_id in ids:
                    deleted += await delete_entity(
                        entity_id,
                        tenant_id,
                        graph=database.graph,
                        vectors=database.vectors,
                        event_log=log,
                    )
            return f"deleted {_count(deleted, 'entity', 'entities')} from {database.location}"
        finally:
            await database.close()

    click.echo(_run(work()))


async def _resolve(database: Database, tenant_id: TenantId, reference: str) -> EntityId:
    """The id `reference` names: an entity id, or the one entity of that name.

    A name is matched exactly, else as `normalize_name` matches it.
    """
    try:
        entity_id = EntityId(UUID(reference))
    except ValueError:
        pass
    else:
        if await database.graph.get_entity(entity_id, tenant_id) is None:
            raise CommandError(f"no entity {reference} in this tenant")
        return entity_id
    candidates = await database.graph.find_entities(tenant_id, name=reference)
    found = [entity for entity in candidates if entity.name == reference] or candidates
    if not found:
        raise CommandError(f"no entity named {reference!r} in this tenant")
    if len(found) > 1:
        ids = ", ".join(f"{entity.id} ({entity.entity_type})" for entity in found[:5])
        raise CommandError(f"{len(found)} entities are named {reference!r}: pass an id: {ids}")
    return found[0].id


# -- neighbors -------------------------------------------------------------------


@cli.command("neighbors")
@click.argument("entity", metavar="ENTITY")
@_db_option
@_tenant_option
@click.option(
    "--depth", type=click.IntRange(1, 10), default=1, show_default=True, help="How many hops."
)
@_json_option
def neighbors_command(entity: str, db: str, tenant: str, depth: int, as_json: bool) -> None:
    """List the entities within --depth hops of ENTITY (an id, or an exact name)."""
    tenant_id = tenant_id_for(tenant)

    async def work() -> tuple[Entity | None, list[Entity]]:
        database = await open_database(db, read_only=True)
        try:
            entity_id = await _resolve(database, tenant_id, entity)
            start = await database.graph.get_entity(entity_id, tenant_id)
            return start, await database.graph.neighbors(entity_id, tenant_id, depth=depth)
        finally:
            await database.close()

    start, found = _run(work())
    rows = [
        {"id": str(each.id), "name": each.name, "entity_type": each.entity_type} for each in found
    ]
    if as_json:
        print_json(
            {"entity": str(start.id) if start else entity, "depth": depth, "neighbors": rows}
        )
        return
    if not rows:
        click.echo("no neighbors")
        return
    print_table(
        ["name", "type", "id"], [[row["name"], row["entity_type"], row["id"]] for row in rows]
    )


# -- consolidate and undo-merge --------------------------------------------------


@cli.command("consolidate")
@_db_option
@_tenant_option
@click.option("--dry-run", is_flag=True, help="Report what would merge; write nothing.")
@_json_option
def consolidate_command(db: str, tenant: str, dry_run: bool, as_json: bool) -> None:
    """Merge the tenant's entities that are one real-world thing; every merge can be undone."""
    tenant_id = tenant_id_for(tenant)

    async def work() -> ConsolidationReport:
        database = await open_for_delete(db)
        try:
            async with event_log(db) as log:
                consolidator = Consolidator(
                    graph=database.graph, event_log=log, vectors=database.vectors
                )
                return await consolidator.consolidate(tenant_id, dry_run=dry_run)
        finally:
            await database.close()

    report = _run(work())
    merges: list[dict[str, Any]] = [
        {
            "event_id": None if merge.event_id is None else str(merge.event_id),
            "canonical_id": str(merge.canonical_id),
            "merged_ids": [str(each) for each in merge.merged_ids],
            "score": merge.score,
            "reason": merge.reason,
            "canonical_name": merge.canonical_name,
            "merged_names": list(merge.merged_names),
            "band": None if merge.band is None else merge.band.value,
        }
        for merge in report.merges
    ]
    if as_json:
        print_json({"dry_run": report.dry_run, "entities": report.entities, "merges": merges})
        return
    verb = "would merge" if report.dry_run else "merged"
    click.echo(f"{verb} {len(merges)} groups of {report.entities} entities")
    for merge in merges:
        event = merge["event_id"] or "-"
        names = ", ".join(merge["merged_names"])
        score = "" if merge["score"] is None else f" {merge['score']:.3f}"
        click.echo(f"{event}  {merge['canonical_name']} <- {names}  [{merge['band']}{score}]")
        click.echo(f"    {merge['reason']}")


@cli.command("undo-merge")
@click.argument("event_id", metavar="EVENT_ID")
@_db_option
@_tenant_option
def undo_merge_command(event_id: str, db: str, tenant: str) -> None:
    """Undo the merge recorded as EVENT_ID (as `consolidate` printed it), in any later process."""
    try:
        merge_event_id = UUID(event_id)
    except ValueError:
        raise CommandError(f"EVENT_ID must be a UUID, got {event_id!r}") from None
    tenant_id = tenant_id_for(tenant)

    async def work() -> object:
        database = await open_for_delete(db)
        try:
            async with event_log(db) as log:
                consolidator = Consolidator(
                    graph=database.graph, event_log=log, vectors=database.vectors
                )
                return await consolidator.undo(tenant_id, merge_event_id)
        finally:
            await database.close()

    undone = _run(work())
    click.echo(f"undid merge {merge_event_id} (event {undone})")


# -- migrate ---------------------------------------------------------------------


@cli.command("migrate")
@_db_option
def migrate_command(db: str) -> None:
    """Upgrade a database written by an older redstring to this one's schema, in place.

    Read commands and delete refuse an older file; import and build upgrade
    it too. Running it on a current file changes nothing.
    """
    migrated = _run(migrate_database(db))
    click.echo(f"{shown(db)}: {'migrated to' if migrated else 'already at'} the current schema")


# -- running it ------------------------------------------------------------------


def run(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line on `argv`; return the exit status."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    arguments = list(sys.argv[1:] if argv is None else argv)
    name = next((each for each in arguments if not each.startswith("-")), "")
    _interrupt.pressed = _interrupt.deferring = False
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, _interrupt.handle)
    except ValueError:  # not the main thread: Ctrl-C stays Python's default
        previous = None
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                cli.main(arguments, prog_name="redstring", standalone_mode=False)
            except click.UsageError as exc:
                exc.show(file=err)
                return 2
            except click.Abort:
                print(f"redstring {name}: interrupted", file=err)
                return INTERRUPTED
            except (Interrupted, KeyboardInterrupt):
                print(
                    f"redstring {name}: interrupted; nothing of the unfinished step was written",
                    file=err,
                )
                return INTERRUPTED
            except (CommandError, RedstringError, RowError, ValueError, OSError) as exc:
                print(f"redstring {name}: {_one_line(exc)}", file=err)
                return 1
        if _interrupt.pressed:
            print(f"redstring {name}: interrupted after the work was written", file=err)
            return INTERRUPTED
        return 0
    finally:
        _interrupt.deferring = False
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    notes = getattr(exc, "__notes__", [])
    if notes:
        text = f"{text} ({'; '.join(notes)})"
    return " ".join(text.split()) if "\n" in text else text
