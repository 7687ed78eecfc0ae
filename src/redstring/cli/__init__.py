"""The `redstring` command line: wiring the library itself must not do.

It chooses adapters (SQLite stores, the local embedding model, an
OpenAI-compatible endpoint) from its arguments, which is why it sits above
`composition`. See `redstring.cli.main`.
"""

from redstring.cli.main import main

__all__ = ["main"]
