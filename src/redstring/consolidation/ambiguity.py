"""A record as close to two things kept apart merges with neither, unless one clearly wins.

Pure. A pair's score says how alike two records are, not whether a third
record is as alike: a respelled "Kolārs" is one edit from both Kolār and
Kolāras, and a mention by the alias "Muehlhausen" is one letter from the
town of Mühlhausen. When the two it is close to are kept apart (they
conflict, or neither lists the other's name), the pass cannot tell which one
it names, and closure would otherwise join all three through it. See
[ADR 0098](../adr/0098-a-record-between-two-places-merges-with-neither.md).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from redstring.consolidation.features import PropertyKind, unconfirmed_names
from redstring.consolidation.policy import MergeBand

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from redstring.consolidation.features import Population, Profile
    from redstring.consolidation.policy import Assessment, MergePolicy

#: The bits a score of `1.0` stands for (a float cannot say more than about 53).
_SURE: Final = 60.0


def _bits(score: float) -> float:
    """The log-odds, in bits, that `score` is the logistic of."""
    if score >= 1.0:
        return _SURE
    if score <= 0.0:
        return -_SURE
    return math.log2(score / (1.0 - score))


def kept_apart(left: Profile, right: Profile, population: Population, tolerance: float) -> bool:
    """Whether the evidence keeps two records apart whatever their names say.

    They hold different values of one identifier, values of one measure
    further apart than `tolerance` (relative to the larger), or, where their
    type's names are whole, both list names and neither lists the other's.
    """
    for key in left.properties.keys() & right.properties.keys():
        kind = population.kind(key)
        if kind is PropertyKind.IDENTIFIER and left.properties[key] != right.properties[key]:
            return True
        x, y = left.numbers.get(key), right.numbers.get(key)
        if kind is not PropertyKind.MEASURE or x is None or y is None or x == y:
            continue
        if abs(x - y) / max(abs(x), abs(y)) > tolerance:
            return True
    return population.single_token_names(left.entity_type) and unconfirmed_names(left, right)


def settle_ambiguity(
    assessed: Mapping[tuple[int, int], Assessment],
    profiles: Sequence[Profile],
    population: Population,
    policy: MergePolicy,
) -> dict[tuple[int, int], Assessment]:
    """`assessed` with each ambiguous merge-band pair moved to the ask band.

    A merge-band pair `(i, j)` is ambiguous when `i` (or `j`) has another
    candidate `k` scoring at least `policy.ask_at` with it, within
    `policy.ambiguity_margin` bits of the pair's own evidence or above it,
    and `k` is kept apart from `j` (`kept_apart`). The reason names `k`.
    Pairs outside the merge band are returned as they are.
    """
    contenders: dict[int, list[tuple[float, int]]] = {}
    for (i, j), assessment in assessed.items():
        if assessment.score >= policy.ask_at:
            bits = _bits(assessment.score)
            contenders.setdefault(i, []).append((bits, j))
            contenders.setdefault(j, []).append((bits, i))
    apart: dict[tuple[int, int], bool] = {}

    def separated(a: int, b: int) -> bool:
        key = (a, b) if a < b else (b, a)
        found = apart.get(key)
        if found is None:
            found = apart[key] = kept_apart(
                profiles[a], profiles[b], population, policy.measure_tolerance
            )
        return found

    settled = dict(assessed)
    for (i, j), assessment in assessed.items():
        if assessment.band is not MergeBand.MERGE:
            continue
        floor = _bits(assessment.score) - policy.ambiguity_margin
        rival = next(
            (
                (middle, k)
                for middle, other in ((i, j), (j, i))
                for bits, k in contenders[middle]
                if k != other and bits > floor and separated(other, k)
            ),
            None,
        )
        if rival is not None:
            middle, k = rival
            other = j if middle == i else i
            settled[i, j] = replace(
                assessment,
                band=MergeBand.ASK,
                reason=(
                    f"{assessment.reason}; ambiguous: {profiles[middle].name.text!r} is as close"
                    f" to {profiles[k].name.text!r}, kept apart from"
                    f" {profiles[other].name.text!r}"
                ),
            )
    return settled
