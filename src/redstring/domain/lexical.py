"""Scoring an entity against a free-text query, with no text index.

This is **not BM25**, and nothing here should be renamed towards it. BM25
weights a term by corpus statistics -- document frequency and average document
length -- and neither quantity means anything over a corpus of entity names,
where every "document" is a handful of words. A field-weighted string
similarity does the job people actually want from a lexical channel here:
catching `ACME Corporation` against `Acme Corp`, which is exactly where cosine
is weakest. Real BM25 needs stored text, which this library does not keep.

The score is a **maximum over fields, not a sum.** Summing would let an entity
with many mediocre fields outrank an exact name match, and would leave the
result unbounded above -- so it could not be compared against the semantic
channel's `0..1` even informally, and could not be reported on `ScoredEntity`
under a stated scale.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from jellyfish import jaro_winkler_similarity, levenshtein_distance
from rapidfuzz.distance import JaroWinkler, Levenshtein

from redstring.domain.names import ALIASES_PROPERTY, MAX_NAME_CHARS
from redstring.domain.normalization import fold_name, latin_name, normalize_name

if TYPE_CHECKING:
    from redstring.domain.entity import Entity

#: What a match on a property value is worth relative to a match on the name.
#:
#: A name is what an entity *is*; a property is something recorded about it,
#: and a query matching one is weaker evidence. The exact figure is a
#: judgement rather than a measurement -- there is no graded retrieval corpus
#: in this repo to fit it against, and inventing one would dress a guess as a
#: result.
PROPERTY_WEIGHT = 0.6

#: What `word_match_similarity` is worth against the whole-name comparison.
#: Below 1, so a name matching the whole query still outranks one that only
#: contains its words ("Cowden" scores "Cowden" 1.0, "Campbell Cowden" 0.95).
#: 0.85, 0.9 and 0.95 measured alike on the quality bench (ADR 0015); 0.95
#: was best on every set.
WORD_MATCH_WEIGHT = 0.95


#: The forms `_forms` gives a text: its folded form, that form's words sorted
#: (as one string and as a tuple), then the same of its `latin_name` (`None`
#: when the folded form is already ASCII, so the Latin forms would repeat it).
_Words = tuple[str, ...]
_Latin = tuple[str, str, _Words]
_Forms = tuple[str, str, _Latin | None, _Words]

#: The two comparisons of a pair of texts: Jaro-Winkler similarity and
#: Levenshtein distance.
_Metrics = tuple[Callable[[str, str], float], Callable[[str, str], int]]
#: For any pair: jellyfish compares grapheme clusters.
_GRAPHEMES: _Metrics = (jaro_winkler_similarity, levenshtein_distance)
#: For a pair of ASCII texts: rapidfuzz compares characters, and in a folded
#: ASCII text (letters, digits, spaces) each character is its own grapheme
#: cluster, so it gives jellyfish's values, bit for bit, several times faster
#: (ADR 0043). Its `JaroWinkler` differs from jellyfish's only on two empty
#: texts, which are equal and never reach it.
_ASCII: _Metrics = (JaroWinkler.similarity, Levenshtein.distance)


@lru_cache(maxsize=1 << 16)
def _forms(text: str) -> _Forms:
    """`text` folded (first `MAX_NAME_CHARS` characters), its words sorted, its Latin forms."""
    head = text[:MAX_NAME_CHARS]
    folded = fold_name(head)
    latin = None
    if not folded.isascii():
        romanized = latin_name(head)
        romanized_words = tuple(sorted(romanized.split()))
        latin = (romanized, " ".join(romanized_words), romanized_words)
    words = tuple(sorted(folded.split()))
    return folded, " ".join(words), latin, words


def _latin(forms: _Forms) -> _Latin:
    """The Latin forms of `forms`: its own when it is already ASCII."""
    return forms[2] if forms[2] is not None else (forms[0], forms[1], forms[3])


def _levenshtein_similarity(left: str, right: str) -> float:
    """One minus the edit distance over the longer length: `1.0` equal, `0.0` nothing kept."""
    longest = max(len(left), len(right))
    return 1.0 - levenshtein_distance(left, right) / longest if longest else 1.0


def _similarity(query: _Forms, name: _Forms) -> float:
    """The better of the folded and the Latin comparison (ADR 0041)."""
    if query[2] is None and name[2] is None:  # both ASCII: the Latin forms are these
        return _pair_similarity(query[0], query[1], name[0], name[1], _ASCII)
    best = _pair_similarity(query[0], query[1], name[0], name[1], _GRAPHEMES)
    if best < 1.0:
        wanted, latin = _latin(query), _latin(name)
        best = max(best, _pair_similarity(wanted[0], wanted[1], latin[0], latin[1], _ASCII))
    return best


def _pair_similarity(
    folded: str, ordered: str, name_folded: str, name_ordered: str, metrics: _Metrics
) -> float:
    """The mean of the best Jaro-Winkler and the best normalized Levenshtein (ADR 0015)."""
    if folded == name_folded or ordered == name_ordered:
        return 1.0
    winkler_of, distance_of = metrics
    longest = max(len(folded), len(name_folded))
    winkler = winkler_of(folded, name_folded)
    edits = 1.0 - distance_of(folded, name_folded) / longest
    if ordered != folded or name_ordered != name_folded:
        # Sorting keeps every character, so the longer length is the same.
        winkler = max(winkler, winkler_of(ordered, name_ordered))
        edits = max(edits, 1.0 - distance_of(ordered, name_ordered) / longest)
    return float(winkler + edits) / 2


def name_similarity(left: str, right: str) -> float:
    """How alike two names are, on `0..1`, after `fold_name` on both.

    The mean of Jaro-Winkler and of normalized Levenshtein similarity, each
    the better of the folded names and of their words sorted, so "Lovelace,
    Ada" scores as "Ada Lovelace" does (ADR 0015). Only the
    first `MAX_NAME_CHARS` characters of each side count, which bounds the
    cost on a huge string. Equal folded names score `1.0`; one empty side
    against a non-empty one scores `0.0`.
    """
    return _similarity(_forms(left), _forms(right))


@lru_cache(maxsize=1 << 16)
def _word_similarity(left: str, right: str) -> float:
    """The mean of Jaro-Winkler and normalized Levenshtein of two folded words."""
    if left == right:
        return 1.0
    return float(jaro_winkler_similarity(left, right) + _levenshtein_similarity(left, right)) / 2


def _word_match(query: _Forms, name: _Forms) -> float:
    """The better of the folded and the Latin word match (ADR 0041)."""
    if query[2] is None and name[2] is None:  # both ASCII: the Latin forms are these
        return _ascii_word_match(query[3], name[3])
    best = _pair_word_match(query[3], name[3], _word_similarity)
    if best < 1.0:
        wanted, words = _latin(query)[2], _latin(name)[2]
        best = max(best, _ascii_word_match(wanted, words))
    return best


def _pair_word_match(
    wanted: _Words, words: _Words, similarity_of: Callable[[str, str], float]
) -> float:
    """The mean over the query's words of each one's best match among the name's words."""
    if not wanted or not words:
        return 0.0
    # Loops rather than nested generators: this runs for every candidate.
    total = 0.0
    for each in wanted:
        best = 0.0
        for word in words:
            similarity = similarity_of(each, word)
            if similarity > best:
                best = similarity
                if best == 1.0:
                    break
        total += best
    return total / len(wanted)


