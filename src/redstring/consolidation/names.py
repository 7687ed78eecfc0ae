"""Names as consolidation compares them: folded, tokenized, titles set apart.

Pure and total. A name is folded (compatibility-decomposed, combining marks
dropped, casefolded, punctuation turned into spaces) so that "Doe, John",
"JOHN DOE" and "John  Doe" give the same tokens, and a leading title is set
aside so that "Dr John Doe" compares as "John Doe".
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import jellyfish
from rapidfuzz.distance import DamerauLevenshtein, JaroWinkler

#: Titles and honorifics set aside before comparing, folded as `fold` folds them.
TITLES: Final = frozenset(
    {
        "dr", "doctor", "prof", "professor", "mr", "mrs", "ms", "miss", "mx", "sir", "dame",
        "lady", "lord", "rev", "revd", "fr", "father", "sr", "jr", "mme", "mlle", "herr",
        "frau", "sra", "dott", "capt", "col", "gen", "lt", "sgt", "hon",
    }
)  # fmt: skip

#: Characters that join the parts of one token: hyphens and apostrophes.
_JOINERS: Final = frozenset("-'\u2010\u2011\u2019")

#: A name with fewer letters than this is short: it never merges on name evidence alone.
SHORT_NAME_LETTERS: Final = 5

#: What each token of the longer name left unmatched takes off the token match.
UNMATCHED_TOKEN: Final = 0.1

#: What a single initial scores against a token that starts with it ("J" against "John").
INITIAL_MATCH: Final = 0.9


def jaro_winkler(left: str, right: str) -> float:
    """Jaro-Winkler similarity of two texts, jellyfish's value.

    Two non-empty ASCII texts go to rapidfuzz, which gives jellyfish's value
    bit for bit (ADR 0043) in about a third of the time; any other pair,
    and two empty texts (where the two differ), to jellyfish.
    """
    if left and right and left.isascii() and right.isascii():
        return _RAPID_JARO_WINKLER(left, right)
    return _jellyfish_jaro_winkler(left, right)


def damerau_edits(left: str, right: str) -> int:
    """Damerau-Levenshtein distance of two texts, jellyfish's value (rapidfuzz's for ASCII)."""
    if left.isascii() and right.isascii():
        return _RAPID_DAMERAU(left, right)
    return int(jellyfish.damerau_levenshtein_distance(left, right))


_RAPID_JARO_WINKLER: Final = JaroWinkler.similarity
_RAPID_DAMERAU: Final = DamerauLevenshtein.distance


def _jellyfish_jaro_winkler(left: str, right: str) -> float:
    return float(jellyfish.jaro_winkler_similarity(left, right))


def fold(text: str) -> str:
    """Decompose, drop combining marks, casefold, and turn punctuation into spaces.

    Letters and digits of every script are kept; hyphens and apostrophes
    join ("Lillie-Hinrichs" and "O'Brien" stay one token each); every other
    character separates tokens. Total: never raises; `""` when nothing is left.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    kept = []
    for character in decomposed:
        if unicodedata.combining(character) or character in _JOINERS:
            continue
        kept.append(character if character.isalnum() else " ")
    return " ".join("".join(kept).casefold().split())


@dataclass(frozen=True, slots=True)
class NameForm:
    """A name ready to compare: its tokens without titles, and what kind of name it is.

    `tokens` keeps the written order; `sorted_text` is the tokens sorted and
    joined, so reordered names ("Doe John", "John Doe") compare equal;
    `ascii` whether `text` is ASCII (then rapidfuzz measures it).
    """

    tokens: tuple[str, ...]
    text: str
    sorted_text: str
    letters: int
    initials: int
    ascii: bool = False

    @property
    def is_weak(self) -> bool:
        """Whether name evidence alone must never merge it: one token, or short."""
        return len(self.tokens) < 2 or self.letters < SHORT_NAME_LETTERS

    @property
    def is_abbreviated(self) -> bool:
        """Whether some token is a single-letter initial ("J. Doe")."""
        return self.initials > 0


#: How many names `name_form` remembers: a pass forms a merged entity's names again.
_FORM_MEMO: Final = 1 << 17


