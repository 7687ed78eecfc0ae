"""Blocking keys: which entities are worth comparing at all.

Comparing every pair of entities in a tenant is quadratic. Blocking assigns
each entity a few short keys and only compares entities that share one. A key
that is too coarse makes a block too large (the quadratic cost comes back); a
key that is too fine makes two spellings of one thing land in different
blocks, and the duplicate is never seen.

Keys are namespaced -- `p:` prefix, `s:` soundex, `t:` type -- so a type key
can never equal a name prefix.

## Why soundex codes ASCII letters only

`jellyfish.soundex` accepts anything and keeps the first character as is.
Measured on jellyfish 1.x:

- digits: `"12345"` codes to `"1000"`, `"1st"` to `"1230"`: every name
  starting with a digit shares a handful of blocks;
- leading spaces: `" ada"` codes to `" 300"`, not `"A300"`;
- CJK: `"李小龙"` codes to `"李000"` and `"王菲"` to `"王000"`: each name
  is blocked with every other name sharing its first character;
- accents: filtering to ASCII letters *without* decomposing first turns
  `"muñoz"` into `"muoz"` (`"M200"`), away from `"munoz"` (`"M520"`).

So the name is NFKD-decomposed, reduced to ASCII letters, and coded whole;
when nothing is left there is no soundex key rather than a junk one.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING

from redstring.domain import keys as _keys
from redstring.domain.normalization import normalize_name

if TYPE_CHECKING:
    from redstring.domain.entity import Entity

#: How many characters of the normalized name the prefix key keeps.
PREFIX_LENGTH = _keys.PREFIX_LENGTH


class BlockingKeyStrategy(StrEnum):
    """A way of deriving blocking keys. The values are a wire format."""

    PREFIX = "prefix"
    ENTITY_TYPE = "entity_type"
    SOUNDEX = "soundex"


#: Every strategy: prefix and soundex catch spelling variants, and the type
#: key guarantees that no entity is unblockable.
DEFAULT_STRATEGIES: frozenset[BlockingKeyStrategy] = frozenset(BlockingKeyStrategy)


def prefix_key_for_name(name: str) -> str:
    """The first `PREFIX_LENGTH` characters of the normalized name.

    Normalized here rather than trusting `Entity.normalized_name`: that field
    is whatever the extractor put there, and a key function that produced a
    different answer for the same name depending on which extractor ran would
    make blocking silently miss matches across sources.

    Total, with no empty-name branch. `Entity` rejects a name whose `strip()`
    is falsy and `normalize_name` strips with the same function, so a valid
    entity cannot normalize to nothing. A *query* can be blank, and the
    `Retriever` rejects that before reaching here.
    """
    return _keys.PREFIX + normalize_name(name)[:PREFIX_LENGTH]


def soundex_key_for_name(name: str) -> str | None:
    """A phonetic code for the name, or `None` when there is nothing to code.

    The name is NFKD-normalized and reduced to its ASCII letters first.
    `jellyfish.soundex` accepts anything and codes digits, spaces and CJK into
    keys that collide far too widely -- see the module docstring for the four
    measured cases, and for why the normalization has to come *before* the
    filter rather than instead of it.

    The **whole** name is coded, not the first token. Coding "Ada Lovelace" as
    if it were "Ada" would block it with every Adam and Adams in the tenant,
    which is the block-too-large failure this file's docstring warns about.
    """
    return _keys.soundex_of_normalized(normalize_name(name))


def _field(entity: Entity, name: str) -> str:
    """`entity`'s text field `name`, or `ValueError` when `entity` is no entity."""
    value = getattr(entity, name, None)
    if not isinstance(value, str):
        raise ValueError(f"entity must be an Entity, got {type(entity).__name__} {entity!r:.80}")
    return value


def prefix_key(entity: Entity) -> str:
    """`prefix_key_for_name` of the entity's name. See that function."""
    return prefix_key_for_name(_field(entity, "name"))


def soundex_key(entity: Entity) -> str | None:
    """`soundex_key_for_name` of the entity's name. See that function."""
    return soundex_key_for_name(_field(entity, "name"))


def query_blocking_keys(query: str) -> list[str]:
    """The keys a free-text query should look for candidates under.

    **Prefix and soundex only, never the type key.** The type key exists so no
    entity is unblockable; as a query key it matches every entity of that
    type, which turns candidate generation into a full scan. `entity_types`
    filters the candidates instead.

    A list rather than a `frozenset` because `find_by_blocking_keys` takes a
    `Sequence` and keys its result by what it was asked for; ordering is
    stable so a failing test names the same key twice.
    """
    keys = [prefix_key_for_name(query), soundex_key_for_name(query)]
    return list(dict.fromkeys(key for key in keys if key is not None))


def entity_type_key(entity: Entity) -> str:
    """`t:` plus the normalized entity type.

    Exists so that no entity is unblockable: a name of digits or CJK has no
    soundex key, but every entity has a type.
    """
    return _keys.TYPE + normalize_name(_field(entity, "entity_type"))


def blocking_keys_for(
    entity: Entity,
    strategies: Iterable[BlockingKeyStrategy] = DEFAULT_STRATEGIES,
) -> frozenset[str]:
    """Every key `entity` is blocked under, for the given strategies.

    A strategy that yields nothing for this entity (soundex of a name with no
    ASCII letters) contributes nothing.

    Raises:
        ValueError: `entity` is not an entity, or `strategies` is not an
            iterable of strategies.
    """
    name = _field(entity, "name")
    # The default is checked by identity: `isinstance` against an ABC is a Python call.
    if strategies is not DEFAULT_STRATEGIES and (
        isinstance(strategies, str) or not isinstance(strategies, Iterable)
    ):
        raise ValueError(f"strategies must be an iterable of strategies, got {strategies!r:.80}")
    wanted: set[BlockingKeyStrategy] = set()
    for strategy in strategies:
        wanted.add(
            strategy if type(strategy) is BlockingKeyStrategy else BlockingKeyStrategy(strategy)
        )
    type_key = BlockingKeyStrategy.ENTITY_TYPE in wanted
    return _keys.keys_of(
        name,
        _field(entity, "entity_type") if type_key else "",
        prefix=BlockingKeyStrategy.PREFIX in wanted,
        soundex=BlockingKeyStrategy.SOUNDEX in wanted,
        type_key=type_key,
    )
