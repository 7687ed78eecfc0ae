"""One consolidation pass over prepared profiles: candidates, bands, questions, clusters.

No store is touched here: the caller hands in the entities and their
profiles and gets back which positions form one thing. Deterministic for a
given input order and a deterministic adjudicator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from redstring.consolidation.adjudicator import MergeQuestion, MergeVerdict
from redstring.consolidation.ambiguity import settle_ambiguity
from redstring.consolidation.candidates import CANDIDATE_LIMIT, candidate_pairs
from redstring.consolidation.clustering import DisjointSets
from redstring.consolidation.collector import collector_paused, collector_resumed
from redstring.consolidation.features import (
    Population,
    PropertyKind,
    compare,
    compare_properties,
)
from redstring.consolidation.forking import can_fork, check_workers, fork_map
from redstring.consolidation.memo import PassMemo
from redstring.consolidation.policy import (
    Assessment,
    MergeBand,
    MergePolicy,
    assess,
    name_ceiling,
    score_ceiling,
)

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from redstring.consolidation.adjudicator import MergeAdjudicator
    from redstring.consolidation.features import Profile, _NameEvidence
    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId

#: How many questions go to the adjudicator in one call.
QUESTION_BATCH: Final = 50

#: How many bits short of the merge band a pair's score must fall to settle it apart.
SETTLED_MARGIN: Final = 4.0

#: A name at least this similar to an abbreviated one is a full form of it.
_INITIAL_COMPATIBLE: Final = 0.9


@dataclass(frozen=True, slots=True)
class Link:
    """A pair the pass joined: positions `left < right`, its score, why, and its band.

    `band` is `MERGE` for a pair merged outright, `ASK` for one the
    adjudicator answered "same".
    """

    left: int
    right: int
    score: float
    reason: str
    band: MergeBand = MergeBand.MERGE


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


def _initialled(left: Profile, right: Profile) -> bool:
    """Whether either's own name has an initial: the pairs `_unambiguous_initials` reads."""
    return left.name.is_abbreviated or right.name.is_abbreviated


def _unambiguous_initials(
    profiles: Sequence[Profile], names: Mapping[tuple[int, int], float]
) -> set[tuple[int, int]]:
    """Pairs joining an abbreviated name to the only full name compatible with it.

    `names` holds each pair's name similarity.
    """
    full_forms: dict[int, dict[str, list[tuple[int, int]]]] = {}
    for (i, j), name in names.items():
        if name < _INITIAL_COMPATIBLE:
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


class _Conflicts:
    """What each cluster holds of identifiers and measures, so closure never joins a conflict.

    A link is refused when the two clusters hold different values of one
    identifier, or values of one measure further apart than the tolerance:
    transitive closure would otherwise join through a third entity what a
    direct comparison keeps apart (ADR 0072).
    """

    def __init__(
        self, profiles: Sequence[Profile], population: Population, tolerance: float
    ) -> None:
        self._profiles, self._population, self._tolerance = profiles, population, tolerance
        # Each joined cluster's values by its root; a root never joined holds its profile's.
        self._held: dict[int, dict[str, tuple[float, float] | str]] = {}

    def _values(self, root: int) -> dict[str, tuple[float, float] | str]:
        """What the cluster rooted at `root` holds: read from its profile until it first joins."""
        found = self._held.get(root)
        if found is not None:
            return found
        held: dict[str, tuple[float, float] | str] = {}
        profile = self._profiles[root]
        for key, value in profile.properties.items():
            kind = self._population.kind(key)
            if kind is PropertyKind.IDENTIFIER:
                held[key] = value
            elif kind is PropertyKind.MEASURE and key in profile.numbers:
                number = profile.numbers[key]
                held[key] = (number, number)
        return held

    def join(self, sets: DisjointSets, left: int, right: int) -> bool:
        """Join the clusters of `left` and `right` unless they conflict; whether they joined."""
        roots = sets.find(left), sets.find(right)
        if roots[0] == roots[1]:
            return False
        a, b = self._values(roots[0]), self._values(roots[1])
        merged = dict(a)
        for key, y in b.items():
            x = merged.get(key)
            if x is None:
                merged[key] = y
            elif isinstance(x, str) or isinstance(y, str):
                if x != y:
                    return False
            else:
                low, high = min(x[0], y[0]), max(x[1], y[1])
                if high != low and (high - low) / max(abs(low), abs(high)) > self._tolerance:
                    return False
                merged[key] = (low, high)
        sets.union(left, right)
        for root in roots:
            self._held.pop(root, None)
        self._held[sets.find(left)] = merged
        return True


def _judgement(
    profiles: Sequence[Profile], population: Population, policy: MergePolicy
) -> tuple[object, ...]:
    """What a pair's settling assumed besides its two profiles: the policy and the kinds."""
    keys = sorted({key for profile in profiles for key in profile.properties})
    return (policy, tuple((key, population.kind(key)) for key in keys))


