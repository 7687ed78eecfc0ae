"""Entities named inside a free-text query: spans of its words matched against names.

A query is read as words (`text_words`). Every run of consecutive words
as long as one of an entity's names (its name, `normalized_name` or an
alias, in words) is compared with that name by `name_similarity`, the
score the lexical channel ranks names by, so the typos it tolerates are
tolerated here. An entity is linked when its best span scores at least
`LINK_THRESHOLD`. Spans then compete: the best-scoring span wins
(longer first on equal scores), and an entity whose span overlaps a span
already taken is dropped, and on that very span only the entities
scoring as well as the best are kept (namesakes, all kept; "Genevie
Conroy" dropped where "Genevie Corey" matched exactly). This matches
attribute values that are entities too ("the person whose hobby is
microscopy" links the hobby "microscopy"). See ADR 0077.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from redstring.domain.lexical import name_similarity
from redstring.domain.linking import MAX_NAME_WORDS, TextWord, text_words
from redstring.domain.names import entity_names

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity

#: The least `name_similarity` between a query span and a name that links the entity.
LINK_THRESHOLD: Final = 0.9
#: The largest length difference, over the longer length, a span and a name may have and
#: still reach `LINK_THRESHOLD`: the similarity's edit half is at most one minus it, and
#: its Jaro-Winkler half at most 1, so their mean reaches 0.9 only above 0.8.
_LENGTH_SLACK: Final = 0.2
#: A one-word name links only when the word is at least this long, or matches exactly.
_SHORT_WORD: Final = 4


class LinkedEntity(NamedTuple):
    """An entity a query names: `query[start:end]` is the span, `score` its similarity."""

    entity: Entity
    score: float
    start: int
    end: int


def _best_span(
    entity: Entity, words: Sequence[TextWord], query: str
) -> tuple[float, int, int] | None:
    """The entity's best-scoring span of the query's words, or `None` below the threshold."""
    best: tuple[float, int, int] | None = None
    for name in dict.fromkeys(entity_names(entity)):
        size = len(text_words(name))
        if not 0 < size <= min(MAX_NAME_WORDS, len(words)):
            continue
        for index in range(len(words) - size + 1):
            first, last = words[index], words[index + size - 1]
            span = query[first.start : last.end]
            if abs(len(span) - len(name)) > _LENGTH_SLACK * max(len(span), len(name)):
                continue  # too unequal in length to reach the threshold
            score = name_similarity(span, name)
            if size == 1 and score < 1.0 and len(first.folded) < _SHORT_WORD:
                continue
            if score >= LINK_THRESHOLD and (best is None or score > best[0]):
                best = (score, first.start, last.end)
    return best


def link_query(query: str, candidates: Sequence[Entity]) -> list[LinkedEntity]:
    """The candidates `query` names, best first (score, then span length, then `str(id)`).

    `candidates` are the name index's entities for the query (any order);
    each is linked at most once. See the module docstring.
    """
    words = text_words(query)
    found: list[LinkedEntity] = []
    seen: set[object] = set()
    for entity in candidates:
        key = (entity.tenant_id, entity.id)
        if key in seen:
            continue
        seen.add(key)
        best = _best_span(entity, words, query)
        if best is not None:
            found.append(LinkedEntity(entity, best[0], best[1], best[2]))
    found.sort(key=lambda link: (-link.score, link.start - link.end, str(link.entity.id)))
    taken: dict[tuple[int, int], float] = {}
    kept: list[LinkedEntity] = []
    for link in found:
        span = (link.start, link.end)
        winner = taken.get(span)
        if winner is not None:
            if link.score == winner:
                kept.append(link)
            continue
        if any(link.start < other[1] and other[0] < link.end for other in taken):
            continue
        taken[span] = link.score
        kept.append(link)
    return kept


#: The weight every relationship keeps however little its type fits the query.
FIT_FLOOR: Final = 0.2
#: The least word similarity that counts as a fit; below it a pair of words fits 0.
_FIT_LEAST: Final = 0.8
#: The fit of a word containing the other ("granddaughter" and "daughter").
_CONTAINED: Final = 0.9
#: The shortest word that counts as contained in another.
_CONTAINED_LEAST: Final = 3


#: The words a relationship type holds only to read as a phrase ("works_for",
#: "mother_of", "has_child", "is_married_to"), which every query has too: on either
#: side they fit nothing (the query's "the" is not in "mother").
TYPE_FILLER: Final = frozenset(
    {"a", "an", "the", "of", "to", "for", "in", "on", "at", "by", "with", "from"}
    | {"has", "have", "had", "is", "are", "was", "were", "be", "been"}
)


def type_words(relationship_type: str) -> set[str]:
    """The folded words of a relationship type, `_` read as a space ("works", "for")."""
    return {word.folded for word in text_words(relationship_type.replace("_", " "))}


def _word_fit(query_word: str, type_word: str) -> float:
    """How well one folded query word fits one folded relationship-type word, `0..1`."""
    if query_word == type_word:
        return 1.0
    shorter, longer = sorted((query_word, type_word), key=len)
    if len(shorter) >= _CONTAINED_LEAST and shorter in longer:
        return _CONTAINED
    score = name_similarity(query_word, type_word)
    return score if score >= _FIT_LEAST else 0.0


def type_fit(query: str, relationship_type: str) -> float:
    """How well a relationship type fits the query's words, on `0..1`, by spelling alone.

    The best fit of any word of the type but its fillers (`type_words`
    less `TYPE_FILLER`: "works_for" reads as "works", its "for" being in
    every query) with any word of the query but its fillers: `1` for the
    same folded word, `0.9` when one contains the other (a plural, a
    compound), else their `name_similarity` when at least `0.8`, else `0`.
    Generic: it reads no vocabulary of any dataset; a caller with an
    embedding model may pass its own similarity instead.
    """
    query_words = {word.folded for word in text_words(query)} - TYPE_FILLER
    words = type_words(relationship_type) - TYPE_FILLER
    return max((_word_fit(q, t) for q in query_words for t in words), default=0.0)
