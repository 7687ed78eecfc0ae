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

from typing import TYPE_CHECKING

import jellyfish

from redstring.domain.names import ALIASES_PROPERTY, MAX_NAME_CHARS, entity_names
from redstring.domain.normalization import fold_name

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


def name_similarity(left: str, right: str) -> float:
    """How alike two names are, on `0..1`, after `fold_name` on both.

    The better of Jaro-Winkler on the folded names and on their words sorted,
    so "Lovelace, Ada" scores as "Ada Lovelace" does (ADR 0015). Only the
    first `MAX_NAME_CHARS` characters of each side count, which bounds the
    cost on a huge string. Equal folded names score `1.0`; one empty side
    against a non-empty one scores `0.0`.
    """
    a, b = fold_name(left[:MAX_NAME_CHARS]), fold_name(right[:MAX_NAME_CHARS])
    if a == b:
        return 1.0
    best = jellyfish.jaro_winkler_similarity(a, b)
    if " " in a or " " in b:
        sorted_a, sorted_b = " ".join(sorted(a.split())), " ".join(sorted(b.split()))
        if sorted_a == sorted_b:
            return 1.0
        best = max(best, jellyfish.jaro_winkler_similarity(sorted_a, sorted_b))
    return float(best)


def lexical_score(query: str, entity: Entity) -> float:
    """How well `entity` matches `query` lexically, on `0..1`.

    The best of: the name, the extractor's `normalized_name`, each string in
    a list under `properties["aliases"]` (all at full weight), and each other
    string value in `properties` at `PROPERTY_WEIGHT`, each compared with
    `name_similarity`. Casing, accents, punctuation and word order are not
    differences; only the first `MAX_NAME_CHARS` characters of each side
    count.

    Non-string property values are skipped rather than coerced. `properties`
    is free-form JSON, and `str(7)` would invent a match against the query
    `"7"` that no caller asked for -- the same reading `ports/vector_store.py`
    gives a non-string `entity_type`.
    """
    best = max(name_similarity(query, name) for name in entity_names(entity))
    if best == 1.0:
        return best
    for key, value in entity.properties.items():
        if isinstance(value, str) and key != ALIASES_PROPERTY:
            best = max(best, PROPERTY_WEIGHT * name_similarity(query, value))
    return best
