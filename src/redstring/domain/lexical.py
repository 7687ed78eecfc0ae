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

import math
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from jellyfish import jaro_winkler_similarity, levenshtein_distance
from rapidfuzz.distance import JaroWinkler, Levenshtein
from rapidfuzz.process import cdist, cpdist

from redstring.domain.entity import Entity
from redstring.domain.names import ALIASES_PROPERTY, MAX_NAME_CHARS, entity_names
from redstring.domain.normalization import fold_name, latin_name, normalize_name

if TYPE_CHECKING:
    from redstring.domain.ids import EntityId

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
#: The two comparisons of ASCII texts as rapidfuzz's `cdist` takes them: its
#: `normalized_similarity` is `1 - distance / longer length`, computed as
#: `_pair_similarity` computes it.
_WINKLER: Final = JaroWinkler.similarity
_EDITS: Final = Levenshtein.normalized_similarity


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
    forms = _forms(entity.name)
    best = _similarity(wanted, forms)
    if best < WORD_MATCH_WEIGHT:  # else the word match cannot raise it
        best = max(best, WORD_MATCH_WEIGHT * _word_match(wanted, forms))
    return _beyond_name(wanted, entity, forms, best)


def lexical_scores(query: str, entities: Sequence[Entity]) -> list[float]:
    """`lexical_score(query, entity)` of each of `entities`, in order: the same floats.

    An ASCII query's comparisons with ASCII names are made together, a few
    calls into rapidfuzz whose values are those of the comparisons one at a
    time, bit for bit; scoring many candidates so costs a fraction of
    scoring each in turn (ADR 0052).
    """
    wanted = _forms(query)
    if wanted[2] is not None or len(entities) < _BATCH_FROM:
        return [lexical_score(query, entity) for entity in entities]
    names = [entity.name[:MAX_NAME_CHARS] for entity in entities]
    joined = "\x00".join(names)  # no name holds a NUL (`check_text`)
    forms = _ascii_forms(joined) if joined.isascii() else [_forms(name) for name in names]
    batched = [row for row, each in enumerate(forms) if each[2] is None]
    scores = [-1.0] * len(forms)
    if batched:
        best_of = _ascii_name_scores(wanted, [forms[row] for row in batched])
        for row, best in zip(batched, best_of, strict=True):
            scores[row] = best
    for row, best in enumerate(scores):
        if best < 0.0:  # a name outside ASCII, compared as `lexical_score` does
            each = forms[row]
            best = _similarity(wanted, each)
            if best < WORD_MATCH_WEIGHT:
                best = max(best, WORD_MATCH_WEIGHT * _word_match(wanted, each))
            scores[row] = best
    for row, entity in enumerate(entities):
        best = scores[row]
        if best == 1.0 or (not entity.properties and _adds_no_name(entity)):
            continue
        scores[row] = _beyond_name(wanted, entity, forms[row], best)
    return scores


#: Below this many names a query is compared with each in turn: rapidfuzz's
#: `cdist` costs more than a few calls one at a time.
_BATCH_FROM = 4

#: `fold_name` of one ASCII character, as a byte table (a character it reads
#: as a word break becomes a space), keeping NUL, which joins texts to fold
#: together in one pass.
_ASCII_FOLD = bytes([0] + [ord(fold_name(chr(code)) or " ") for code in range(1, 128)] + [32] * 128)


def _adds_no_name(entity: Entity) -> bool:
    """Whether `entity`'s `normalized_name` certainly folds to its name's forms.

    The same as `_beyond_name` finds, without folding: an ASCII name's
    lower case folds as the name does.
    """
    normalized, name = entity.normalized_name, entity.name
    return normalized == name or (name.isascii() and normalized == name.lower())


def _ascii_forms(joined: str) -> list[_Forms]:
    """`_forms` of each ASCII text of `joined` (texts joined by NUL), folded in one pass."""
    folded_texts = joined.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split("\x00")
    forms: list[_Forms] = []
    for text in folded_texts:
        words = text.split()
        folded = " ".join(words)
        words.sort()
        forms.append((folded, " ".join(words), None, tuple(words)))
    return forms


