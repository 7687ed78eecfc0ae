"""Candidate keys for names written without Latin letters."""

from __future__ import annotations

from redstring.consolidation.candidates import candidate_pairs, profile_keys
from redstring.consolidation.features import profile_of
from tests.factories import make_entity


def test_names_without_latin_letters_share_no_sound_key() -> None:
    # Soundex reads only Latin letters; a Cyrillic or Chinese token has none,
    # and the code of nothing would be one key every such name shares.
    names = ["Иван Петров", "Олег Сидоров", "毛泽东 主席", "Иван Петрова"]
    profiles = [profile_of(make_entity(name=name)) for name in names]
    assert candidate_pairs(profiles) == [(0, 3)]
    assert not any("s:" in key for key in profile_keys(profiles[0]))
    assert "person\x1fp:петр" in profile_keys(profiles[0])
