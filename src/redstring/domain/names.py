"""The name index's units: what a query must share with an entity to be a candidate.

A name's units are the character trigrams of each word of its folded form,
padded the way PostgreSQL's `pg_trgm` pads them (two spaces before a word,
one after), so "Ada" has the units `"  a"`, `" ad"`, `"ada"` and `"da "`;
a name outside ASCII also has the units of its `latin_name`, so "Москва"
and "Moskva" share units (ADR 0041).
An entity's units are those of its name, its `normalized_name` and each
string in a list under `properties["aliases"]`, together. A candidate is an
entity sharing at least `MIN_SHARED_UNITS` distinct units with the query,
ranked by how many it shares. ADR 0014 records why trigrams, and what they
measured against per-token keys.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Final

from redstring.domain.normalization import fold_name, latin_name, normalize_name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from redstring.domain.entity import Entity

#: How many candidates `find_name_candidates` returns at most, by default.
NAME_CANDIDATE_LIMIT: Final = 500
#: How many distinct units an entity must share with a query to be a candidate.
#: Every word has at least two distinct units (its first and its last), so a
#: query sharing one whole word with a name always reaches it.
MIN_SHARED_UNITS: Final = 2
#: How many characters of a name, alias or query are indexed and scored. The
#: rest is ignored, so a 1 MB query costs what a 256-character one does.
MAX_NAME_CHARS: Final = 256
#: The property whose list of strings is indexed and scored like the name.
ALIASES_PROPERTY: Final = "aliases"


def entity_names(entity: Entity) -> Iterator[str]:
    """The name, the `normalized_name`, then each string alias, in that order.

    Aliases are the string values of a list under `properties["aliases"]`;
    anything else there (a bare string, a number, a nested list) is not an
    alias.
    """
    yield entity.name
    yield entity.normalized_name
    yield from string_aliases(entity)


def string_aliases(entity: Entity) -> Iterator[str]:
    """The string values of a list under `properties["aliases"]`, in order."""
    aliases = entity.properties.get(ALIASES_PROPERTY)
    if isinstance(aliases, list):
        for alias in aliases:
            if isinstance(alias, str):
                yield alias


@lru_cache(maxsize=1 << 16)
def word_units(word: str) -> tuple[str, ...]:
    """The padded trigrams of one folded word, in order, repeats kept.

    Names share words, so this is cached.
    """
    padded = f"  {word} "
    return tuple(padded[start : start + 3] for start in range(len(padded) - 2))


#: `fold_name` without its cache, for `entity_name_words`: a bulk load folds
#: each name once, so caching would only fill the cache and evict from it.
_fold_once: Final = fold_name.__wrapped__


def _add_words(words: list[str], text: str, fold: Callable[[str], str]) -> None:
    """Append the words whose units are `name_units(text)`, repeats kept."""
    head = text[:MAX_NAME_CHARS]
    folded = fold(head)
    words += folded.split()
    if not folded.isascii():
        words += latin_name(head).split()


def name_units(text: str) -> set[str]:
    """The distinct units of the first `MAX_NAME_CHARS` characters of `text`.

    The units of its `fold_name` form and, when that is not ASCII, of its
    `latin_name` form too.
    """
    words: list[str] = []
    _add_words(words, text, fold_name)
    return set(chain.from_iterable(map(word_units, words)))


def _entity_words(entity: Entity, name_key: str | None, fold: Callable[[str], str]) -> list[str]:
    name = entity.name
    words: list[str] = []
    _add_words(words, name, fold)
    normalized = entity.normalized_name
    # `fold_name` starts with what `normalize_name` does, so a normalized name
    # that is exactly `normalize_name(name)` adds no unit; any other is indexed.
    if normalized != name and (
        len(name) > MAX_NAME_CHARS
        or normalized != (normalize_name(name) if name_key is None else name_key)
    ):
        _add_words(words, normalized, fold)
    aliases = entity.properties.get(ALIASES_PROPERTY)
    if isinstance(aliases, list):  # as `string_aliases`, inline: this runs per entity indexed
        for alias in aliases:
            if isinstance(alias, str):
                _add_words(words, alias, fold)
    return words


def entity_name_words(entity: Entity, name_key: str | None = None) -> list[str]:
    """Folded words whose `word_units`, together, are `entity_name_units(entity)`.

    A word may come more than once, and two words may share units, so the
    caller unions them. For a store indexing many entities at once: the
    words of a batch are far fewer than its units, and the names are folded
    without `fold_name`'s cache, each being indexed once. `name_key`, when
    given, must be `normalize_name(entity.name)`, which the caller may have
    computed already.
    """
    return _entity_words(entity, name_key, _fold_once)


def entity_name_units(entity: Entity) -> frozenset[str]:
    """Every unit of every name of `entity` (see `entity_names`), once each."""
    return frozenset(chain.from_iterable(map(word_units, _entity_words(entity, None, fold_name))))


def query_name_units(query: str) -> list[str]:
    """The distinct units of `query`, sorted, for a candidate lookup.

    Raises:
        ValueError: `query` is not a string.
    """
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {query!r}")
    return sorted(name_units(query))


@lru_cache(maxsize=1 << 10)
def _query_units(query: str) -> frozenset[str]:
    """`name_units(query)`, kept: one query is compared with many entities."""
    return frozenset(name_units(query))


def unit_overlap(query: str, entity: Entity) -> float:
    """The Dice coefficient of the units of `query` and of `entity`, on `0..1`.

    Twice the units they share over the units each has, so of two names
    sharing as much with the query the shorter scores higher. The lexical
    channel breaks equal `lexical_score`s by it (ADR 0042).
    """
    wanted, units = _query_units(query), entity_name_units(entity)
    if not wanted or not units:
        return 0.0
    return 2 * len(wanted & units) / (len(wanted) + len(units))
