"""Finding where names occur in a text: whole words, compared in their folded form.

A text is read as words (runs of Unicode letters, digits and marks), each
folded by `fold_name`; a name matches the run of words whose folded forms,
joined by spaces, are its own folded form. Matches are leftmost-longest and
never overlap, so "New York City" is one match, not also "York". See
ADR 0073.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from redstring.domain.normalization import fold_name

if TYPE_CHECKING:
    from collections.abc import Collection, Container, Iterable, Mapping, Sequence

#: The longest name, in words, that is looked for in a text.
MAX_NAME_WORDS: Final = 8
#: A word of a text: letters, digits and combining marks (`\w` less the underscore).
_WORD: Final = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class TextWord:
    """One folded word of a text, and where it is: `text[start:end]`."""

    folded: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class NameSpan:
    """A name found in a text: `text[start:end]` folds to `folded`."""

    folded: str
    start: int
    end: int


def text_words(text: str) -> list[TextWord]:
    """The words of `text` in order, each folded; a word that folds to two keeps its span."""
    words: list[TextWord] = []
    for match in _WORD.finditer(text):
        start, end = match.span()
        words.extend(TextWord(part, start, end) for part in fold_name(match.group()).split())
    return words


def name_key(name: str) -> str:
    """The form a name is looked for in: `fold_name(name)`, `""` for no words."""
    return fold_name(name)


def starts_proper(word: str) -> bool:
    """Whether a name may start at `word`: not written in lowercase, and not digits alone.

    A capital ("Paris"), a caseless script ("東京") or a digit followed by
    letters ("3M") qualifies; "paris" and "1868" do not.
    """
    return not word[:1].islower() and not word.isdigit()


def written_lowercase(name: str) -> bool:
    """Whether `name` is written in lowercase: its first character is a lowercase letter.

    "database administrator" and "iPhone" are; "Paris", "東京" and "3M" are
    not. Such a name is a common noun or styled so, and may be said in
    lowercase in running text (ADR 0121).
    """
    return name[:1].islower()


def find_names(
    text: str,
    names: Collection[str],
    *,
    words: Sequence[TextWord] | None = None,
    proper_only: bool = False,
) -> list[NameSpan]:
    """Where the folded `names` occur in `text`, leftmost-longest, never overlapping.

    `names` holds folded forms (`name_key`); a name longer than
    `MAX_NAME_WORDS` words is never found. With `proper_only`, a match must
    start at a word `starts_proper` accepts (a capital or a caseless script,
    not digits alone), so "of" in prose never links a town named "Of".
    `words` may pass `text_words(text)` already computed.
    """
    reach: dict[str, int] = {}
    for name in names:
        _note_reach(reach, name)
    return _find(text, names, reach, words, proper_only=proper_only, lowercase=())


def _note_reach(reach: dict[str, int], name: str) -> None:
    parts = name.split()
    if parts and len(parts) <= MAX_NAME_WORDS:
        reach[parts[0]] = max(reach.get(parts[0], 0), len(parts))


def _find(
    text: str,
    names: Container[str],
    reach: Mapping[str, int],
    words: Sequence[TextWord] | None,
    *,
    proper_only: bool,
    lowercase: Collection[str],
) -> list[NameSpan]:
    """`find_names`, with the longest name in words per first word given as `reach`.

    With `proper_only`, a match may still start at a word `starts_proper`
    refuses when its name is one of `lowercase` (names written in lowercase).
    """
    found = words if words is not None else text_words(text)
    spans: list[NameSpan] = []
    index, count = 0, len(found)
    while index < count:
        word = found[index]
        longest = reach.get(word.folded, 0)
        proper = not proper_only or starts_proper(text[word.start : word.end])
        if longest and (proper or lowercase):
            for length in range(min(longest, count - index), 0, -1):
                key = " ".join(each.folded for each in found[index : index + length])
                if key in names and (proper or key in lowercase):
                    spans.append(NameSpan(key, word.start, found[index + length - 1].end))
                    index += length
                    break
            else:
                index += 1
        else:
            index += 1
    return spans


class KnownNames[T]:
    """Folded names, each with the items it stands for, ready to be found in many texts.

    `find_names` over a growing set without preparing it again per text.
    A name added as written in lowercase is found by `find` with
    `proper_only` at a lowercase word too.
    """

    def __init__(self) -> None:
        self._items: dict[str, list[T]] = {}
        self._reach: dict[str, int] = {}
        self._lowercase: dict[str, list[T]] = {}

    def add(self, key: str, item: T, *, lowercase: bool = False) -> None:
        """Let the folded name `key` stand for `item` too (once); a blank key is ignored.

        `lowercase` says `item`'s name is written in lowercase
        (`written_lowercase`): `find` with `proper_only` then finds `key` at
        a lowercase word too, and `items_of(key, lowercase=True)` lists `item`.
        """
        if not key:
            return
        for items in (self._items, self._lowercase) if lowercase else (self._items,):
            held = items.setdefault(key, [])
            if item not in held:
                held.append(item)
        _note_reach(self._reach, key)

    def items_of(self, key: str, *, lowercase: bool = False) -> list[T]:
        """What the folded name `key` stands for, in the order added; `[]` if nothing.

        With `lowercase`, only the items added with their name written in
        lowercase: those a name said in lowercase stands for ("apple" the
        fruit, not "Apple" the company).
        """
        return list((self._lowercase if lowercase else self._items).get(key, ()))

    def find(
        self, text: str, *, words: Sequence[TextWord] | None = None, proper_only: bool = False
    ) -> list[NameSpan]:
        """`find_names(text, <these names>, ...)`, the names written in lowercase found as such."""
        return _find(
            text,
            self._items,
            self._reach,
            words,
            proper_only=proper_only,
            lowercase=self._lowercase,
        )


def first_words(texts: Iterable[str], *, proper_only: bool = False) -> set[str]:
    """The distinct folded words of `texts` a name could start at (see `find_names`)."""
    starts: set[str] = set()
    for text in texts:
        for word in text_words(text):
            if not proper_only or starts_proper(text[word.start : word.end]):
                starts.add(word.folded)
    return starts


def names_by_key[T](named: Iterable[tuple[str, T]]) -> dict[str, list[T]]:
    """`(name, item)` pairs grouped by `name_key(name)`, each item once per key, in order."""
    grouped: dict[str, list[T]] = {}
    for name, item in named:
        key = name_key(name)
        if key:
            held = grouped.setdefault(key, [])
            if item not in held:
                held.append(item)
    return grouped