def _settle_below(policy: MergePolicy) -> float:
    """The score below which an assessed pair is settled apart for the rest of the pass.

    Below the ask band, and `SETTLED_MARGIN` bits short of the weakest
    rival the ambiguity check reads (`policy.ambiguity_margin` bits below
    the merge band), so a settled pair neither merges nor makes a merge
    ambiguous:
    what moves between rounds for a pair whose profiles did not change is
    the pass's counts (value frequencies, token rarity), worth a fraction of
    a bit when a round merges a fifth of the tenant.
    """
    if policy.merge_at <= 0.0:
        return 0.0
    if policy.merge_at >= 1.0:
        return policy.ask_at
    merge_bits = math.log2(policy.merge_at / (1.0 - policy.merge_at))
    below = merge_bits - max(policy.ambiguity_margin, 0.0) - SETTLED_MARGIN
    return min(policy.ask_at, 1.0 / (1.0 + math.pow(2.0, -below)))


#: The fewest candidate pairs a round spreads over forked workers; fewer cost more to fork.
PARALLEL_PAIRS: Final = 20_000


@dataclass(frozen=True, slots=True)
class _Judge:
    """What every pair of one round is judged by, besides the memo."""

    profiles: Sequence[Profile]
    population: Population
    policy: MergePolicy
    settle_below: float
    names_add: float
    bare: bool
    unambiguous: set[tuple[int, int]]


@dataclass(slots=True)
class _ShareOutcome:
    """What scoring one share of a round's pairs found, as plain values a pipe carries.

    Pairs are positions in the round's list of pairs. `kept` holds the
    pairs in the merge or ask band (position, score, band, reason);
    `settled` the pairs settled apart; `evidence` the name evidence of
    every other pair whose names were measured or read.
    """

    kept: list[tuple[int, float, str, str]] = field(default_factory=list)
    settled: list[int] = field(default_factory=list)
    evidence: list[tuple[int, _NameEvidence]] = field(default_factory=list)


class _Recorded:
    """The memo as `compare` reads it, remembering the last name evidence it gave."""

    __slots__ = ("_memo", "last")

    def __init__(self, memo: PassMemo) -> None:
        self._memo = memo
        self.last: _NameEvidence | None = None

    def evidence(self, left: Profile, right: Profile, single: bool) -> _NameEvidence:
        """The memo's name evidence of the pair, kept as `last`."""
        self.last = found = self._memo.evidence(left, right, single)
        return found


def _shares(workers: int, pairs: Sequence[tuple[int, int]], profiles: Sequence[Profile]) -> int:
    """How many shares a round's pairs are scored in: `workers` for a large round, else one.

    Profiles must be distinct objects to share: the memo keys on them, and a
    profile at two positions would let one share's settling skip a pair of
    another's.
    """
    if workers <= 1 or len(pairs) < PARALLEL_PAIRS or not can_fork():
        return 1
    return workers if len({id(profile) for profile in profiles}) == len(profiles) else 1


def _assess_share(
    judge: _Judge, pairs: Sequence[tuple[int, int]], memo: PassMemo, share: int, shares: int
) -> _ShareOutcome:
    """Assess every `shares`-th pair from `share` on, settling in `memo` as it goes.

    Share 0 runs in the caller's process, so only the others record what
    they settle and measure for `fold_in`.
    """
    profiles, population, policy = judge.profiles, judge.population, judge.policy
    tolerance, settle_below = policy.measure_tolerance, judge.settle_below
    outcome = _ShareOutcome()
    record = share > 0
    reader = _Recorded(memo)
    whole, apart, settle = population.single_token_names, memo.settled_keys(), memo.settle_key
    for n in range(share, len(pairs), shares):
        i, j = pairs[n]
        left, right = profiles[i], profiles[j]
        key = (id(left), id(right), whole(left.entity_type))
        if key in apart:  # `memo.settled`, without its call per pair
            continue
        properties = compare_properties(left, right, population, tolerance)
        vectors = left.vector is not None and right.vector is not None
        shared = len(left.neighbours & right.neighbours) if left.neighbours else 0
        if (properties or shared or judge.bare) and score_ceiling(
            properties, shared, vectors, policy, judge.names_add
        ) < settle_below:
            settle(key)
            if record:
                outcome.settled.append(n)
            continue
        features = compare(
            left,
            right,
            population,
            measure_tolerance=tolerance,
            memo=reader,
            properties=properties,
        )
        assessment = assess(features, policy, unambiguous_initial=(i, j) in judge.unambiguous)
        if assessment.score < settle_below:
            settle(key)
            if record:
                outcome.settled.append(n)
        elif record and reader.last is not None:
            outcome.evidence.append((n, reader.last))
        if assessment.band is not MergeBand.APART:
            outcome.kept.append((n, assessment.score, assessment.band.value, assessment.reason))
    return outcome


