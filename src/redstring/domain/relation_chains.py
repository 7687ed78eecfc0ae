"""A question's chain of relations, read as steps over the five basic relations of people.

"Who is the sister of the uncle of the son of X?" and "X's son's uncle's
sister: who is that?" ask the same thing: start at X, take the son, his
uncle, then her sister. `read_relation_chain` reads such a chain from the
words of a query, innermost relation first, and spells each relation as
steps over five basic relations: `parent`, `child`, `sibling`, `spouse` and
`friend`, each step perhaps asking for one gender.

The terms are those of English kinship, composed by its own rules, not a
list of phrases: a generation word (`parent`, `child`, their gendered and
familiar forms) takes `grand` (one more generation) and any number of
`great` (one more each); `aunt`, `uncle`, `niece` and `nephew` are a
parent's or a child's generation across a sibling (or a sibling's spouse);
a cousin of degree `n` (first, second, ...) is `n` generations up, a
sibling, `n` down, and `once`/`twice`/`n times removed` one generation
further either way; `-in-law` joins a spouse on the side the relation
reaches from; `female`/`male` before a term asks its last step's gender.
A word that names no relation ends nothing: the chain is the relation
terms in the order the query composes them, `of` (the outer relation
first) or the possessive `'s` (the inner first).

`relation_of_type` tells which basic relation a graph's relationship type
states: a type whose words, beside its filler (`of`, `to`, `has`, `is`:
`TYPE_FILLER`), are one form of it, read from its target's side when it
says `of` ("X mother Y" and "X has_mother Y": Y is X's mother; "X
mother_of Y": X is Y's mother). See ADR 0126.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

from redstring.domain.query_linking import TYPE_FILLER, type_words

if TYPE_CHECKING:
    from collections.abc import Iterable

#: The five basic relations a chain's steps are made of.
BASIC_RELATIONS: Final = ("parent", "child", "sibling", "spouse", "friend")

#: Each basic relation's forms, by the gender they ask (`None`: any).
_FORMS: Final[dict[str, dict[str | None, tuple[str, ...]]]] = {
    "parent": {
        None: ("parent",),
        "female": ("mother", "mom", "mum", "mommy", "mummy", "mama"),
        "male": ("father", "dad", "daddy", "papa"),
    },
    "child": {
        None: ("child", "children", "kid"),
        "female": ("daughter",),
        "male": ("son",),
    },
    "sibling": {
        None: ("sibling",),
        "female": ("sister",),
        "male": ("brother",),
    },
    "spouse": {None: ("spouse", "married"), "female": ("wife", "wives"), "male": ("husband",)},
    "friend": {None: ("friend", "pal", "buddy", "buddies", "chum")},
}

#: Every form's word, to its relation and gender.
_WORDS: Final = {
    word: (relation, gender)
    for relation, by_gender in _FORMS.items()
    for gender, words in by_gender.items()
    for word in words
}

#: The grand- forms, to their relation (`parent` two up, `child` two down) and gender:
#: "grand" before each parent or child form, and the forms that spell it otherwise.
_GRAND: Final = {
    **{
        "grand" + word: (relation, gender)
        for word, (relation, gender) in _WORDS.items()
        if relation in ("parent", "child")
    },
    "grandma": ("parent", "female"),
    "granny": ("parent", "female"),
    "grandpa": ("parent", "male"),
    "grandad": ("parent", "male"),
}

#: Across a sibling: the generations' direction and the gender of the relation's end.
_COLLATERAL: Final = {
    "aunt": ("parent", "female"),
    "aunty": ("parent", "female"),
    "auntie": ("parent", "female"),
    "uncle": ("parent", "male"),
    "niece": ("child", "female"),
    "nephew": ("child", "male"),
}

_COUSINS: Final = ("cousin",)
_ORDINALS: Final = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3}
_TIMES: Final = {"once": 1, "twice": 2, "thrice": 3}
_NUMBERS: Final = {"two": 2, "three": 3, "2": 2, "3": 3}
_GENDERS: Final = frozenset({"female", "male"})
_KNOWN: Final = frozenset((*_WORDS, *_GRAND, *_COLLATERAL, *_COUSINS))
_TOKEN: Final = re.compile(r"['\u2019][sS]\b|[^\W_]+")
#: The most "great"s one term may hold, so a term's steps stay bounded.
MAX_GREATS: Final = 8


class Step(NamedTuple):
    """One basic relation followed from an entity, perhaps asking its end's gender."""

    relation: str
    gender: str | None = None


