"""Consolidation: finding the entities that are one real-world thing.

Candidates, the evidence for a pair, the policy that weighs it, the closure
that forms clusters, and the adjudicator port for the pairs left in doubt.
Nothing here reads or writes a store; `redstring.composition.Consolidator`
does, and records each merge as an event. See
[ADR 0027](../adr/0027-consolidation-is-a-sibling-capability.md).
"""

from redstring.consolidation.adjudicator import (
    LlmMergeAdjudicator,
    MergeAdjudicator,
    MergeQuestion,
    MergeVerdict,
)
from redstring.consolidation.features import Agreement, Profile, PropertyKind, profile_of
from redstring.consolidation.policy import Assessment, MergeBand, MergePolicy, assess
from redstring.consolidation.resolution import Link, Resolution, resolve_profiles

__all__ = [
    "Agreement",
    "Assessment",
    "Link",
    "LlmMergeAdjudicator",
    "MergeAdjudicator",
    "MergeBand",
    "MergePolicy",
    "MergeQuestion",
    "MergeVerdict",
    "Profile",
    "PropertyKind",
    "Resolution",
    "assess",
    "profile_of",
    "resolve_profiles",
]
