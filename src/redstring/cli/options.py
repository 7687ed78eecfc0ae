"""The options every command shares, and how a command runs its async work.

A command module (`app`, or a module of its own) decorates its click
function with these, so every `--db` and `--tenant` reads the same.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import click

from redstring.cli.stores import DEFAULT_TENANT, EMBEDDINGS

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine


def run_async[T](work: Coroutine[Any, Any, T]) -> T:
    """Run a command's async action to its end."""
    return asyncio.run(work)


def db_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--db FILE|URL`, required."""
    return click.option(
        "--db",
        required=True,
        metavar="FILE|URL",
        help="The SQLite database file that holds the graph and its vectors, or a "
        "postgresql:// URL (the postgres extra) whose redstring schema holds them.",
    )(function)


def tenant_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--tenant`, `default` when omitted."""
    return click.option(
        "--tenant",
        default=DEFAULT_TENANT,
        show_default=True,
        help="A tenant UUID, or any name (mapped to a fixed UUID).",
    )(function)


def json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--json`, passed as `as_json`."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(
        function
    )


def embeddings_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--embeddings local|hash|none`."""
    return click.option(
        "--embeddings",
        type=click.Choice(EMBEDDINGS),
        default="local",
        show_default=True,
        help="How names are embedded: local (multilingual-e5-small), hash "
        "(meaningless, fast, for trying things out) or none (lexical search only).",
    )(function)


def depth_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--depth`, the hops of neighbourhood to walk: 1 to 10, 1 when omitted."""
    return click.option(
        "--depth", type=click.IntRange(1, 10), default=1, show_default=True, help="How many hops."
    )(function)