def _assessed(
    judge: _Judge, pairs: Sequence[tuple[int, int]], memo: PassMemo, shares: int
) -> dict[tuple[int, int], Assessment]:
    """The round's pairs in the merge or ask band, in the order of `pairs` (ADR 0117).

    In `shares` shares, each but the first in a forked child; what a child
    settled and measured is folded into `memo` as if measured here.
    """
    profiles, population = judge.profiles, judge.population
    kept: list[tuple[int, float, str, str]] = []
    for outcome, forked in fork_map(
        lambda share: _assess_share(judge, pairs, memo, share, shares), shares
    ):
        if forked:
            memo.fold_in(
                (
                    (profiles[pairs[n][0]], profiles[pairs[n][1]], found)
                    for n, found in outcome.evidence
                ),
                ((profiles[pairs[n][0]], profiles[pairs[n][1]]) for n in outcome.settled),
                population,
            )
        kept.extend(outcome.kept)
    if shares > 1:
        kept.sort()
    return {
        pairs[n]: Assessment(score=score, band=MergeBand(band), reason=reason)
        for n, score, band, reason in kept
    }


async def resolve_profiles(
    entities: Sequence[Entity],
    profiles: Sequence[Profile],
    *,
    policy: MergePolicy,
    adjudicator: MergeAdjudicator | None = None,
    focus: Collection[EntityId] | None = None,
    limit: int = CANDIDATE_LIMIT,
    property_kinds: Mapping[str, PropertyKind] | None = None,
    memo: PassMemo | None = None,
    workers: int = 1,
) -> Resolution:
    """Decide which of `entities` (with their `profiles`, position for position) are one.

    Pairs in the merge band are joined; pairs in the ask band go to the
    adjudicator best score first, `QUESTION_BATCH` at a time, skipping any
    pair already joined through others; the rest stay apart. With `focus`,
    only pairs with at least one focused entity are considered.
    `property_kinds` overrides the kind the pass would decide for a key.
    `memo` keeps the blocking keys, rankings and name evidence measured for
    the next round of the same pass (a fresh one per round without it), and
    the pairs settled apart: assessed `SETTLED_MARGIN` bits short of the
    merge band and below the ask band, they stay apart unmeasured while
    their two profiles, the policy and the property kinds stand (ADR 0100).
    A pair whose properties, neighbours and vectors keep it below that mark
    whatever its names could add (`score_ceiling`) is settled without
    measuring its names (ADR 0109). With `workers` above one, a large
    round's pairs are scored in that many processes, all but this one
    forked for the round, to the same result (ADR 0117).

    Raises:
        ValueError: `entities` and `profiles` differ in length, or `workers`
            is not an int from 1 to `MAX_WORKERS`.
    """
    check_workers(workers)
    if len(entities) != len(profiles):
        raise ValueError(
            f"entities and profiles must pair up, got {len(entities)} and {len(profiles)}"
        )
    with collector_paused():
        memo = PassMemo() if memo is None else memo
        population = memo.population(profiles, kinds=property_kinds)
        pairs = candidate_pairs(profiles, focus=focus, limit=limit, memo=memo, threads=workers)
        initialled = [(i, j) for i, j in pairs if _initialled(profiles[i], profiles[j])]
        unambiguous = _unambiguous_initials(profiles, memo.names(profiles, initialled, population))
        memo.judge(_judgement(profiles, population, policy))
        settle_below = _settle_below(policy)
        names_add = name_ceiling(policy)
        # Without properties or neighbours only a vector's bits (never against) are left.
        bare = score_ceiling((), 0, False, policy, names_add) < settle_below
        judge = _Judge(
            profiles=profiles,
            population=population,
            policy=policy,
            settle_below=settle_below,
            names_add=names_add,
            bare=bare,
            unambiguous=unambiguous,
        )
        assessed = _assessed(judge, pairs, memo, _shares(workers, pairs, profiles))
        assessed = settle_ambiguity(assessed, profiles, population, policy)
        sets = DisjointSets(len(profiles))
        guard = _Conflicts(profiles, population, policy.measure_tolerance)
        resolution = Resolution(clusters=[], candidates=len(pairs))
        merging = sorted(
            (pair for pair, assessment in assessed.items() if assessment.band is MergeBand.MERGE),
            key=lambda pair: (-assessed[pair].score, pair),
        )
        for i, j in merging:
            if guard.join(sets, i, j):
                resolution.links.append(Link(i, j, assessed[i, j].score, assessed[i, j].reason))
    if adjudicator is not None:
        await _adjudicate(entities, assessed, sets, guard, adjudicator, resolution)
    with collector_paused():
        resolution.clusters = sets.groups()
    return resolution


async def _adjudicate(
    entities: Sequence[Entity],
    assessed: dict[tuple[int, int], Assessment],
    sets: DisjointSets,
    guard: _Conflicts,
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
        with collector_resumed():
            answers: Sequence[MergeVerdict | None] = await adjudicator.adjudicate(questions)
        if len(answers) != len(batch):
            answers = [None] * len(batch)
        resolution.asked += len(batch)
        for (i, j), answer in zip(batch, answers, strict=True):
            if not isinstance(answer, MergeVerdict):
                resolution.unanswered += 1
            elif answer.same and guard.join(sets, i, j):
                reason = f"{assessed[i, j].reason}; adjudicated: {answer.reason or 'same'}"
                resolution.links.append(Link(i, j, assessed[i, j].score, reason, MergeBand.ASK))
        doubtful = rest