@lru_cache(maxsize=_FORM_MEMO)
def name_form(name: str) -> NameForm:
    """Fold and tokenize `name`, setting aside titles (never every token); remembered.

    "Surname, Given" (one comma, something on each side) is read as
    "Given Surname", so its tokens are in written order like any other name's.
    """
    surname, comma, given = name.partition(",")
    if comma and "," not in given and fold(surname) and fold(given):
        name = f"{given} {surname}"
    tokens = tuple(fold(name).split())
    kept = tuple(token for token in tokens if token not in TITLES) or tokens
    letters = sum(len(token) for token in kept)
    initials = sum(1 for token in kept if len(token) == 1)
    text = " ".join(kept)
    return NameForm(
        tokens=kept,
        text=text,
        sorted_text=" ".join(sorted(kept)),
        letters=letters,
        initials=initials,
        ascii=text.isascii(),
    )


#: How many token pairs `token_similarity` remembers: a pass compares the same tokens often.
_TOKEN_MEMO: Final = 1 << 17


@lru_cache(maxsize=_TOKEN_MEMO)
def token_similarity(left: str, right: str) -> float:
    """How alike two tokens are: `1.0` equal, `INITIAL_MATCH` an initial of the other, else JW."""
    if left == right:
        return 1.0
    if len(left) == 1 or len(right) == 1:
        return INITIAL_MATCH if left[0] == right[0] else 0.0
    return jaro_winkler(left, right)


def _aligned(left: tuple[str, ...], right: tuple[str, ...]) -> float:
    """Mean best one-to-one token match, over the shorter name's tokens, greedily."""
    shorter, longer = (left, right) if len(left) <= len(right) else (right, left)
    unmatched = len(longer) - len(shorter)
    if len(shorter) == 1:
        only, best = shorter[0], 0.0
        for token in longer:  # a loop, not max() over a generator: this runs millions of times
            similarity = token_similarity(only, token)
            if similarity > best:
                best = similarity
        return max(0.0, best - UNMATCHED_TOKEN * unmatched)
    if len(longer) == 2:
        (a, b), (c, d) = shorter, longer
        straight = token_similarity(a, c) + token_similarity(b, d)
        crossed = token_similarity(a, d) + token_similarity(b, c)
        return max(straight, crossed) / 2
    # Greedy one-to-one: the best free pair first, ties to the earliest (shorter's, longer's).
    grid = [[token_similarity(a, b) for b in longer] for a in shorter]
    free = [True] * len(longer)
    rows = list(range(len(shorter)))
    total = 0.0
    for _ in shorter:
        best, row_at, column_at = -1.0, 0, 0
        for i in rows:
            for j, similarity in enumerate(grid[i]):
                if similarity > best and free[j]:
                    best, row_at, column_at = similarity, i, j
        rows.remove(row_at)
        free[column_at] = False
        total += best
    return max(0.0, total / len(shorter) - UNMATCHED_TOKEN * unmatched)


def _abbreviated(left: tuple[str, ...], right: tuple[str, ...]) -> float:
    """Token match in written order, so "W. Mason" is not a form of "Mason Worsley"."""
    if len(left) != len(right):
        return _aligned(left, right)
    return sum(token_similarity(a, b) for a, b in zip(left, right, strict=True)) / len(left)


def name_similarity(left: NameForm, right: NameForm) -> float:
    """How alike two names are, on `0..1`, whatever their token order.

    The best of: Jaro-Winkler of the folded names, of their sorted tokens,
    and the mean one-to-one token match (an initial scores `INITIAL_MATCH`
    against a token it starts), less `UNMATCHED_TOKEN` for each token of the
    longer name left over: "Doe" scores `0.9` against "John Doe". Only
    names with equal sorted tokens score `1.0`. When either name has an
    initial, only the token match counts, in written order when both have
    as many tokens (so "W. Mason" is far from "Mason Worsley"); the
    whole-string measures would reward a shared surname. Two empty names
    score `0.0`.
    """
    if not left.tokens or not right.tokens:
        return 0.0
    if left.initials or right.initials:
        return _abbreviated(left.tokens, right.tokens)
    if left.sorted_text == right.sorted_text:
        return 1.0
    if len(left.tokens) == 1 and len(right.tokens) == 1:
        return token_similarity(left.text, right.text)
    # `jaro_winkler` without its checks: both texts are non-empty, and ASCII or not as a whole.
    measure = _RAPID_JARO_WINKLER if left.ascii and right.ascii else _jellyfish_jaro_winkler
    whole = measure(left.text, right.text)
    if left.text != left.sorted_text or right.text != right.sorted_text:
        reordered = measure(left.sorted_text, right.sorted_text)
        if reordered > whole:
            whole = reordered
    aligned = _aligned(left.tokens, right.tokens)
    return whole if whole >= aligned else aligned
