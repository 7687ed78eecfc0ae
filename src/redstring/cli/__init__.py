"""The `redstring` command line: wiring the library itself must not do.

It chooses adapters (SQLite stores, the local embedding model, an
OpenAI-compatible endpoint) from its arguments, which is why it sits above
`composition`. It needs the `cli` extra (click and rich); without it,
`redstring` prints the one line that installs it. See `redstring.cli.app`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

#: The packages of the `cli` extra.
CLI_PACKAGES = frozenset({"click", "rich"})


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the command line on `argv` (default: `sys.argv[1:]`); return the exit status.

    `--version` alone answers without the `cli` extra; anything else needs it.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:
        from redstring import __version__

        print(f"redstring {__version__}", file=out if out is not None else sys.stdout)
        return 0
    try:
        from redstring.cli.app import run
    except ModuleNotFoundError as exc:
        if exc.name not in CLI_PACKAGES:
            raise
        print(
            f"redstring: the command line needs the cli extra ({exc.name} is missing): "
            "pip install 'redstring[cli]'",
            file=err if err is not None else sys.stderr,
        )
        return 1
    return run(arguments, out=out, err=err)


__all__ = ["main"]