def _ascii_word_match(wanted: _Words, words: _Words) -> float:
    """`_pair_word_match` of ASCII words, with `_word_similarity` inlined and not kept.

    Computing an ASCII pair costs about what a cache lookup does, and this
    runs for every candidate. A query word found among the name's words
    scores 1.0 without a comparison; two different words score below 1.0.
    """
    if not wanted or not words:
        return 0.0
    winkler_of, distance_of = _ASCII
    total = 0.0
    for each in wanted:
        if each in words:
            total += 1.0
            continue
        best = 0.0
        size = len(each)
        for word in words:
            longest = size if size > len(word) else len(word)
            edits = 1.0 - distance_of(each, word) / longest
            similarity = float(winkler_of(each, word) + edits) / 2
            if similarity > best:
                best = similarity
        total += best
    return total / len(wanted)


def word_match_similarity(query: str, name: str) -> float:
    """How well the words of `query` are found among the words of `name`, on `0..1`.

    Each folded word of the query is compared with every folded word of the
    name (the mean of Jaro-Winkler and normalized Levenshtein, as
    `name_similarity` compares whole names) and keeps its best; the result is
    the mean over the query's words. Words of the name the query does not
    mention cost nothing, so a bare surname finds "Given Surname" at `1.0`.
    Either side without words scores `0.0`. Only the first `MAX_NAME_CHARS`
    characters of each side count.
    """
    return _word_match(_forms(query), _forms(name))


def lexical_score(query: str, entity: Entity) -> float:
    """How well `entity` matches `query` lexically, on `0..1`.

    The best of: the name, the extractor's `normalized_name`, each string in
    a list under `properties["aliases"]` (all at full weight), and each other
    string value in `properties` at `PROPERTY_WEIGHT`, each compared with
    `name_similarity`; a name or alias also by `word_match_similarity` at
    `WORD_MATCH_WEIGHT`, so a query naming part of a name (a bare surname)
    scores just below one naming all of it. Casing, accents, punctuation and word order are not
    differences; only the first `MAX_NAME_CHARS` characters of each side
    count.

    Non-string property values are skipped rather than coerced. `properties`
    is free-form JSON, and `str(7)` would invent a match against the query
    `"7"` that no caller asked for -- the same reading `ports/vector_store.py`
    gives a non-string `entity_type`.
    """
    wanted = _forms(query)
    name = entity.name
    forms = _forms(name)
    best = _similarity(wanted, forms)
    if best < WORD_MATCH_WEIGHT:  # else the word match cannot raise it
        best = max(best, WORD_MATCH_WEIGHT * _word_match(wanted, forms))
    if best == 1.0:  # nothing scores above one
        return best
    properties = entity.properties
    # An ASCII name's `normalize_name` folds to the name's own form (folding
    # starts with normalizing), so such a `normalized_name` is not folded
    # again. Outside ASCII casefolding can change the romanization ("µ"
    # casefolds to the Greek "μ"), so both are compared.
    normalized = entity.normalized_name
    others = (
        []
        if normalized == name
        or (len(name) <= MAX_NAME_CHARS and name.isascii() and normalized == normalize_name(name))
        else [normalized]
    )
    aliases = properties.get(ALIASES_PROPERTY) if properties else None
    if isinstance(aliases, list):
        others.extend(alias for alias in aliases if isinstance(alias, str))
    if others:
        # Each distinct pair of folded and Latin forms is scored once: two
        # names may fold alike and romanize apart ("µ" and "μ").
        scored = {(forms[0], forms[2])}
        for each in others:
            forms = _forms(each)
            if (forms[0], forms[2]) not in scored:
                scored.add((forms[0], forms[2]))
                best = max(best, _similarity(wanted, forms))
                if best < WORD_MATCH_WEIGHT:
                    best = max(best, WORD_MATCH_WEIGHT * _word_match(wanted, forms))
        if best == 1.0:
            return best
    if not properties:
        return best
    for value in properties.values():
        if isinstance(value, str):
            best = max(best, PROPERTY_WEIGHT * _similarity(wanted, _forms(value)))
    return best
