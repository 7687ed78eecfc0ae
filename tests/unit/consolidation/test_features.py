"""The evidence one pair of entities gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jellyfish
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.consolidation.features import (
    Agreement,
    Population,
    PopulationTally,
    PropertyKind,
    compare,
    kind_by_key,
    looks_like_id,
    profile_of,
    unconfirmed_names,
)
from redstring.consolidation.memo import PassMemo
from tests.factories import make_entity

if TYPE_CHECKING:
    from redstring.consolidation.features import Profile


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


def test_a_property_kind_values_are_a_wire_format() -> None:
    assert [kind.value for kind in PropertyKind] == ["identifier", "measure", "category", "value"]


def test_a_key_is_an_identifier_by_name_a_measure_by_numbers_or_as_declared() -> None:
    profiles = [
        profile_of(
            make_entity(
                properties={
                    "geonames_id": n,
                    "countryCode": "gb",
                    "population": 1000 + n,
                    "ref": f"q{n}",
                    "tag": "x",
                    "id": "abc",
                }
            )
        )
        for n in range(3)
    ]
    population = Population.of(profiles, kinds={"tag": PropertyKind.IDENTIFIER})
    assert population.kind("geonames_id") is PropertyKind.IDENTIFIER
    assert population.kind("countryCode") is PropertyKind.IDENTIFIER
    assert population.kind("id") is PropertyKind.IDENTIFIER
    assert population.kind("population") is PropertyKind.MEASURE
    assert population.kind("ref") is PropertyKind.IDENTIFIER
    assert population.kind("tag") is PropertyKind.IDENTIFIER
    assert population.kind("unseen") is PropertyKind.VALUE


def test_a_key_of_few_values_over_many_holders_is_a_category() -> None:
    profiles = [profile_of(make_entity(properties={"country": "peru"})) for _ in range(20)]
    assert Population.of(profiles).kind("country") is PropertyKind.CATEGORY
    assert Population.of(profiles[:19]).kind("country") is PropertyKind.VALUE


def test_identifiers_are_never_near_and_measures_are_near_within_tolerance() -> None:
    left = profile_of(make_entity(properties={"geonames_id": 524901, "population": 1000}))
    close = profile_of(make_entity(properties={"geonames_id": 524902, "population": 1050}))
    far = profile_of(make_entity(properties={"geonames_id": 524901, "population": 1100}))
    population = Population.of([left, close, far])
    near = compare(left, close, population).properties
    assert [(c.key, c.agreement) for c in near] == [
        ("geonames_id", Agreement.DIFFERENT),
        ("population", Agreement.NEAR),
    ]
    apart = compare(left, far, population).properties
    assert [(c.key, c.agreement) for c in apart] == [
        ("geonames_id", Agreement.EQUAL),
        ("population", Agreement.DIFFERENT),
    ]
    assert apart[1].difference == 100 / 1100
    same = compare(left, left, population).properties
    assert same[1].agreement is Agreement.EQUAL


def test_a_measure_declared_on_text_compares_as_a_value() -> None:
    left = profile_of(make_entity(properties={"size": "large"}))
    right = profile_of(make_entity(properties={"size": "larg"}))
    population = Population.of([left, right], kinds={"size": PropertyKind.MEASURE})
    [comparison] = compare(left, right, population).properties
    assert (comparison.kind, comparison.agreement) == (PropertyKind.VALUE, Agreement.NEAR)


def test_a_token_one_place_name_lacks_is_unmatched_and_people_keep_their_tokens() -> None:
    cities = [
        profile_of(make_entity(name=name, entity_type="city"))
        for name in ("Khartoum", "Khartoum North", "Omdurman")
    ]
    population = Population.of(cities)
    assert population.single_token_names("city")
    features = compare(cities[0], cities[1], population)
    assert [token for token, _ in features.unmatched] == ["north"]
    assert features.unmatched[0][1] == 1.0
    assert not features.weak_name
    people = [
        profile_of(make_entity(name=name, entity_type="person"))
        for name in ("Ada Lovelace", "Ada King Lovelace", "Smith")
    ]
    population = Population.of(people)
    assert not population.single_token_names("person")
    assert compare(people[0], people[1], population).unmatched == ()


def test_two_whole_one_token_names_count_their_edits() -> None:
    names = ("Aleksandrov", "Aleksandrovsk", "Aleksandrovo", "Aleksandrov", "Zelenograd")
    cities = [profile_of(make_entity(name=name, entity_type="city")) for name in names]
    population = Population.of(cities)
    assert compare(cities[0], cities[1], population).name == 0.9
    assert compare(cities[0], cities[2], population).name == 0.96
    assert compare(cities[0], cities[3], population).name == 1.0
    assert compare(cities[0], cities[4], population).name <= 0.85


def test_a_token_is_rare_by_how_few_profiles_hold_it() -> None:
    profiles = [profile_of(make_entity(name=f"Port {n}")) for n in ("a", "b", "c", "d")]
    population = Population.of(profiles)
    assert population.rarity("port") == 0.0
    assert population.rarity("zz") == 1.0
    assert Population.of(profiles[:1]).rarity("port") == 1.0


def test_an_id_shape_mixes_letters_and_digits() -> None:
    assert looks_like_id("q42")
    assert looks_like_id("gb-lnd1")
    assert not looks_like_id("london")
    assert not looks_like_id("19560409")
    assert kind_by_key("Zip") is None


def test_an_exact_alias_decides_the_names_as_the_whole_grid_would() -> None:
    left = profile_of(make_entity(name="Bombay", properties={"aliases": ["Mumbai", "Bambai"]}))
    right = profile_of(make_entity(name="Mumbai City", properties={"aliases": ["mumbai"]}))
    population = Population.of([left, right])
    features = compare(left, right, population)
    assert features.name == 1.0
    assert features.unmatched == ()
    # Without an exact pair every name meets every alias.
    other = profile_of(make_entity(name="Mumbay City"))
    assert compare(left, other, population).name == compare(other, left, population).name


def test_a_memo_returns_the_same_evidence_and_measures_a_pair_once() -> None:
    left = profile_of(make_entity(name="Khartoum North"))
    right = profile_of(make_entity(name="Khartoum", properties={"population": 1_000}))
    population = Population.of([left, right])
    memo = PassMemo()
    first = compare(left, right, population, memo=memo)
    again = compare(left, right, population, memo=memo)
    assert first == again == compare(left, right, population)
    assert len(memo) == 1
    rebuilt = profile_of(make_entity(name="Khartoum"))
    compare(left, rebuilt, population, memo=memo)
    assert len(memo) == 2


def test_a_bare_surname_is_sole_only_while_one_full_name_holds_it() -> None:
    bare, full, initial = (
        profile_of(make_entity(name=name)) for name in ("Doe", "John Doe", "J. Doe")
    )
    reordered = profile_of(make_entity(name="Doe, John"))
    alone = Population.of([bare, full, initial, reordered])
    assert compare(bare, full, alone).sole_full_name
    assert not compare(bare, initial, alone).sole_full_name
    other = profile_of(make_entity(name="Mary Doe"))
    shared = Population.of([bare, full, initial, reordered, other])
    assert not compare(bare, full, shared).sole_full_name
    assert not compare(full, other, shared).sole_full_name


def test_a_place_name_is_never_a_bare_surname() -> None:
    towns = [profile_of(make_entity(name=n, entity_type="city")) for n in ("Khartoum", "Kassala")]
    north = profile_of(make_entity(name="Khartoum North", entity_type="city"))
    population = Population.of([*towns, north])
    assert not compare(towns[0], north, population).sole_full_name


def test_a_measure_is_as_common_as_the_values_within_its_tolerance() -> None:
    profiles = [
        profile_of(make_entity(properties={"population": value}))
        for value in (1000, 960, 1050, 1060, 2000, -1000, -955)
    ]
    profiles.append(profile_of(make_entity(properties={"country": "peru"})))
    population = Population.of(profiles)
    assert population.within("population", 1000.0, 0.05) == 3 / 8
    assert population.within("population", -1000.0, 0.05) == 2 / 8
    assert population.within("population", 0.0, 0.05) == 1 / 8
    assert population.within("population", 1000.0, 0.5) == 5 / 8
    assert population.within("population", 2000.0, 0.5) == 4 / 8
    assert population.within("country", 1000.0, 0.05) == 1 / 8


def test_an_equal_measure_is_as_rare_as_its_neighbourhood_not_its_figure() -> None:
    crowded = [
        profile_of(make_entity(properties={"population": value}))
        for value in (36000, 36000, 35500, 36500, 37000, 90000)
    ]
    population = Population.of(crowded)
    [comparison] = compare(crowded[0], crowded[1], population).properties
    assert comparison.agreement is Agreement.EQUAL
    assert comparison.frequency == 5 / 6
    assert population.frequency("population", "36000") == 2 / 6


def test_two_listed_places_neither_naming_the_other_are_unconfirmed() -> None:
    def city(name: str, *aliases: str, entity_type: str = "city") -> Profile:
        properties = {"aliases": list(aliases)} if aliases else {}
        return profile_of(make_entity(name=name, entity_type=entity_type, properties=properties))

    tongxi, dongxi = city("Tongxi", "T'ung-hsi"), city("Dongxi", "Tung-hsi")
    listed = city("Tongxi Zhen", "Tongxi")
    bare = city("Tongxii")
    population = Population.of([tongxi, dongxi, listed, bare])
    assert compare(tongxi, dongxi, population).name == 1.0
    assert compare(tongxi, dongxi, population).unconfirmed
    assert unconfirmed_names(dongxi, tongxi)
    assert not compare(tongxi, listed, population).unconfirmed
    assert not compare(listed, tongxi, population).unconfirmed
    assert not compare(tongxi, bare, population).unconfirmed
    people = [
        city("Ada King", "Ada Kingsley", entity_type="person"),
        city("Ada Kink", "Ada Kinks", entity_type="person"),
    ]
    assert unconfirmed_names(*people)
    assert not compare(people[0], people[1], Population.of(people)).unconfirmed


@given(st.text(alphabet="abcdeo", min_size=2, max_size=9), st.text(alphabet="abcdeo", max_size=4))
@example("abcdefghij", "")  # against "abcdefgxyz" below: .88, three edits: capped at .85
@example("kowloon", "bay")  # .94, three edits
@example("aleksandrov", "sk")  # .97, two edits: capped at .9
@example("mariupol", "")  # equal: 1.0, never capped
def test_two_one_token_places_score_their_similarity_capped_by_their_edits(
    stem: str, tail: str
) -> None:
    left, right = stem, "abcdefgxyz" if stem == "abcdefghij" else stem + tail
    profiles = [profile_of(make_entity(name=name, entity_type="city")) for name in (left, right)]
    features = compare(profiles[0], profiles[1], Population.of(profiles))
    similarity = jellyfish.jaro_winkler_similarity(left, right) if left != right else 1.0
    edits = jellyfish.damerau_levenshtein_distance(left, right)
    cap = 1.0 if edits == 0 else 0.96 if edits == 1 else 0.9 if edits == 2 else 0.85
    assert features.name == min(similarity, cap)


_RECORDS = st.lists(
    st.tuples(
        st.sampled_from(["Ada Lovelace", "Ada", "A. Lovelace", "Lima", "Lima Peru", "Ada Byron"]),
        st.sampled_from(["person", "city"]),
        st.dictionaries(
            st.sampled_from(["dob", "population", "ref", "country"]),
            st.sampled_from(["1815", "q1", "q2", "Peru", 7, 7.5, 12]),
            max_size=3,
        ),
        st.lists(st.sampled_from(["Lady Byron", "Ada", "Lima City"]), max_size=2),
    ),
    max_size=12,
)


@given(_RECORDS, st.lists(st.integers(min_value=0, max_value=11), max_size=12))
@example(  # one full name held twice, one record of it leaving: its tokens stay held
    [("Ada Lovelace", "person", {}, []), ("Ada Lovelace", "person", {}, [])], [0]
)
@example(  # a measure's only holder leaving, then the key's only value
    [("Lima", "city", {"population": 7}, []), ("Lima", "city", {"ref": "q1"}, [])], [0, 1]
)
def test_a_tally_of_arrivals_and_departures_is_the_population_of_who_is_left(
    records: list[tuple[str, str, dict[str, object], list[str]]], leaving: list[int]
) -> None:
    profiles = [
        profile_of(
            make_entity(name=name, entity_type=kind, properties={**properties, "aliases": aliases})
        )
        for name, kind, properties, aliases in records
    ]
    gone = {index for index in leaving if index < len(profiles)}
    tally = PopulationTally()
    for profile in profiles:
        tally.add(profile)
    for index in sorted(gone):
        tally.remove(profiles[index])
    left = [profile for index, profile in enumerate(profiles) if index not in gone]
    kinds = {"ref": PropertyKind.VALUE}
    assert tally.population() == Population.of(left)
    assert tally.population(kinds=kinds) == Population.of(left, kinds=kinds)


def test_a_pass_memo_counts_only_the_profiles_that_arrived_or_left() -> None:
    profiles = [
        profile_of(make_entity(name=name, properties={"dob": dob}))
        for name, dob in (("Ada Lovelace", "1815"), ("Ada Byron", "1815"), ("Lord Byron", "1788"))
    ]
    memo = PassMemo()
    assert memo.population(profiles) == Population.of(profiles)
    merged = profile_of(make_entity(name="Ada Lovelace", properties={"aliases": ["Ada Byron"]}))
    later = [merged, profiles[2]]
    assert memo.population(later) == Population.of(later)
    twice = [profiles[2], profiles[2]]
    assert memo.population(twice) == Population.of(twice)
    assert memo.population(later, kinds={"dob": PropertyKind.MEASURE}) == Population.of(
        later, kinds={"dob": PropertyKind.MEASURE}
    )


def test_a_tally_decides_a_category_by_the_values_still_held() -> None:
    # 25 holders and 4 values is not a category; without the three odd ones, it is.
    countries = ["Peru"] * 22 + ["Chile", "Bolivia", "Ecuador"]
    profiles = [
        profile_of(make_entity(name=f"Town {n}", properties={"country": c}))
        for n, c in enumerate(countries)
    ]
    tally = PopulationTally()
    for profile in profiles:
        tally.add(profile)
    assert tally.population().kind("country") is PropertyKind.VALUE
    for profile in profiles[22:]:
        tally.remove(profile)
    assert tally.population().kind("country") is PropertyKind.CATEGORY
    assert tally.population() == Population.of(profiles[:22])
