"""One consolidation pass over prepared profiles: candidates, bands, questions, clusters.

No store is touched here: the caller hands in the entities and their
profiles and gets back which positions form one thing. Deterministic for a
given input order and a deterministic adjudicator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from redstring.consolidation.adjudicator import MergeQuestion, MergeVerdict
from redstring.consolidation.candidates import CANDIDATE_LIMIT, candidate_pairs
from redstring.consolidation.clustering import DisjointSets
from redstring.consolidation.features import Population, compare
from redstring.consolidation.policy import Assessment, MergeBand, MergePolicy, assess

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from redstring.consolidation.adjudicator import MergeAdjudicator
    from redstring.consolidation.features import PairFeatures, Profile
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

#: How many questions go to the adjudicator in one call.
QUESTION_BATCH: Final = 50

#: A name at least this similar to an abbreviated one is a full form of it.
_INITIAL_COMPATIBLE: Final = 0.9


@dataclass(frozen=True, slots=True)
class Link:
    """A pair the pass joined: positions `left < right`, its score, and why."""

    left: int
    right: int
    score: float
    reason: str


@dataclass(slots=True)
class Resolution:
    """What a pass decided: clusters of positions, and the links that formed them.

    `clusters` leaves singletons out; each is sorted and they are ordered by
    their smallest member. `links` holds every joining link, merged outright
    or answered "same", in the order they were applied.
    """

    clusters: list[list[int]]
    links: list[Link] = field(default_factory=list)
    candidates: int = 0
    asked: int = 0
    unanswered: int = 0


def _unambiguous_initials(
    profiles: Sequence[Profile], scored: dict[tuple[int, int], PairFeatures]
) -> set[tuple[int, int]]:
    """Pairs joining an abbreviated name to the only full name compatible with it."""
    full_forms: dict[int, dict[str, list[tuple[int, int]]]] = {}
    for (i, j), features in scored.items():
        if features.name < _INITIAL_COMPATIBLE:
            continue
        for short, full in ((i, j), (j, i)):
            short_name, full_name = profiles[short].name, profiles[full].name
            if short_name.is_abbreviated and not (full_name.is_abbreviated or full_name.is_weak):
                forms = full_forms.setdefault(short, {})
                forms.setdefault(full_name.sorted_text, []).append((i, j))
    unambiguous: set[tuple[int, int]] = set()
    for forms in full_forms.values():
        if len(forms) == 1:
            [pairs] = forms.values()
            unambiguous.update(pairs)
    return unambiguous


async def resolve_profiles(
    entities: Sequence[Entity],
    profiles: Sequence[Profile],
    *,
    policy: MergePolicy,
    adjudicator: MergeAdjudicator | None = None,
    focus: Collection[EntityId] | None = None,
    limit: int = CANDIDATE_LIMIT,
) -> Resolution:
    """Decide which of `entities` (with their `profiles`, position for position) are one.

    Pairs in the merge band are joined; pairs in the ask band go to the
    adjudicator best score first, `QUESTION_BATCH` at a time, skipping any
    pair already joined through others; the rest stay apart. With `focus`,
    only pairs with at least one focused entity are considered.

    Raises:
        ValueError: `entities` and `profiles` differ in length.
    """
    if len(entities) != len(profiles):
        raise ValueError(
            f"entities and profiles must pair up, got {len(entities)} and {len(profiles)}"
        )
    population = Population.of(profiles)
    pairs = candidate_pairs(profiles, focus=focus, limit=limit)
    scored = {pair: compare(profiles[pair[0]], profiles[pair[1]], population) for pair in pairs}
    unambiguous = _unambiguous_initials(profiles, scored)
    assessed: dict[tuple[int, int], Assessment] = {
        pair: assess(features, policy, unambiguous_initial=pair in unambiguous)
        for pair, features in scored.items()
    }
    sets = DisjointSets(len(profiles))
    resolution = Resolution(clusters=[], candidates=len(pairs))
    for (i, j), assessment in assessed.items():
        if assessment.band is MergeBand.MERGE and sets.union(i, j):
            resolution.links.append(Link(i, j, assessment.score, assessment.reason))
    if adjudicator is not None:
        await _adjudicate(entities, assessed, sets, adjudicator, resolution)
    resolution.clusters = sets.groups()
    return resolution


async def _adjudicate(
    entities: Sequence[Entity],
    assessed: dict[tuple[int, int], Assessment],
    sets: DisjointSets,
    adjudicator: MergeAdjudicator,
    resolution: Resolution,
) -> None:
    doubtful = sorted(
        (pair for pair, assessment in assessed.items() if assessment.band is MergeBand.ASK),
        key=lambda pair: (-assessed[pair].score, pair),
    )
    while doubtful:
        batch: list[tuple[int, int]] = []
        rest: list[tuple[int, int]] = []
        for pair in doubtful:
            if sets.find(pair[0]) == sets.find(pair[1]):
                continue
            (batch if len(batch) < QUESTION_BATCH else rest).append(pair)
        if not batch:
            return
        questions = [
            MergeQuestion(
                left=entities[i],
                right=entities[j],
                score=assessed[i, j].score,
                reason=assessed[i, j].reason,
            )
            for i, j in batch
        ]
        answers: Sequence[MergeVerdict | None] = await adjudicator.adjudicate(questions)
        if len(answers) != len(batch):
            answers = [None] * len(batch)
        resolution.asked += len(batch)
        for (i, j), answer in zip(batch, answers, strict=True):
            if not isinstance(answer, MergeVerdict):
                resolution.unanswered += 1
            elif answer.same and sets.union(i, j):
                reason = f"{assessed[i, j].reason}; adjudicated: {answer.reason or 'same'}"
                resolution.links.append(Link(i, j, assessed[i, j].score, reason))
        doubtful = rest
