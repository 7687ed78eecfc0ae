"""Weighing evidence into the merge, ask and apart bands."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.consolidation.features import (
    Agreement,
    PairFeatures,
    PropertyComparison,
    PropertyKind,
)
from redstring.consolidation.policy import (
    MergeBand,
    MergePolicy,
    assess,
    name_ceiling,
    score_ceiling,
)


def _features(**overrides: object) -> PairFeatures:
    fields: dict[str, object] = {
        "name": 1.0,
        "weak_name": False,
        "abbreviated": False,
        "properties": (),
        "shared_neighbours": 0,
        "cosine": None,
    }
    fields.update(overrides)
    return PairFeatures(**fields)  # type: ignore[arg-type]


def _equal(key: str = "dob", frequency: float = 0.001) -> PropertyComparison:
    return PropertyComparison(key=key, agreement=Agreement.EQUAL, frequency=frequency)


def test_band_values_are_a_wire_format() -> None:
    assert [band.value for band in MergeBand] == ["merge", "ask", "apart"]
    assert [a.value for a in Agreement] == ["equal", "near", "different"]


def test_an_equal_two_token_name_merges_on_its_own() -> None:
    assessment = assess(_features(), MergePolicy())
    assert assessment.band is MergeBand.MERGE
    assert assessment.score == pytest.approx(1 / (1 + 2**-4.6))


def test_a_weak_name_never_merges_on_name_evidence_alone() -> None:
    policy = MergePolicy(weak_name_levels=((0.0, 20.0),))
    assert assess(_features(weak_name=True), policy).band is MergeBand.ASK
    supported = _features(weak_name=True, properties=(_equal(),))
    assert assess(supported, policy).band is MergeBand.MERGE
    neighbours = _features(weak_name=True, shared_neighbours=1)
    assert assess(neighbours, policy).band is MergeBand.MERGE


def test_names_too_far_apart_are_asked_about_however_strong_the_properties() -> None:
    features = _features(name=0.5, properties=(_equal(), _equal("city")))
    assert assess(features, MergePolicy()).band is MergeBand.ASK


def test_a_disagreeing_property_leaves_a_typo_apart() -> None:
    different = PropertyComparison(key="dob", agreement=Agreement.DIFFERENT, frequency=0.001)
    features = _features(name=0.92, properties=(different,))
    assert assess(features, MergePolicy()).band is MergeBand.APART


def test_an_initial_merges_only_when_unambiguous() -> None:
    features = _features(name=0.95, abbreviated=True)
    assert assess(features, MergePolicy()).band is MergeBand.ASK
    assert assess(features, MergePolicy(), unambiguous_initial=True).band is MergeBand.MERGE


def test_an_abbreviated_exact_name_is_worth_no_more_than_a_close_one() -> None:
    assert assess(_features(abbreviated=True), MergePolicy()).band is MergeBand.ASK


def test_a_rare_equal_value_weighs_more_than_a_common_one_up_to_a_cap() -> None:
    base = _features(name=0.85)
    common = assess(_features(name=0.85, properties=(_equal(frequency=0.5),)), MergePolicy())
    rare = assess(_features(name=0.85, properties=(_equal(frequency=1e-9),)), MergePolicy())
    assert assess(base, MergePolicy()).score < common.score < rare.score
    assert rare.score == pytest.approx(1 / (1 + 2 ** -(-3.4 - 2.2 + 10.0)))


def test_cosine_adds_from_its_threshold() -> None:
    policy = MergePolicy()
    below = assess(_features(name=0.9, cosine=0.9499), policy).score
    at = assess(_features(name=0.9, cosine=0.95), policy).score
    assert at > below


def test_near_values_and_the_reason_say_what_counted() -> None:
    near = PropertyComparison(key="dob", agreement=Agreement.NEAR, frequency=0.001)
    features = _features(name=0.96, properties=(near,), shared_neighbours=2)
    assessment = assess(features, MergePolicy())
    assert assessment.reason == "names 0.96; dob near; 2 shared neighbours"


@pytest.mark.parametrize(
    ("field", "value"), [("merge_at", 1.5), ("ask_at", -0.1), ("min_name_similarity", 2.0)]
)
def test_a_band_outside_zero_to_one_is_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        MergePolicy(**{field: value})  # type: ignore[arg-type]


def test_ask_above_merge_is_refused() -> None:
    with pytest.raises(ValueError, match="ask_at"):
        MergePolicy(merge_at=0.5, ask_at=0.6)


def test_equal_bands_are_allowed() -> None:
    assert MergePolicy(merge_at=0.5, ask_at=0.5).ask_at == 0.5


def test_a_similarity_below_every_level_takes_the_last_weight() -> None:
    policy = MergePolicy(name_levels=((0.5, 9.0), (0.4, -7.0)))
    assert assess(_features(name=0.1), policy).score == pytest.approx(1 / (1 + 2**10.4))


def test_an_identifier_decides_strongly_either_way_and_says_its_values() -> None:
    equal = PropertyComparison(
        "geonames_id", Agreement.EQUAL, 0.5, PropertyKind.IDENTIFIER, values=("7", "7")
    )
    different = PropertyComparison(
        "geonames_id", Agreement.DIFFERENT, 0.5, PropertyKind.IDENTIFIER, values=("7", "8")
    )
    policy = MergePolicy()
    assert assess(_features(properties=(equal,)), policy).score == pytest.approx(1 / (1 + 2**-16.6))
    against = assess(_features(properties=(different,)), policy)
    assert against.band is MergeBand.APART
    assert against.reason == "names 1.00; geonames_id different (7 vs 8; -12.0)"


def test_a_measure_counts_against_in_proportion_to_how_far_apart() -> None:
    def measure(agreement: Agreement, difference: float) -> PropertyComparison:
        return PropertyComparison(
            "population", agreement, 0.01, PropertyKind.MEASURE, difference, ("100", "110")
        )

    policy = MergePolicy()
    ten = assess(_features(properties=(measure(Agreement.DIFFERENT, 0.1),)), policy)
    assert ten.score == pytest.approx(1 / (1 + 2**-0.6))
    assert ten.reason == "names 1.00; population different by 10% (100 vs 110; -4.0)"
    far = assess(_features(properties=(measure(Agreement.DIFFERENT, 0.9),)), policy)
    assert far.score == pytest.approx(1 / (1 + 2**7.4))
    near = assess(_features(properties=(measure(Agreement.NEAR, 0.04),)), policy)
    assert near.score == pytest.approx(1 / (1 + 2**-6.6))


def test_a_category_is_worth_little_when_equal() -> None:
    policy = MergePolicy()
    equal = PropertyComparison("country", Agreement.EQUAL, 0.001, PropertyKind.CATEGORY)
    different = PropertyComparison("country", Agreement.DIFFERENT, 0.001, PropertyKind.CATEGORY)
    weak = _features(name=0.5, weak_name=True)
    assert assess(_features(properties=(equal,)), policy).score == pytest.approx(1 / (1 + 2**-7.6))
    assert assess(_features(properties=(different,)), policy).reason == (
        "names 1.00; country different"
    )
    assert assess(weak, policy).band is MergeBand.APART


def test_an_unmatched_token_counts_against_by_its_rarity_only_for_alike_names() -> None:
    policy = MergePolicy()
    alike = assess(_features(name=0.95, unmatched=(("north", 0.5),)), policy)
    assert alike.score == pytest.approx(1 / (1 + 2**1.4))
    assert alike.reason == "names 0.95; unmatched north (-5.0)"
    capped = assess(_features(unmatched=(("a", 1.0), ("b", 1.0))), policy)
    assert capped.score == pytest.approx(1 / (1 + 2**7.4))
    apart = assess(_features(name=0.85, unmatched=(("north", 0.5),)), policy)
    assert "unmatched" not in apart.reason


def test_a_measure_tolerance_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="measure_tolerance"):
        MergePolicy(measure_tolerance=0.0)


def test_a_bare_name_only_one_full_name_holds_merges_and_says_why() -> None:
    bare = _features(name=0.9, weak_name=True, sole_full_name=True)
    assessment = assess(bare, MergePolicy())
    assert assessment.band is MergeBand.MERGE
    assert "the only full name holding the bare name" in assessment.reason
    assert assess(_features(name=0.9, weak_name=True), MergePolicy()).band is MergeBand.APART


def test_two_listed_names_neither_naming_the_other_count_against_and_say_so() -> None:
    policy = MergePolicy()
    country = PropertyComparison("country", Agreement.EQUAL, 0.05, PropertyKind.CATEGORY)
    listed = assess(_features(name=0.96, properties=(country,), unconfirmed=True), policy)
    assert listed.score == pytest.approx(1 / (1 + 2**-0.6))
    assert listed.band is MergeBand.ASK
    assert listed.reason == "names 0.96; neither lists the other's name (-6.0); country equal"
    confirmed = assess(_features(name=0.96, properties=(country,)), policy)
    assert confirmed.band is MergeBand.MERGE


def test_an_equal_measure_in_a_crowd_is_worth_no_less_than_a_near_one() -> None:
    policy = MergePolicy()
    crowded = PropertyComparison("population", Agreement.EQUAL, 0.9, PropertyKind.MEASURE)
    rare = PropertyComparison("population", Agreement.EQUAL, 0.09, PropertyKind.MEASURE)
    assert assess(_features(properties=(crowded,)), policy).score == pytest.approx(
        1 / (1 + 2**-6.6)
    )
    assert assess(_features(properties=(rare,)), policy).score == pytest.approx(
        1 / (1 + 2**-7.921928)
    )


_KINDS = st.sampled_from(list(PropertyKind))
_AGREEMENTS = st.sampled_from(list(Agreement))
_COMPARISONS = st.builds(
    PropertyComparison,
    key=st.sampled_from(["dob", "suburb", "population", "geonames_id"]),
    agreement=_AGREEMENTS,
    frequency=st.floats(min_value=1e-6, max_value=1.0),
    kind=_KINDS,
    difference=st.floats(min_value=0.0, max_value=1.0),
)
_FEATURES = st.builds(
    PairFeatures,
    name=st.floats(min_value=0.0, max_value=1.0),
    weak_name=st.booleans(),
    abbreviated=st.booleans(),
    properties=st.lists(_COMPARISONS, max_size=4).map(tuple),
    shared_neighbours=st.integers(min_value=0, max_value=5),
    cosine=st.none() | st.floats(min_value=-1.0, max_value=1.0),
    unmatched=st.lists(
        st.tuples(st.just("north"), st.floats(min_value=0.0, max_value=1.0)), max_size=3
    ).map(tuple),
    sole_full_name=st.booleans(),
    unconfirmed=st.booleans(),
)
_POLICIES = st.builds(
    MergePolicy,
    unambiguous_initial=st.floats(min_value=-4.0, max_value=4.0),
    sole_full_name=st.floats(min_value=-8.0, max_value=8.0),
    unconfirmed_names=st.floats(min_value=-8.0, max_value=8.0),
    cosine=st.floats(min_value=-2.0, max_value=2.0),
    neighbour=st.floats(min_value=-2.0, max_value=2.0),
    unmatched_min=st.floats(min_value=-2.0, max_value=4.0),
)


@given(_FEATURES, _POLICIES, st.booleans())
@example(  # an equal exact name with an unambiguous initial: the name's most
    _features(name=1.0, abbreviated=True), MergePolicy(abbreviated_name_max=9.0), True
)
@example(  # a weak bare name that only one full name holds, and listed names for it
    _features(name=0.95, weak_name=True, sole_full_name=True, unconfirmed=True),
    MergePolicy(unconfirmed_names=2.0, sole_full_name=12.0),
    False,
)
@example(  # an unmatched token that counts for the merge: no ceiling
    _features(name=0.95, unmatched=(("north", 0.0), ("city", 0.0))),
    MergePolicy(unmatched_min=-2.0),
    False,
)
def test_no_name_lifts_a_pair_above_its_ceiling(
    features: PairFeatures, policy: MergePolicy, unambiguous: bool
) -> None:
    ceiling = score_ceiling(
        features.properties,
        features.shared_neighbours,
        features.cosine is not None,
        policy,
        name_ceiling(policy),
    )
    assessed = assess(features, policy, unambiguous_initial=unambiguous)
    assert assessed.score <= ceiling


def test_the_name_ceiling_is_the_best_name_and_what_may_come_with_it() -> None:
    assert name_ceiling(MergePolicy()) == 8.0 + 1.5
    assert name_ceiling(MergePolicy(sole_full_name=12.0)) == 0.5 + 12.0
    assert name_ceiling(MergePolicy(unconfirmed_names=1.0, unambiguous_initial=-1.0)) == 9.5
    assert name_ceiling(MergePolicy(unmatched_max=-1.0)) == math.inf
    assert score_ceiling((), 0, False, MergePolicy(unmatched_total=-1.0), math.inf) == 1.0


def test_a_pairs_ceiling_counts_its_properties_neighbours_and_vectors() -> None:
    policy = MergePolicy()
    different = PropertyComparison(key="dob", agreement=Agreement.DIFFERENT, frequency=0.001)
    assert score_ceiling((different,), 0, False, policy, 9.5) == pytest.approx(1 / (1 + 2**-2.1))
    assert score_ceiling((different,), 2, True, policy, 9.5) == pytest.approx(1 / (1 + 2**-7.1))
