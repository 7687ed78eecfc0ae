"""What evidence is worth, and the three bands: merge, ask, leave apart.

Each piece of evidence adds a weight in bits (log2 of how much likelier it
is between two records of one thing than between two of different things);
their sum plus a prior is the log-odds that the pair is one thing, and its
logistic is `score`. The default weights were measured on FEBRL3; see
[ADR 0028](../adr/0028-merges-are-banded-on-weighed-evidence.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from redstring.consolidation.features import Agreement

if TYPE_CHECKING:
    from redstring.consolidation.features import PairFeatures


class MergeBand(StrEnum):
    """What to do with a scored pair. The values are a wire format."""

    MERGE = "merge"
    ASK = "ask"
    APART = "apart"


@dataclass(frozen=True, slots=True)
class MergePolicy:
    """The weights and bands a consolidation pass applies.

    `merge_at` and `ask_at` are on the `score` scale (`0..1`): a pair at or
    above `merge_at` merges, one at or above `ask_at` goes to the adjudicator
    (and is left apart without one), the rest are left apart. Weights are in
    bits. `name_levels` and `weak_name_levels` map a name similarity to a
    weight, the first level whose threshold it reaches. A pair whose names
    are below `min_name_similarity`, or weak (one token, or short) with no
    property or neighbour in agreement, is never merged, only asked about.
    A name with an initial is worth at most `abbreviated_name_max`, plus
    `unambiguous_initial` when it is the only full name its initials fit.

    Raises:
        ValueError: a band is outside `0..1` or `ask_at` exceeds `merge_at`.
    """

    merge_at: float = 0.95
    ask_at: float = 0.3
    prior: float = -3.4
    name_levels: tuple[tuple[float, float], ...] = (
        (1.0, 8.0),
        (0.95, 7.0),
        (0.9, -0.3),
        (0.8, -2.2),
        (0.0, -2.4),
    )
    weak_name_levels: tuple[tuple[float, float], ...] = ((0.9, 0.5), (0.0, -0.5))
    equal_max: float = 10.0
    equal_likelihood: float = 0.9
    near: float = 4.0
    different: float = -4.0
    neighbour: float = 2.0
    neighbour_max: float = 6.0
    cosine_at: float = 0.95
    cosine: float = 1.0
    unambiguous_initial: float = 1.5
    abbreviated_name_max: float = 7.0
    min_name_similarity: float = 0.7

    def __post_init__(self) -> None:
        for name in ("merge_at", "ask_at", "min_name_similarity"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {value!r}")
        if self.ask_at > self.merge_at:
            raise ValueError(
                f"ask_at ({self.ask_at!r}) must not exceed merge_at ({self.merge_at!r})"
            )


@dataclass(frozen=True, slots=True)
class Assessment:
    """A scored pair: its `score` on `0..1`, its band, and why, in words."""

    score: float
    band: MergeBand
    reason: str


def _level(levels: tuple[tuple[float, float], ...], similarity: float) -> float:
    for threshold, weight in levels:
        if similarity >= threshold:
            return weight
    return levels[-1][1]


def assess(
    features: PairFeatures, policy: MergePolicy, *, unambiguous_initial: bool = False
) -> Assessment:
    """Weigh the features of one pair and place it in a band.

    `unambiguous_initial` says that the pair's abbreviated name ("J. Doe")
    has no other compatible full name among its candidates, which adds
    `policy.unambiguous_initial` bits; the caller knows the corpus, this
    function does not.
    """
    levels = policy.weak_name_levels if features.weak_name else policy.name_levels
    name_bits = _level(levels, features.name)
    if features.abbreviated:
        name_bits = min(name_bits, policy.abbreviated_name_max)

    bits = policy.prior + name_bits
    reasons = [f"names {features.name:.2f}" + (" (weak)" if features.weak_name else "")]
    if unambiguous_initial and features.abbreviated and not features.weak_name:
        bits += policy.unambiguous_initial
        reasons.append("the only full name for its initials")
    support = False
    for comparison in features.properties:
        match comparison.agreement:
            case Agreement.EQUAL:
                likelihood = policy.equal_likelihood / comparison.frequency
                bits += min(policy.equal_max, math.log2(likelihood))
                support = True
            case Agreement.NEAR:
                bits += policy.near
                support = True
            case Agreement.DIFFERENT:
                bits += policy.different
        reasons.append(f"{comparison.key} {comparison.agreement.value}")
    if features.shared_neighbours:
        bits += min(policy.neighbour_max, policy.neighbour * features.shared_neighbours)
        support = True
        reasons.append(f"{features.shared_neighbours} shared neighbours")
    if features.cosine is not None and features.cosine >= policy.cosine_at:
        bits += policy.cosine
        reasons.append(f"cosine {features.cosine:.2f}")
    score = 1.0 / (1.0 + 2.0**-bits)
    if score >= policy.merge_at:
        band = MergeBand.MERGE
        if features.name < policy.min_name_similarity:
            band = MergeBand.ASK
            reasons.append("names too far apart to merge unasked")
        elif features.weak_name and not support:
            band = MergeBand.ASK
            reasons.append("a weak name never merges on name evidence alone")
    elif score >= policy.ask_at:
        band = MergeBand.ASK
    else:
        band = MergeBand.APART
    return Assessment(score=score, band=band, reason="; ".join(reasons))
