"""The one name normalization every comparison in redstring goes through."""

from __future__ import annotations


def normalize_name(name: str) -> str:
    """Casefold, strip, and collapse each whitespace run to one space.

    Total: never raises, and an all-whitespace name normalizes to `""`.
    """
    return " ".join(name.casefold().split())
