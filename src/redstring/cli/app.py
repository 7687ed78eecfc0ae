"""The `redstring` command, built with click: thin wiring, one function per subcommand.

Everything lands in one SQLite file (`--db`), per tenant (`--tenant`, a UUID
or any name, which is mapped to a UUID; `default` when omitted). Read
commands (`search`, `stats`, `export`, `neighbors`) open the file
read-only and take `--json`. Exit status: 0 done, 1 the work failed (one
line on standard error), 2 a usage error, 130 interrupted. See ADR 0022.

Each command here parses its arguments, opens the stores, calls its
action in `redstring.cli.actions` (async, returning data) and hands the
data to `redstring.cli.render`. A command defined in a module of its own
is added to `cli` with `cli.add_command` at the end of this module.
"""

from __future__ import annotations

import signal
import sys
from contextlib import AsyncExitStack, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from redstring import __version__
from redstring.cli import actions, render
from redstring.cli.documents import delete_documents
from redstring.cli.documents import register as register_documents
from redstring.cli.export import WRITERS, Scope
from redstring.cli.interrupt import INTERRUPTED, Interrupted, interrupt
from redstring.cli.options import (
    db_option,
    depth_option,
    embeddings_option,
    json_option,
    run_async,
    tenant_option,
)
from redstring.cli.progress import Progress
from redstring.cli.rows import FORMATS, RowError
from redstring.cli.stores import (
    CommandError,
    embedding_provider,
    event_log,
    migrate_database,
    open_chunks,
    open_database,
    open_for_delete,
    search_provider,
    shown,
    tenant_id_for,
)
from redstring.cli.view import neighbourhood_page
from redstring.composition.entities import delete_tenant
from redstring.consolidation.forking import MAX_WORKERS
from redstring.domain.exceptions import RedstringError
from redstring.domain.retrieval import RetrievalMode

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.cli.actions import Match, Neighbor, Stats
    from redstring.composition import ConsolidationReport, GraphBuildReport, ImportReport
    from redstring.domain.entity import Entity

