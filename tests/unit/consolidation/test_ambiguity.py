"""A record as close to two things kept apart merges with neither."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redstring.consolidation.ambiguity import _bits, kept_apart, settle_ambiguity
from redstring.consolidation.features import Population, profile_of
from redstring.consolidation.policy import Assessment, MergeBand, MergePolicy
from tests.factories import make_entity

if TYPE_CHECKING:
    from redstring.consolidation.features import Profile
    from redstring.domain.entity import Entity


def _city(name: str, **properties: object) -> Entity:
    return make_entity(name=name, entity_type="city", properties=properties)


def _profiles(*entities: Entity) -> tuple[list[Profile], Population]:
    profiles = [profile_of(entity) for entity in entities]
    return profiles, Population.of(profiles)


def test_records_are_kept_apart_by_an_identifier_a_measure_or_unconfirmed_names() -> None:
    profiles, population = _profiles(
        _city("Kolar", geonames_id=1, population=1000, aliases=["Kolaru"]),
        _city("Kolaras", geonames_id=2),
        _city("Kolaras", population=1060),
        _city("Kolaras", population=1050, aliases=["Kolarasa"]),
        _city("Kolars"),
    )
    kolar, other_id, far, listed, bare = profiles
    assert kept_apart(kolar, other_id, population, 0.05)
    assert kept_apart(kolar, far, population, 0.05)
    assert not kept_apart(kolar, far, population, 0.1)
    assert kept_apart(kolar, listed, population, 0.05)
    assert not kept_apart(kolar, bare, population, 0.05)
    assert not kept_apart(far, listed, population, 0.05)


def test_names_listed_by_two_people_never_keep_them_apart() -> None:
    people = [
        make_entity(name=name, entity_type="person", properties={"aliases": [alias]})
        for name, alias in (("Ada King", "Ada Kingsley"), ("Ada Kink", "Ada Kinks"))
    ]
    profiles, population = _profiles(*people)
    assert not kept_apart(profiles[0], profiles[1], population, 0.05)


def _merge(score: float) -> Assessment:
    return Assessment(score=score, band=MergeBand.MERGE, reason="names")


def test_a_record_between_two_kept_apart_merges_with_neither_unless_one_clearly_wins() -> None:
    profiles, population = _profiles(
        _city("Kolars"),
        _city("Kolar", geonames_id=1),
        _city("Kolaras", geonames_id=2),
    )
    policy = MergePolicy()
    # 4 and 5 bits: within the 2-bit margin, so both pairs are only asked about.
    tied = {(0, 1): _merge(16 / 17), (0, 2): _merge(32 / 33)}
    settled = settle_ambiguity(tied, profiles, population, policy)
    assert [settled[pair].band for pair in tied] == [MergeBand.ASK, MergeBand.ASK]
    assert settled[0, 1].reason == (
        "names; ambiguous: 'kolars' is as close to 'kolaras', kept apart from 'kolar'"
    )
    # 2 and 4.1 bits: the first clearly wins, the second is asked about.
    clear = {(0, 1): _merge(1 / (1 + 2**-4.1)), (0, 2): _merge(0.8)}
    settled = settle_ambiguity(clear, profiles, population, policy)
    assert settled[0, 1] == clear[0, 1]
    assert settled[0, 2].band is MergeBand.ASK


def test_a_rival_below_the_ask_band_or_not_kept_apart_changes_nothing() -> None:
    profiles, population = _profiles(
        _city("Kolars"), _city("Kolar", geonames_id=1), _city("Kolaras")
    )
    policy = MergePolicy()
    unlisted = {(0, 1): _merge(0.97), (0, 2): _merge(0.97)}
    assert settle_ambiguity(unlisted, profiles, population, policy) == unlisted
    profiles, population = _profiles(
        _city("Kolars"), _city("Kolar", geonames_id=1), _city("Kolaras", geonames_id=2)
    )
    low = Assessment(score=0.29, band=MergeBand.APART, reason="names")
    weak = {(0, 1): _merge(0.97), (0, 2): low}
    assert settle_ambiguity(weak, profiles, population, MergePolicy(ambiguity_margin=99.0)) == weak


def test_two_certain_scores_tie_and_the_log_odds_of_a_certainty_stay_finite() -> None:
    profiles, population = _profiles(
        _city("Kolars"), _city("Kolar", geonames_id=1), _city("Kolaras", geonames_id=2)
    )
    # A float cannot hold the log-odds of 1.0: both count as the same certainty, so neither wins.
    sure = {(0, 1): _merge(1.0), (0, 2): _merge(1.0)}
    settled = settle_ambiguity(sure, profiles, population, MergePolicy())
    assert [settled[pair].band for pair in sure] == [MergeBand.ASK, MergeBand.ASK]
    assert _bits(0.0) == -_bits(1.0) < -50
