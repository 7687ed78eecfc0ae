"""Blocking keys as a function of what they read: a name and an entity type.

The core of `redstring.domain.blocking`, which holds the reasoning, the
strategies and the entity-level functions. It reads strings only, so
`Entity` can compute its default keys without importing `blocking`, and
`blocking` can name `Entity` without an import cycle.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

import jellyfish

from redstring.domain.normalization import normalize_name

#: How many characters of the normalized name the prefix key keeps.
PREFIX_LENGTH: Final = 5

PREFIX: Final = "p:"
SOUNDEX: Final = "s:"
TYPE: Final = "t:"

#: Whatever is not an ASCII letter: what the soundex key drops before coding.
_NOT_ASCII_LETTERS: Final = re.compile("[^A-Za-z]+")


def soundex_of_normalized(normalized: str) -> str | None:
    """The soundex key of a name whose `normalize_name` is `normalized`, or `None`."""
    # NFKD first, so an accented letter becomes base + combining mark and the
    # base survives the ASCII filter. Filtering without it drops the letter.
    letters = _NOT_ASCII_LETTERS.sub("", unicodedata.normalize("NFKD", normalized))
    if not letters:
        return None
    return SOUNDEX + jellyfish.soundex(letters)


def keys_of(
    name: str,
    entity_type: str,
    *,
    prefix: bool = True,
    soundex: bool = True,
    type_key: bool = True,
) -> frozenset[str]:
    """The blocking keys of `name` and `entity_type`, for the kinds asked for.

    The name is normalized once for the prefix and soundex keys alike.
    """
    normalized = normalize_name(name)
    keys: set[str] = set()
    if prefix:
        keys.add(PREFIX + normalized[:PREFIX_LENGTH])
    if soundex:
        code = soundex_of_normalized(normalized)
        if code is not None:
            keys.add(code)
    if type_key:
        keys.add(TYPE + normalize_name(entity_type))
    return frozenset(keys)
