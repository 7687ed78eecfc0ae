"""The evidence one pair of entities gives."""

from __future__ import annotations

from redstring.consolidation.features import (
    Agreement,
    Population,
    compare,
    profile_of,
)
from tests.factories import make_entity


def test_a_profile_keeps_scalar_properties_folded_and_aliases_as_names() -> None:
    entity = make_entity(
        name="John Doe",
        properties={
            "city": " LONDON ",
            "born": 1815,
            "alive": False,
            "tags": ["x"],
            "aliases": ["J. Doe", "john doe", 7],
        },
    )
    profile = profile_of(entity, neighbours=["Acme Ltd"], vector=[1.0, 0.0])
    assert profile.properties == {"city": "london", "born": "1815"}
    assert [form.text for form in profile.names] == ["john doe", "j doe"]
    assert profile.neighbours == frozenset({"acme ltd"})
    assert profile.vector == (1.0, 0.0)


def test_equal_near_and_different_values_are_told_apart() -> None:
    left = profile_of(make_entity(properties={"dob": "19560409", "city": "cleveland", "x": "a"}))
    right = profile_of(make_entity(properties={"dob": "19560490", "city": "cleveland", "x": "zz"}))
    features = compare(left, right, Population.of([left, right]))
    assert [(c.key, c.agreement) for c in features.properties] == [
        ("city", Agreement.EQUAL),
        ("dob", Agreement.NEAR),
        ("x", Agreement.DIFFERENT),
    ]


def test_a_property_only_one_side_holds_is_no_evidence() -> None:
    left = profile_of(make_entity(properties={"dob": "1"}))
    right = profile_of(make_entity(properties={}))
    assert compare(left, right, Population.of([left, right])).properties == ()


def test_a_value_held_by_half_the_population_has_frequency_one_half() -> None:
    profiles = [
        profile_of(make_entity(properties={"city": city}))
        for city in ("paris", "paris", "rome", "oslo")
    ]
    population = Population.of(profiles)
    assert population.frequency("city", "paris") == 0.5
    assert population.frequency("city", "lima") == 0.25


def test_the_best_name_over_aliases_counts_and_neighbours_are_shared_by_name() -> None:
    left = profile_of(
        make_entity(name="Ada King", properties={"aliases": ["Ada Lovelace"]}),
        neighbours=["Charles Babbage", "London"],
    )
    right = profile_of(make_entity(name="Lovelace, Ada"), neighbours=["charles  babbage"])
    features = compare(left, right, Population.of([left, right]))
    assert features.name == 1.0
    assert features.shared_neighbours == 1
    assert features.cosine is None


def test_cosine_needs_vectors_of_one_length_and_non_zero() -> None:
    population = Population.of([])
    a = profile_of(make_entity(), vector=[1.0, 0.0])
    assert compare(a, profile_of(make_entity(), vector=[1.0, 0.0]), population).cosine == 1.0
    assert compare(a, profile_of(make_entity(), vector=[1.0]), population).cosine is None
    assert compare(a, profile_of(make_entity(), vector=[0.0, 0.0]), population).cosine is None


def test_a_float_property_compares_by_its_exact_value() -> None:
    left = profile_of(make_entity(properties={"height": 1.5, "none": None}))
    assert left.properties == {"height": "1.5"}