#: One relation term: the ways to spell it in steps (any of them reaches it).
type Term = tuple[tuple[Step, ...], ...]


class RelationChain(NamedTuple):
    """A query's relation terms, innermost first, with the query span of each."""

    terms: tuple[Term, ...]
    spans: tuple[tuple[int, int], ...]

    def outside(self, spans: Iterable[tuple[int, int]]) -> RelationChain:
        """The chain without the terms read inside any of `spans` (`start, end` of the query).

        A word of a name the query links ("Will Son") is the name's, not a
        relation: the caller passes the linked names' spans.

        Raises:
            ValueError: a span is not a pair of integers.
        """
        taken = list(spans)
        for span in taken:
            if (
                not isinstance(span, tuple)
                or len(span) != 2
                or not all(isinstance(end, int) and not isinstance(end, bool) for end in span)
            ):
                raise ValueError(f"a span must be a (start, end) pair of integers, got {span!r}")
        kept = [
            (term, (start, end))
            for term, (start, end) in zip(self.terms, self.spans, strict=True)
            if not any(start < other_end and other_start < end for other_start, other_end in taken)
        ]
        return RelationChain(
            terms=tuple(term for term, _ in kept), spans=tuple(span for _, span in kept)
        )


def _generations(relation: str, count: int, gender: str | None) -> tuple[Step, ...]:
    """`count` steps of `relation`, the last asking `gender`."""
    return (*(Step(relation) for _ in range(count - 1)), Step(relation, gender))


def _in_law(steps: tuple[Step, ...]) -> Term:
    """By marriage: a spouse's parent, a child's spouse, a sibling's spouse, a spouse's sibling."""
    *inner, last = steps
    married = (*inner, Step(last.relation), Step("spouse", last.gender))
    if last.relation == "parent":
        return ((Step("spouse"), *steps),)
    if last.relation == "child":
        return (married,)
    return ((Step("spouse"), *steps), married)


def _cousin(degree: int, removed: int, gender: str | None) -> Term:
    up = tuple(Step("parent") for _ in range(degree))
    down = _generations("child", degree + removed, gender)
    spelled = [(*up, Step("sibling"), *down)]
    if removed:
        higher = tuple(Step("parent") for _ in range(degree + removed))
        spelled.append((*higher, Step("sibling"), *_generations("child", degree, gender)))
    return tuple(spelled)


def _term_at(words: list[str], index: int) -> tuple[Term | None, int]:
    """The relation term starting at `words[index]` and the index just past it.

    With no term there (`None`), the index is past the words read looking
    for one, so "great-friend" is not read again as "friend".
    """
    at = index
    gender = words[at] if words[at] in _GENDERS else None
    if gender is not None:
        at += 1
    greats = 0
    while at < len(words) and words[at] == "great":
        greats += 1
        at += 1
    if at >= len(words) or greats > MAX_GREATS:
        return None, at + 1
    word = _singular(words[at])
    following = _singular(words[at + 1]) if at + 1 < len(words) else ""
    if word in _ORDINALS and greats == 0 and following in _COUSINS:
        return _cousin_at(words, at + 1, _ORDINALS[word], gender)
    term: Term | None = None
    if word == "grand" and following in _COLLATERAL:
        greats += 1
        at += 1
        word = following
    if word in _WORDS and greats == 0:
        relation, own = _WORDS[word]
        term = ((Step(relation, gender or own),),)
    elif word in _GRAND:
        relation, own = _GRAND[word]
        term = (_generations(relation, 2 + greats, gender or own),)
    elif word in _COLLATERAL:
        direction, own = _COLLATERAL[word]
        term = _collateral(direction, 1 + greats, gender or own)
    elif word in _COUSINS and greats == 0:
        return _cousin_at(words, at, 1, gender)
    at += 1
    if term is None:
        return None, at
    if words[at : at + 2] == ["in", "law"]:
        at += 2
        if len(term) != 1 or term[0][-1].relation == "friend":
            return None, at
        term = _in_law(term[0])
    return term, at


