"""The name normalizations every comparison in redstring goes through.

`normalize_name` is the identity form: ids are derived from it, so it never
changes. `fold_name` is the matching form that keys, the name index and
lexical scoring share; see ADR 0015. `latin_name` is that form written in
Latin letters, the second form the name index and lexical scoring compare,
so a name in one script meets its transliteration in another (ADR 0041).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from anyascii import anyascii

#: `fold_name` of ASCII, one byte at a time: capitals to small letters (what
#: casefolding does in ASCII), every other byte that is not a letter or digit
#: (punctuation, symbols, whitespace, control characters) to a space. A byte
#: table, because `bytes.translate` is several times faster than `str.translate`.
_ASCII_FOLD = bytes(
    code + 32 if 65 <= code <= 90 else code if code < 128 and chr(code).isalnum() else 32
    for code in range(256)
)
#: Unicode categories `fold_name` reads as a word break: punctuation,
#: symbols, separators and control characters.
_BREAK_CATEGORIES = frozenset("PSZC")


def normalize_name(name: str) -> str:
    """Casefold, strip, and collapse each whitespace run to one space.

    Total over strings: an all-whitespace name normalizes to `""`.

    Raises:
        ValueError: `name` is not a string.
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__} {name!r:.80}")
    return " ".join(name.casefold().split())


@lru_cache(maxsize=1 << 16)
def fold_name(name: str) -> str:
    """The form two spellings of one name share: casefolded, unaccented, unpunctuated.

    `normalize_name`, then NFKD with combining marks dropped ("Müñoz" folds
    to "munoz", the ligature "ﬁ" to "fi"), then every punctuation mark,
    symbol or control character read as a space ("Smith, John" folds to
    "smith john", "O'Brien" to "o brien"), then whitespace collapsed. Letters
    and digits of every script are kept. Total and deterministic; a name of
    punctuation only folds to `""`. Results are cached (the function is pure).
    """
    if name.isascii():
        return b" ".join(name.encode("ascii").translate(_ASCII_FOLD).split()).decode("ascii")
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    kept = []
    for character in decomposed:
        if unicodedata.combining(character):
            continue
        if unicodedata.category(character)[0] in _BREAK_CATEGORIES:
            kept.append(" ")
        else:
            kept.append(character)
    # NFKD can produce capitals (for example from some compatibility forms).
    return " ".join("".join(kept).casefold().split())


@lru_cache(maxsize=1 << 16)
def latin_name(name: str) -> str:
    """`name` romanized into ASCII, then folded as `fold_name` folds.

    When `fold_name` keeps characters outside ASCII, `name` is romanized
    (`anyascii`) before folding: "Москва" reads as "moskva", "Αθήνα" as
    "athina", "Øresund" as "oresund", "北京" as "beijing". A name that folds
    to ASCII is returned as `fold_name` gives it, so this is `fold_name` for
    every Latin-script name. Transliteration loses distinctions: two names
    written differently in one script may share a form (Chinese homophones
    do), so the form is a second way to match, never an identity. Total and
    deterministic; results are cached.
    """
    folded = fold_name(name)
    if folded.isascii():
        return folded
    # Romanized before folding drops combining marks: kana voicing marks are
    # combining after NFKD, and "バ" must read "ba", not "ha".
    return fold_name(anyascii(unicodedata.normalize("NFC", name)))