def _ascii_name_scores(query: _Forms, names: list[_Forms]) -> list[float]:
    """The name part of `lexical_score` for an ASCII query and ASCII names, in batches.

    `_pair_similarity`, raised by `_ascii_word_match` at `WORD_MATCH_WEIGHT`
    where that can help. One rapidfuzz call per measure compares the query's
    folded and sorted forms with every name's (`cpdist`), and one more per
    measure, only when some name can still gain from its words, each query
    word with every distinct word of those names (`cdist`).
    """
    folded, ordered, _, wanted = query
    count = len(names)
    column_of: dict[str, int] = {}
    columns: list[int] = []
    starts: list[int] = []
    worded: list[int] = []
    for at, each in enumerate(names):
        if each[3]:
            worded.append(at)
            starts.append(len(columns))
            columns.extend([column_of.setdefault(word, len(column_of)) for word in each[3]])
    # float64, the scalar calls' own type; the rows come back as Python floats.
    pairs = [folded] * count + [ordered] * count
    texts = [each[0] for each in names] + [each[1] for each in names]
    winkler = cpdist(pairs, texts, scorer=_WINKLER, dtype="float64").tolist()
    edits = cpdist(pairs, texts, scorer=_EDITS, dtype="float64").tolist()
    # Sorting keeps every character, so a sorted form has its folded form's
    # length. Where neither side's sorted words differ from its folded form,
    # the second comparison repeats the first and the maxima keep its values.
    # Equal texts (two empty ones too) score 1.0 by both comparisons, which
    # `_pair_similarity` returns for them without comparing.
    scores = [
        (max(winkler_folded, winkler_sorted) + max(edits_folded, edits_sorted)) / 2
        for winkler_folded, winkler_sorted, edits_folded, edits_sorted in zip(
            winkler[:count], winkler[count:], edits[:count], edits[count:], strict=True
        )
    ]
    weak = [at for at in worded if scores[at] < WORD_MATCH_WEIGHT]
    if not wanted or not weak:
        return scores  # a side without words matches no word: 0.0 raises nothing
    # Each query word against each distinct word, as `_ascii_word_match`
    # computes it; a word found among a name's words scores 1.0 by both
    # comparisons, which it adds without comparing.
    distinct = list(column_of)
    word_winkler = cdist(wanted, distinct, scorer=_WINKLER, dtype="float64").tolist()
    word_edits = cdist(wanted, distinct, scorer=_EDITS, dtype="float64").tolist()
    rows = list(zip(word_winkler, word_edits, strict=True))
    ends = [*starts[1:], len(columns)]
    for at, start, end in zip(worded, starts, ends, strict=True):
        if scores[at] >= WORD_MATCH_WEIGHT:
            continue
        held = columns[start:end]
        total = 0.0  # summed over the query's words in their order, as there
        for winkler_row, edits_row in rows:
            total += max([(winkler_row[column] + edits_row[column]) / 2 for column in held])
        scores[at] = max(scores[at], WORD_MATCH_WEIGHT * (total / len(wanted)))
    return scores


def _beyond_name(wanted: _Forms, entity: Entity, forms: _Forms, best: float) -> float:
    """`lexical_score` from the name's `best`: the other names, then the other properties."""
    if best == 1.0:  # nothing scores above one
        return best
    name = entity.name
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