def _singular(word: str) -> str:
    """`word`, or its singular when only that is a known term ("uncles", "dads")."""
    if word in _KNOWN or not word.endswith("s") or word[:-1] not in _KNOWN:
        return word
    return word[:-1]


def _collateral(direction: str, generations: int, gender: str | None) -> Term:
    """An aunt or uncle (`parent`), a niece or nephew (`child`): across a sibling or its spouse."""
    if direction == "parent":
        ups = tuple(Step("parent") for _ in range(generations))
        return ((*ups, Step("sibling", gender)), (*ups, Step("sibling"), Step("spouse", gender)))
    down = _generations("child", generations, gender)
    return ((Step("sibling"), *down), (Step("spouse"), Step("sibling"), *down))


def _cousin_at(words: list[str], at: int, degree: int, gender: str | None) -> tuple[Term, int]:
    """A cousin of `degree` at `words[at]`, its removal read after it."""
    at += 1
    removed = 0
    if at + 1 < len(words) and words[at] in _TIMES and words[at + 1] == "removed":
        removed, at = _TIMES[words[at]], at + 2
    elif (
        at + 2 < len(words)
        and words[at] in _NUMBERS
        and words[at + 1 : at + 3] == ["times", "removed"]
    ):
        removed, at = _NUMBERS[words[at]], at + 3
    return _cousin(degree, removed, gender), at


def read_relation_chain(query: str) -> RelationChain:
    """The relation terms of `query`, innermost first, with their character spans.

    A term is read at a word (its longest form: "female first cousin once
    removed", "great-grandmother", "father-in-law"); terms are in the
    query's order when more of them are followed by a possessive `'s`
    than by `of`, else reversed ("the A of the B of X" asks B, then A).
    A query with no relation term gives an empty chain.

    Raises:
        ValueError: `query` is not a string.
    """
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {query!r}")
    tokens = [(match.start(), match.end()) for match in _TOKEN.finditer(query)]
    words = [_fold(query[start:end]) for start, end in tokens]
    found: list[tuple[Term, int, int]] = []
    possessive = of = 0
    index = 0
    while index < len(words):
        start = index
        term, end = _term_at(words, index)
        if term is None:
            index = end
            continue
        found.append((term, tokens[start][0], tokens[end - 1][1]))
        if end < len(words):
            possessive += words[end] == "'s"
            of += words[end] == "of"
        index = end
    if of >= possessive:
        found.reverse()
    return RelationChain(
        terms=tuple(term for term, _, _ in found),
        spans=tuple((start, end) for _, start, end in found),
    )


def _fold(token: str) -> str:
    """A token as terms are spelled: lowercase, the possessive's apostrophe plain."""
    return "'s" if token[0] in "'\u2019" else token.lower()


class StatedRelation(NamedTuple):
    """What a relationship of a type states: its target is its source's `step`.

    With `reversed`, the other way: its source is its target's `step`
    ("X mother_of Y": X is Y's mother).
    """

    step: Step
    reversed: bool = False


def relation_of_type(relationship_type: str) -> StatedRelation | None:
    """The basic relation (and gender) a relationship type states, or `None`.

    `mother` and `has_mother` state `Step("parent", "female")` of their
    source; `MOTHER_OF` the same of their target (`reversed`);
    `grandmother` or `mother_in_law` state none (they are chains, not
    steps).

    Raises:
        ValueError: `relationship_type` is not a string.
    """
    if not isinstance(relationship_type, str):
        raise ValueError(f"relationship_type must be a string, got {relationship_type!r}")
    words = type_words(relationship_type)
    named = {_singular(word) for word in words - TYPE_FILLER}
    if len(named) != 1:
        return None
    [word] = named
    found = _WORDS.get(word)
    if found is None:
        return None
    return StatedRelation(Step(*found), reversed="of" in words)
