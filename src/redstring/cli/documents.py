"""`redstring add` and `redstring ask`: documents into the database's chunk store, and back out.

Each action is an async function a test can call; `register` wires it into
click with the fewest lines in `app.py`. The chunks live beside the graph,
in the SQLite file or the Postgres schema `--db` names (`open_for_documents`),
and every add is recorded in its event log.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, Protocol

import click

from redstring.cli.ask import ASK_K, answer, print_answer
from redstring.cli.progress import Progress
from redstring.cli.sources import read_sources
from redstring.cli.stores import (
    CommandError,
    open_database,
    open_for_documents,
    shown,
    tenant_id_for,
)
from redstring.composition import delete_document, import_documents
from redstring.domain.ids import SourceId

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from redstring.cli.ask import ContextAnswer
    from redstring.composition import DocumentImportReport
    from redstring.domain.ids import TenantId
    from redstring.domain.source import SourceDocument


async def add_documents(
    location: str,
    documents: Sequence[SourceDocument],
    tenant_id: TenantId,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    link_lowercase: bool = False,
) -> DocumentImportReport:
    """Add `documents` to the database at `location`, linking the entities its graph holds.

    Every chunk is written in one transaction, every mention in another,
    after the events are appended to the database's log in one: a process
    killed midway leaves each whole or absent, and a replay of the log
    finishes what it recorded. With `link_lowercase`, names written in
    lowercase are linked where the text says them in lowercase too
    (`import_documents`, ADR 0121).
    """
    async with await open_for_documents(location) as database:
        assert database.chunks is not None  # opened for writing, it is always there
        return await import_documents(
            documents,
            tenant_id,
            chunks=database.chunks,
            graph=database.graph,
            event_log=database.events,
            on_progress=on_progress,
            link_lowercase=link_lowercase,
        )


async def ask_documents(
    location: str,
    question: str,
    tenant_id: TenantId,
    *,
    k: int = ASK_K,
    budget_chars: int | None = None,
) -> ContextAnswer:
    """The context for `question`: the `k` best passages, their entities and relationships.

    A database nothing was added to has no passages to give.

    Raises:
        CommandError: `location` is not an existing redstring database.
        ValueError: a bad question, `k` or `budget_chars`.
    """
    async with await open_database(location, read_only=True, chunks=True) as database:
        return await answer(
            question,
            tenant_id,
            chunks=database.chunks,
            graph=database.graph,
            k=k,
            budget_chars=budget_chars,
        )


async def delete_documents(location: str, source_ids: Sequence[str], tenant_id: TenantId) -> int:
    """Remove documents: their passages, and the mentions in them; how many passages.

    Each removal is recorded in the database's event log (a replay agrees).
    Every document is looked up first: one the tenant does not hold is
    refused before anything is deleted.

    Raises:
        CommandError: a document the tenant does not hold, or no such database.
    """
    wanted = [SourceId(each) for each in dict.fromkeys(source_ids)]
    async with await open_database(location, read_only=True, chunks=True) as reader:
        for source_id in wanted:
            if reader.chunks is None or not await reader.chunks.get_source_chunks(
                source_id, tenant_id
            ):
                raise CommandError(f"no document {source_id!r} in this tenant")
    removed = 0
    async with await open_for_documents(location) as database:
        assert database.chunks is not None  # opened for writing, it is always there
        for source_id in wanted:
            removed += await delete_document(
                source_id, tenant_id, chunks=database.chunks, event_log=database.events
            )
    return removed


class Interrupt(Protocol):
    """What `app.py` does with Ctrl-C: defer it during a write, act on it at a safe point."""

    deferring: bool

    def check(self) -> None:
        """Raise if Ctrl-C was pressed."""
        ...


def register(
    group: click.Group,
    *,
    db_option: Callable[..., Any],
    tenant_option: Callable[..., Any],
    json_option: Callable[..., Any],
    interrupt: Interrupt,
) -> None:
    """Add the `add` and `ask` commands to `group`, with `app.py`'s shared options."""

    @group.command("add")
    @click.argument("files", nargs=-1, required=True, metavar="FILE...")
    @db_option
    @tenant_option
    @click.option(
        "--link-lowercase",
        is_flag=True,
        help='Also link names written in lowercase ("machine learning") where the text '
        "says them in lowercase; slower: every distinct word is looked up.",
    )
    def add_command(files: Sequence[str], db: str, tenant: str, link_lowercase: bool) -> None:
        """Add text or Markdown FILEs, or JSON Lines of {"id", "text", "title"}, for `ask`.

        Every file is read and checked before the database is opened; - reads
        standard input. Names of the graph's entities are linked where the
        text says them, starting with a capital unless --link-lowercase. No
        model is called.
        """
        documents = read_sources(files, stdin=sys.stdin.buffer)
        tenant_id = tenant_id_for(tenant)
        interrupt.deferring = True
        with Progress("documents", "documents", sys.stderr) as progress:

            def report(done: int, total: int) -> None:
                progress(done, total)
                interrupt.check()

            added = asyncio.run(
                add_documents(
                    db,
                    documents,
                    tenant_id,
                    on_progress=report,
                    link_lowercase=link_lowercase,
                )
            )
        click.echo(
            f"added {added.documents:,} documents ({added.chunks:,} passages) to {shown(db)}, "
            f"{added.mentions:,} mentions of {added.linked_entities:,} entities"
            + (f", {added.replaced:,} replaced" if added.replaced else "")
        )

    @group.command("ask")
    @click.argument("question")
    @db_option
    @tenant_option
    @click.option(
        "-k",
        "k",
        type=click.IntRange(min=1, max=100),
        default=ASK_K,
        show_default=True,
        help="How many passages to print.",
    )
    @click.option(
        "--budget-chars",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Keep the passages' texts within N characters, best first, cut only at a "
        "sentence end.",
    )
    @json_option
    def ask_command(
        question: str, db: str, tenant: str, k: int, budget_chars: int | None, as_json: bool
    ) -> None:
        """The context for QUESTION: the best passages, the entities and relationships they name.

        Each passage shows its fused score and each channel's (BM25, the
        graph), its document and its offsets; --json keeps every id.
        """
        found = asyncio.run(
            ask_documents(db, question, tenant_id_for(tenant), k=k, budget_chars=budget_chars)
        )
        print_answer(found, as_json=as_json)