#: Documents `build` sends to the model at once by default.
BUILD_CONCURRENCY = 4


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(
    __version__, "--version", prog_name="redstring", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Build a multi-tenant entity graph in one SQLite file, and search it."""


def _checked(progress: Callable[[int, int], None]) -> Callable[[int, int], None]:
    """`progress`, then a stop at this safe point if Ctrl-C was pressed."""

    def report(done: int, total: int) -> None:
        progress(done, total)
        interrupt.check()

    return report


def _say(note: str) -> None:
    print(note, file=sys.stderr)


# -- import ----------------------------------------------------------------------


@cli.command("import")
@click.argument("file", metavar="FILE")
@db_option
@tenant_option
@embeddings_option
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
    rows = actions.read_input(file, tenant_id_for(tenant), file_format, id_column)
    provider = embedding_provider(embeddings)
    interrupt.deferring = True

    async def work() -> ImportReport:
        async with await open_database(db, read_only=False, embeddings=provider) as database:
            with Progress("embedding", "names", sys.stderr) as progress:
                return await actions.import_rows(
                    rows,
                    graph=database.graph,
                    embeddings=provider,
                    vectors=database.vectors,
                    events=database.events,
                    on_progress=_checked(progress),
                )

    result = run_async(work())
    click.echo(render.import_summary(result, file=file, location=shown(db), embeddings=provider))


# -- build -----------------------------------------------------------------------


@cli.command("build")
@click.argument("documents", nargs=-1, required=True, metavar="DOCUMENT...")
@db_option
@tenant_option
@click.option("--llm-url", required=True, help="The OpenAI-compatible API root, e.g. .../v1.")
@click.option("--model", required=True, help="The chat model's name.")
@click.option("--api-key", default=None, help="Sent as a bearer token when given.")
@embeddings_option
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=BUILD_CONCURRENCY,
    show_default=True,
    help="How many documents are sent to the model at once.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds each request may take, answer included, before it is retried.",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0, max=100),  # MAX_RETRIES: the adapter imports late
    default=3,
    show_default=True,
    help="How many times a timed-out, refused, 429 or 5xx request is sent again.",
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
    timeout: float,
    retries: int,
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
    sources = actions.read_documents(documents)
    provider = embedding_provider(embeddings)
    interrupt.deferring = True

    async def work() -> list[GraphBuildReport]:
        async with (
            await open_database(db, read_only=False, embeddings=provider) as database,
            OpenAiCompatibleLlmProvider(
                base_url=llm_url,
                model=model,
                api_key=api_key,
                timeout=timeout,
                max_retries=retries,
            ) as llm,
        ):
            with Progress("documents", "documents", sys.stderr) as progress:
                return await actions.build_documents(
                    sources,
                    tenant_id_for(tenant),
                    llm=llm,
                    graph=database.graph,
                    embeddings=provider,
                    vectors=database.vectors,
                    events=database.events,
                    concurrency=concurrency,
                    on_progress=_checked(progress),
                )

    for line in render.build_lines(sources, run_async(work())):
        click.echo(line)


# -- search ----------------------------------------------------------------------


@cli.command("search")
@click.argument("query")
@db_option
@tenant_option
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
@json_option
def search_command(
    query: str, db: str, tenant: str, k: int, mode: str, types: Sequence[str], as_json: bool
) -> None:
    """Rank the tenant's entities for a free-text QUERY."""
    tenant_id = tenant_id_for(tenant)

    async def work() -> list[Match]:
        async with await open_database(db, read_only=True) as database:
            return await actions.search(
                query,
                tenant_id,
                graph=database.graph,
                embeddings=await search_provider(database),
                vectors=database.vectors,
                k=k,
                mode=RetrievalMode(mode),
                types=types,
                tenant=tenant,
                location=database.location,
                say=_say,
            )

    render.search_results(run_async(work()), query=query, tenant=tenant, as_json=as_json)


# -- stats -----------------------------------------------------------------------


@cli.command("stats")
@db_option
@json_option
def stats_command(db: str, as_json: bool) -> None:
    """Count what the database holds: entities, relationships and vectors per tenant."""

    async def work() -> Stats:
        async with await open_database(db, read_only=True) as database:
            return await actions.stats(database, location=shown(db))

    render.stats_summary(run_async(work()), as_json=as_json)


# -- export ----------------------------------------------------------------------


@cli.command("export")
@db_option
@tenant_option
@click.option(
    "--format",
    "export_format",
    type=click.Choice(tuple(WRITERS)),
    default="jsonl",
    show_default=True,
    help="jsonl (what import reads back) or graphml (networkx, Gephi, yEd).",
)
@click.option(
    "--around",
    default=None,
    metavar="ENTITY",
    help="Only this entity (an id, or an exact name) and its neighbourhood.",
)
@click.option(
    "--depth",
    type=click.IntRange(1, 10),
    default=None,
    help="With --around: how many hops of neighbourhood  [default: 1]",
)
def export_command(
    db: str, tenant: str, export_format: str, around: str | None, depth: int | None
) -> None:
    """Write the tenant's entities and relationships to stdout, as they are read.

    JSON Lines by default: `redstring import` reads the output back with
    every field and id kept, into any tenant; it ends with one mention line
    per passage naming an exported entity or relationship (which import
    skips). GraphML gives each node its name, type and properties, and each
    edge its relationship type.
    """
    if depth is not None and around is None:
        raise click.UsageError("--depth needs --around ENTITY")
    tenant_id = tenant_id_for(tenant)
    write = WRITERS[export_format]

    async def work() -> None:
        async with await open_database(db, read_only=True, chunks=True) as database:
            start = None
            if around is not None:
                start = await actions.resolve(database.graph, tenant_id, around)
            scope = Scope(database.graph, tenant_id, start, depth or 1, database.chunks)
            await write(scope, sys.stdout)

    run_async(work())


# -- delete ----------------------------------------------------------------------


@cli.command("delete")
@click.argument("entities", nargs=-1, metavar="ENTITY...")
@db_option
@tenant_option
@click.option(
    "--entire-tenant",
    is_flag=True,
    help="Delete every entity, relationship, vector and passage of the tenant.",
)
@click.option(
    "--document",
    "documents",
    multiple=True,
    metavar="ID",
    help="Delete this document's passages and their mentions instead (repeatable).",
)
def delete_command(
    entities: Sequence[str], db: str, tenant: str, entire_tenant: bool, documents: Sequence[str]
) -> None:
    """Delete ENTITYs (ids, or exact names) from both channels, documents, or an entire tenant."""
    if bool(entities) + entire_tenant + bool(documents) != 1:
        raise click.UsageError(
            "name the entities to delete, or pass --document ID or --entire-tenant: one of them"
        )
    tenant_id = tenant_id_for(tenant)
    if documents:
        removed = run_async(delete_documents(db, documents, tenant_id))
        click.echo(
            f"deleted {render.count(len(set(documents)), 'document', 'documents')} "
            f"({render.count(removed, 'passage', 'passages')}) from {shown(db)}"
        )
        return

    async def work() -> str:
        async with await open_database(db, read_only=True, chunks=True) as reader:
            ids = await actions.resolve_all(reader.graph, tenant_id, entities)
            passages = reader.chunks is not None
        async with await open_for_delete(db) as database:
            if entire_tenant:
                async with event_log(db) as log, AsyncExitStack() as stack:
                    chunks = (
                        await stack.enter_async_context(await open_chunks(db, read_only=False))
                        if passages
                        else None
                    )
                    deletion = await delete_tenant(
                        tenant_id,
                        graph=database.graph,
                        vectors=database.vectors,
                        chunks=chunks,
                        event_log=log,
                    )
                said = (
                    f"deleted tenant {tenant!r}: "
                    f"{render.count(deletion.entities, 'entity', 'entities')}, "
                    f"{render.count(deletion.vectors, 'vector', 'vectors')}"
                )
                if passages:
                    said += f", {render.count(deletion.passages, 'passage', 'passages')}"
                return said
            async with event_log(db) as log:
                deleted = await actions.delete_entities(
                    ids, tenant_id, graph=database.graph, vectors=database.vectors, events=log
                )
            return f"deleted {render.count(deleted, 'entity', 'entities')} from {database.location}"

    click.echo(run_async(work()))


# -- neighbors -------------------------------------------------------------------


@cli.command("neighbors")
@click.argument("entity", metavar="ENTITY")
@db_option
@tenant_option
@depth_option
@json_option
def neighbors_command(entity: str, db: str, tenant: str, depth: int, as_json: bool) -> None:
    """List the entities within --depth hops of ENTITY (an id, or an exact name)."""
    tenant_id = tenant_id_for(tenant)

    async def work() -> tuple[Entity, list[Neighbor]]:
        async with await open_database(db, read_only=True) as database:
            return await actions.neighbors(database.graph, tenant_id, entity, depth=depth)

    start, rows = run_async(work())
    render.neighbor_list(start, rows, depth=depth, as_json=as_json)


# -- consolidate and undo-merge --------------------------------------------------


@cli.command("consolidate")
@db_option
@tenant_option
@click.option("--dry-run", is_flag=True, help="Report what would merge; write nothing.")
@click.option(
    "--workers",
    type=click.IntRange(1, MAX_WORKERS),
    default=1,
    show_default=True,
    help="Processes that score a large round's pairs (forked; the same merges as one).",
)
@json_option
def consolidate_command(db: str, tenant: str, dry_run: bool, workers: int, as_json: bool) -> None:
    """Merge the tenant's entities that are one real-world thing; every merge can be undone."""
    tenant_id = tenant_id_for(tenant)

    async def work() -> ConsolidationReport:
        async with await open_for_delete(db) as database, event_log(db) as log:
            return await actions.consolidate(
                tenant_id,
                graph=database.graph,
                events=log,
                vectors=database.vectors,
                dry_run=dry_run,
                workers=workers,
            )

    render.consolidation(run_async(work()), as_json=as_json)


@cli.command("undo-merge")
@click.argument("event_id", metavar="EVENT_ID")
@db_option
@tenant_option
def undo_merge_command(event_id: str, db: str, tenant: str) -> None:
    """Undo the merge recorded as EVENT_ID (as `consolidate` printed it), in any later process."""
    merge_event_id = actions.merge_event_id_for(event_id)
    tenant_id = tenant_id_for(tenant)

    async def work() -> object:
        async with await open_for_delete(db) as database, event_log(db) as log:
            return await actions.undo_merge(
                merge_event_id,
                tenant_id,
                graph=database.graph,
                events=log,
                vectors=database.vectors,
            )

    undone = run_async(work())
    click.echo(f"undid merge {merge_event_id} (event {undone})")


# -- migrate ---------------------------------------------------------------------


@cli.command("migrate")
@db_option
def migrate_command(db: str) -> None:
    """Upgrade a database written by an older redstring to this one's schema, in place.

    Read commands and delete refuse an older file; import and build upgrade
    it too. Running it on a current file changes nothing.
    """
    migrated = run_async(migrate_database(db))
    click.echo(f"{shown(db)}: {'migrated to' if migrated else 'already at'} the current schema")


# -- view ------------------------------------------------------------------------


@cli.command("view")
@click.argument("entity", metavar="ENTITY")
@db_option
@tenant_option
@depth_option
@click.option(
    "--out",
    "out_path",
    required=True,
    metavar="FILE",
    help="The HTML file to write (one self-contained page that opens offline).",
)
def view_command(entity: str, db: str, tenant: str, depth: int, out_path: str) -> None:
    """Draw ENTITY's neighbourhood (an id, or an exact name) as one offline HTML page."""
    tenant_id = tenant_id_for(tenant)
    target = Path(out_path)
    if not target.parent.is_dir():
        raise CommandError(f"no such directory: {target.parent}")

    async def work() -> str:
        async with await open_database(db, read_only=True, chunks=True) as database:
            return await neighbourhood_page(
                database.graph, tenant_id, entity, depth=depth, chunks=database.chunks
            )

    target.write_text(run_async(work()), encoding="utf-8")
    click.echo(f"wrote {target}")


# -- mcp -------------------------------------------------------------------------


@cli.command("mcp")
@db_option
@tenant_option
@click.option(
    "--allow-writes",
    is_flag=True,
    help="Offer the tools that add documents, entities and relationships (read-only without it).",
)
@embeddings_option
def mcp_command(db: str, tenant: str, allow_writes: bool, embeddings: str) -> None:
    """Serve the graph and its passages to an agent as MCP tools, over standard input and output.

    Tools: retrieve_context, search_entities, get_entity, list_neighbors;
    with --allow-writes, add_documents, add_entities and add_relationship
    too. --embeddings matters only with --allow-writes (reading uses the
    model the vectors were made with). Needs the mcp extra.
    """
    try:
        from redstring.cli.mcp_server import serve
    except ImportError as exc:
        raise CommandError(f"{exc}: pip install 'redstring[mcp]'") from exc
    provider = embedding_provider(embeddings) if allow_writes else None
    run_async(serve(db, tenant_id_for(tenant), allow_writes=allow_writes, embeddings=provider))


register_documents(
    cli,
    db_option=db_option,
    tenant_option=tenant_option,
    json_option=json_option,
    interrupt=interrupt,
)


# -- running it ------------------------------------------------------------------


def run(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line on `argv`; return the exit status."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    arguments = list(sys.argv[1:] if argv is None else argv)
    name = next((each for each in arguments if not each.startswith("-")), "")
    interrupt.pressed = interrupt.deferring = False
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, interrupt.handle)
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
        if interrupt.pressed:
            print(f"redstring {name}: interrupted after the work was written", file=err)
            return INTERRUPTED
        return 0
    finally:
        interrupt.deferring = False
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    notes = getattr(exc, "__notes__", [])
    if notes:
        text = f"{text} ({'; '.join(notes)})"
    return " ".join(text.split()) if "\n" in text else text
