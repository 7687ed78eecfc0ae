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

from redstring.consolidation.features import MEASURE_TOLERANCE, Agreement, PropertyKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.consolidation.features import PairFeatures, PropertyComparison


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
    An identifier counts `identifier_equal` or `identifier_different`; an
    equal category (a country) at most `category_max`; a
    measure within `measure_tolerance` counts `measure_near`, further apart
    `measure_against` per tolerance it is off by, at most `measure_max`
    against. Each token of one name that the other lacks counts against,
    from `unmatched_min` (a token every name has) to `unmatched_max` (a
    token one profile has), at most `unmatched_total` in all, when the names
    are at least `unmatched_from` alike (below, the name levels already
    count the mismatch). A bare token (a surname) that only one full name
    of the pass holds counts `sole_full_name` toward that name and may merge
    on it. An equal measure counts by how few values lie within its
    tolerance, at least `measure_near`. Two records of a type whose names
    are whole that both list names, neither naming the other, count
    `unconfirmed_names`; a record whose evidence for one candidate is
    within `ambiguity_margin` bits of its evidence for another kept apart
    from the first is asked about, not merged (`settle_ambiguity`). See
    ADR 0071, ADR 0072, ADR 0088 and ADR 0098.

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
    identifier_equal: float = 12.0
    identifier_different: float = -12.0
    measure_tolerance: float = MEASURE_TOLERANCE
    measure_near: float = 2.0
    measure_against: float = 2.0
    measure_max: float = 12.0
    unmatched_min: float = 2.0
    unmatched_max: float = 8.0
    unmatched_total: float = 12.0
    unmatched_from: float = 0.9
    category_max: float = 3.0
    sole_full_name: float = 8.0
    unconfirmed_names: float = -6.0
    ambiguity_margin: float = 2.0

    def __post_init__(self) -> None:
        if not 0.0 < self.measure_tolerance < 1.0:
            raise ValueError(
                f"measure_tolerance must be within (0, 1), got {self.measure_tolerance!r}"
            )
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


def _property_bits(comparison: PropertyComparison, policy: MergePolicy) -> tuple[float, bool]:
    """The bits one property comparison is worth, and whether it supports the merge."""
    if comparison.kind is PropertyKind.IDENTIFIER:
        if comparison.agreement is Agreement.EQUAL:
            return policy.identifier_equal, True
        return policy.identifier_different, False
    if comparison.kind is PropertyKind.CATEGORY:
        if comparison.agreement is Agreement.EQUAL:
            likelihood = policy.equal_likelihood / comparison.frequency
            return min(policy.category_max, math.log2(likelihood)), True
        return policy.different, False
    match comparison.agreement:
        case Agreement.EQUAL:
            bits = math.log2(policy.equal_likelihood / comparison.frequency)
            if comparison.kind is PropertyKind.MEASURE:
                bits = max(policy.measure_near, bits)
            return min(policy.equal_max, bits), True
        case Agreement.NEAR:
            if comparison.kind is PropertyKind.MEASURE:
                return policy.measure_near, True
            return policy.near, True
        case _:
            if comparison.kind is PropertyKind.MEASURE:
                off = comparison.difference / policy.measure_tolerance
                return -min(policy.measure_max, policy.measure_against * off), False
            return policy.different, False


def _property_reason(comparison: PropertyComparison, weight: float) -> str:
    """`key agreement`, and for identifiers and measures the values and the bits."""
    said = f"{comparison.key} {comparison.agreement.value}"
    if comparison.kind in (PropertyKind.VALUE, PropertyKind.CATEGORY):
        return said
    left, right = comparison.values
    if comparison.kind is PropertyKind.MEASURE and comparison.agreement is not Agreement.EQUAL:
        said += f" by {comparison.difference:.0%}"
    shown = left if left == right else f"{left} vs {right}"
    return f"{said} ({shown}; {weight:+.1f})"


def name_ceiling(policy: MergePolicy) -> float:
    """The most bits a pair's names can add to its evidence, whatever they are.

    The best name level with an unambiguous initial, or the best weak level
    with a sole full name; an unconfirmed pair of name lists and unmatched
    tokens count only against (unbounded, `inf`, when a policy makes either
    count for).
    """
    if min(policy.unmatched_min, policy.unmatched_max, policy.unmatched_total) < 0.0:
        return math.inf
    strong = max(weight for _, weight in policy.name_levels) + max(policy.unambiguous_initial, 0.0)
    weak = max(weight for _, weight in policy.weak_name_levels) + max(policy.sole_full_name, 0.0)
    return max(strong, weak) + max(policy.unconfirmed_names, 0.0)


def score_ceiling(
    properties: Sequence[PropertyComparison],
    shared_neighbours: int,
    vectors: bool,
    policy: MergePolicy,
    names: float,
) -> float:
    """The highest `score` `assess` can give a pair with this evidence, whatever its names.

    `names` is `name_ceiling(policy)`; `vectors` whether both sides have one.
    """
    bits = policy.prior + names
    for comparison in properties:
        bits += _property_bits(comparison, policy)[0]
    if shared_neighbours:
        bits += min(policy.neighbour_max, policy.neighbour * shared_neighbours)
    if vectors:
        bits += max(policy.cosine, 0.0)
    return 1.0 if bits == math.inf else 1.0 / (1.0 + 2.0**-bits)


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
    if features.sole_full_name and features.weak_name:
        bits += policy.sole_full_name
        reasons.append("the only full name holding the bare name")
    if features.unmatched and features.name >= policy.unmatched_from:
        span = policy.unmatched_max - policy.unmatched_min
        against = sum(policy.unmatched_min + span * rarity for _, rarity in features.unmatched)
        against = min(policy.unmatched_total, against)
        bits -= against
        tokens = ", ".join(token for token, _ in features.unmatched)
        reasons.append(f"unmatched {tokens} ({-against:+.1f})")
    if features.unconfirmed:
        bits += policy.unconfirmed_names
        reasons.append(f"neither lists the other's name ({policy.unconfirmed_names:+.1f})")
    support = False
    for comparison in features.properties:
        weight, agrees = _property_bits(comparison, policy)
        bits += weight
        support = support or agrees
        reasons.append(_property_reason(comparison, weight))
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
        elif features.weak_name and not (support or features.sole_full_name):
            band = MergeBand.ASK
            reasons.append("a weak name never merges on name evidence alone")
    elif score >= policy.ask_at:
        band = MergeBand.ASK
    else:
        band = MergeBand.APART
    return Assessment(score=score, band=band, reason="; ".join(reasons))