def word_rarity_matches(query: str, entities: Iterable[Entity]) -> dict[EntityId, float]:
    """How well each of `entities` holds the query's rare words, among those entities.

    Candidate-relative, unlike `lexical_score`. Each folded word of the
    query is weighted `log((n + 1) / (held + 1))`, where `n` is how many
    entities are given and `held` how many of them hold that word in a name
    (`entity_names`: the name, the normalized name, each alias): the word
    itself or, for an initial, a word it begins ("j" holds "john" and
    "john" holds "j"). A word a name does not hold counts by its best
    `_word_similarity` among that name's words above the median of the
    entities' best similarities to it, scaled onto `0..1`: two unrelated
    words are about half alike, and only what one entity has beyond the
    rest tells it apart. An entity scores, over its names, the weighted
    mean over the query's words (a held word counts 1.0). Two-letter words
    of the query are left out: particles ("of", "de", "la") far more often
    than names, whose exact match would count as a rare word's. A surname
    that one candidate of twenty holds so counts for that candidate well
    above a given name that half of them hold (ADR 0116).

    Every score is on `0..1`; all are `0.0` when no word is left or every
    word is held by every entity (no word tells them apart). An entity
    given twice is scored once. Only the first `MAX_NAME_CHARS` characters
    of each text count.

    Raises:
        ValueError: `query` is not a string, or an item of `entities` is not
            an `Entity`.
    """
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {query!r}")
    wanted = tuple(word for word in _forms(query)[3] if len(word) != 2)
    ids: list[EntityId] = []
    texts: list[list[str]] = []
    seen: set[int] = set()
    for entity in entities:
        if not isinstance(entity, Entity):
            raise ValueError(f"entities must hold Entity objects, got {entity!r}")
        if entity.id.int not in seen:  # an `int` hashes in C, a `UUID` in Python
            seen.add(entity.id.int)
            ids.append(entity.id)
            texts.append(_name_texts(entity))
    if not wanted or not ids:
        return dict.fromkeys(ids, 0.0)
    names = _name_words(texts)
    distinct = list({word: None for held in names for words in held for word in words})
    alike = dict(zip(distinct, _word_likeness(wanted, distinct), strict=True))
    width = len(wanted)
    nothing = (0.0,) * width
    # Each query word's best likeness in each name of each entity.
    rows = [
        [
            alike[words[0]]
            if len(words) == 1
            else tuple(map(max, *(alike[word] for word in words)))
            if words
            else nothing
            for words in held
        ]
        for held in names
    ]
    count = len(ids)
    weights: list[float] = []
    middles: list[float] = []
    for at in range(width):
        bests = sorted(max([row[at] for row in each]) for each in rows)
        weights.append(math.log((count + 1) / (bests.count(1.0) + 1)))
        middles.append((bests[(count - 1) // 2] + bests[count // 2]) / 2)
    total = math.fsum(weights)
    if total <= 0.0:
        return dict.fromkeys(ids, 0.0)
    # A holder counts its word's weight; any other name its likeness above
    # the middle, scaled onto the weight.
    terms = [
        (weight, middle, weight / (1.0 - middle) if middle < 1.0 else 0.0)
        for weight, middle in zip(weights, middles, strict=True)
    ]
    matches: dict[EntityId, float] = {}
    for entity_id, each in zip(ids, rows, strict=True):
        best = 0.0
        for row in each:
            found = 0.0
            for likeness, (weight, middle, slope) in zip(row, terms, strict=True):
                if likeness == 1.0:
                    found += weight
                elif likeness > middle:
                    found += slope * (likeness - middle)
            if found > best:
                best = found
        matches[entity_id] = min(best / total, 1.0)
    return matches


def _name_texts(entity: Entity) -> list[str]:
    """`entity_names(entity)`, without a normalized name that folds as the name does."""
    texts = list(entity_names(entity))
    if _adds_no_name(entity):
        del texts[1]
    return texts


def _name_words(texts: list[list[str]]) -> list[set[_Words]]:
    """The distinct folded word tuples of each entity's texts; ASCII ones folded together."""
    ascii_texts = [text[:MAX_NAME_CHARS] for held in texts for text in held if text.isascii()]
    folded = iter(_ascii_forms("\x00".join(ascii_texts)) if ascii_texts else ())
    return [
        {next(folded)[3] if text.isascii() else _forms(text)[3] for text in held} for held in texts
    ]


def _word_likeness(wanted: _Words, words: list[str]) -> list[tuple[float, ...]]:
    """Each of `words` against each query word: 1.0 where it holds it, else their likeness.

    A word holds a query word it equals, or whose initial it is or begins
    with. The likeness is `_word_similarity`'s, computed for ASCII words in
    two rapidfuzz calls (its values, ADR 0043).
    """
    if not words:
        return []
    if all(each.isascii() for each in wanted) and all(word.isascii() for word in words):
        winkler = cdist(words, wanted, scorer=_WINKLER, dtype="float64").tolist()
        edits = cdist(words, wanted, scorer=_EDITS, dtype="float64").tolist()
        found = [
            [(w + e) / 2 for w, e in zip(left, right, strict=True)]
            for left, right in zip(winkler, edits, strict=True)
        ]
    else:
        found = [[_word_similarity(each, word) for each in wanted] for word in words]
    position = {word: row for row, word in enumerate(words)}
    initials = [row for row, word in enumerate(words) if len(word) == 1]
    for column, each in enumerate(wanted):
        held = [position[each]] if each in position else []
        if len(each) == 1:
            held += [row for row, word in enumerate(words) if word[0] == each]
        else:
            held += [row for row in initials if words[row] == each[0]]
        for row in held:
            found[row][column] = 1.0
    return [tuple(row) for row in found]
