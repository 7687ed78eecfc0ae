"""String similarity between two names."""

from __future__ import annotations

import jellyfish

from redstring.domain.normalization import normalize_name


def string_similarity(left: str, right: str) -> float:
    """Jaro-Winkler similarity of the two normalized names, on `0..1`.

    `1.0` means equal after normalization. Two names that both normalize to
    nothing are equal (`1.0`); one empty side against a non-empty one is `0.0`.

    Raises:
        ValueError: `left` or `right` is not a string.
    """
    for argument, value in (("left", left), ("right", right)):
        if not isinstance(value, str):
            raise ValueError(
                f"{argument} must be a string, got {type(value).__name__} {value!r:.80}"
            )
    a, b = normalize_name(left), normalize_name(right)
    if a == b:
        return 1.0
    return float(jellyfish.jaro_winkler_similarity(a, b))
