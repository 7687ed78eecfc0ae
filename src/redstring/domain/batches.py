"""Checking what a caller hands a store before anything is written."""

from __future__ import annotations

from collections.abc import Sequence


def require_all[T](items: object, kind: type[T], *, name: str) -> Sequence[T]:
    """`items` itself, once it is a sequence of nothing but `kind`.

    A bare string is refused rather than read as a sequence of characters.

    Raises:
        ValueError: `items` is not a sequence, or one item is not a `kind`;
            the message names the first bad index.
    """
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise ValueError(f"{name} must be a sequence of {kind.__name__}, got {items!r}")
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            raise ValueError(
                f"{name}[{index}] is not {_article(kind.__name__)} {kind.__name__}: {item!r}"
            )
    return items


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"
