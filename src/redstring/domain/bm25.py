"""BM25: the one tokenizer and the one scorer every chunk store uses.

Tokens are the words of `fold_name`'s form of the text: casefolded, NFKD
with combining marks dropped, every punctuation mark, symbol, separator or
control character read as a break; letters and digits of every script are
kept, and nothing is stemmed or dropped as a stopword. The score is the
Lucene variant of BM25 (what `bm25s` computes by default), with `K1` and
`B` below. Every store keeps the same integers per tenant (chunk count,
total length, document frequency, term frequency, chunk length) and scores
them with the same code (`redstring.chunks.scoring`), so every store
returns the same floats. See
[ADR 0060](../adr/0060-chunks-are-ranked-by-lucene-bm25-over-folded-words.md).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Final

from redstring.domain.normalization import _ASCII_FOLD, _BREAK_CATEGORIES

if TYPE_CHECKING:
    from uuid import UUID

#: How fast a term's weight saturates with its frequency in a chunk.
K1: Final = 1.5
#: How much a chunk's length, against the tenant's mean, discounts its terms.
B: Final = 0.75


class _UnicodeFold(dict[int, str]):
    """Each code point's folded form, computed once when first met."""

    def __missing__(self, code: int) -> str:
        character = chr(code)
        kept = []
        for part in unicodedata.normalize("NFKD", character.casefold()):
            if unicodedata.combining(part):
                continue
            kept.append(" " if unicodedata.category(part)[0] in _BREAK_CATEGORIES else part)
        folded = "".join(kept).casefold()
        self[code] = folded
        return folded


_FOLD: Final = _UnicodeFold()


def tokenize(text: str) -> list[str]:
    """The BM25 terms of `text`, in order, repeats kept.

    Exactly `fold_name(text).split()`, computed one character at a time, so
    a chunk's text costs one pass whatever its length. Total over strings.
    """
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split()
    return text.translate(_FOLD).split()


def term_frequencies(text: str) -> tuple[dict[str, int], int]:
    """Each distinct term of `text` with its count, and the number of terms."""
    terms = tokenize(text)
    return dict(Counter(terms)), len(terms)


def query_terms(query: str) -> list[str]:
    """The distinct terms of `query`, sorted: a query term counts once, however often given."""
    return sorted(set(tokenize(query)))


def idf(document_frequency: int, chunk_count: int) -> float:
    """`ln(1 + (N - df + 0.5) / (df + 0.5))`: positive for every `0 < df <= N`."""
    return math.log(1.0 + (chunk_count - document_frequency + 0.5) / (document_frequency + 0.5))


def id_halves(chunk_id: UUID) -> tuple[int, int]:
    """The high and low 64 bits of a UUID's integer."""
    value = chunk_id.int
    return value >> 64, value & 0xFFFF_FFFF_FFFF_FFFF
