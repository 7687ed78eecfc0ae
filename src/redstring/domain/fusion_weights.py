"""The shipped coefficients of the evidence order: plain numbers, fitted offline.

`bench/quality.py` fits them on the four public name sets (FEBRL4,
countrynames, FEBRL3 mentions, nicknames), each set weighing the same,
and judges them leave-one-set-out before they are copied here
(ADR 0104). Nothing is trained at run time.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """One coefficient per feature of `evidence_features`, in its order.

    The word-match pair (ADR 0116) and the unit overlap (ADR 0119) default
    to `0.0`, so nine weights, as ADR 0104 fitted them, still make a whole
    set that ignores them.
    A candidate's evidence is the sum of each weight times its feature: a
    log-odds, up to a constant per query, that the candidate is the answer.
    """

    in_semantic: float
    in_lexical: float
    in_both: float
    semantic: float
    semantic_gap: float
    lexical: float
    lexical_gap: float
    semantic_log_rank: float
    lexical_log_rank: float
    word_match: float = 0.0
    word_match_gap: float = 0.0
    unit_overlap: float = 0.0

    def __post_init__(self) -> None:
        for value in astuple(self):
            if not isinstance(value, float | int) or isinstance(value, bool) or value != value:
                raise ValueError(f"a fusion weight must be a finite number, got {value!r}")
            if value in (float("inf"), float("-inf")):
                raise ValueError(f"a fusion weight must be a finite number, got {value!r}")

    def as_tuple(self) -> tuple[float, ...]:
        """The weights in feature order."""
        return (
            float(self.in_semantic),
            float(self.in_lexical),
            float(self.in_both),
            float(self.semantic),
            float(self.semantic_gap),
            float(self.lexical),
            float(self.lexical_gap),
            float(self.semantic_log_rank),
            float(self.lexical_log_rank),
            float(self.word_match),
            float(self.word_match_gap),
            float(self.unit_overlap),
        )


#: Fitted by `bench/quality.py --embedder e5` on all four public sets
#: (multilingual-e5-small vectors; L2 0.01). The signs are what keep each
#: channel's own order: a higher score and a better rank never count
#: against a candidate (ADR 0104); holding the query's rare words (ADR 0116)
#: and sharing its units (ADR 0119) count for it.
SHIPPED_FUSION_WEIGHTS = FusionWeights(
    in_semantic=0.934,
    in_lexical=0.105,
    in_both=1.039,
    semantic=1.156,
    semantic_gap=-0.219,
    lexical=2.092,
    lexical_gap=-2.092,
    semantic_log_rank=-1.149,
    lexical_log_rank=-0.506,
    word_match=1.862,
    word_match_gap=-1.862,
    unit_overlap=2.284,
)
