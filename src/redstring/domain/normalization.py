"""The one name normalization every comparison in redstring goes through."""

from __future__ import annotations


def normalize_name(name: str) -> str:
    """Casefold, strip, and collapse each whitespace run to one space.

    Total over strings: an all-whitespace name normalizes to `""`.

    Raises:
        ValueError: `name` is not a string.
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__} {name!r:.80}")
    return " ".join(name.casefold().split())
