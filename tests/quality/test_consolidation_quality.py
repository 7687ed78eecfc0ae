"""Consolidation quality on slices of `bench/consolidation.py`'s sets, held above floors.

The slices are about 1,000 FEBRL3 records (whole people) and the mentions of
the first 400 FEBRL3 originals, consolidated through the public
`Consolidator`. The floors sit just under what the slices measure; each was
seen to fail with the defect it guards against put in (no property
evidence: recall .35; weak names scored like full ones: 163 bare surnames
merged; initials merged whatever their ambiguity: precision .94; a bare
surname merged however many full names hold it: 163 merged).
"""

from __future__ import annotations

from bench.consolidation import evaluate, febrl3, mentions, undo_all


async def test_a_febrl3_slice_merges_precisely_and_finds_most() -> None:
    figures = await evaluate(febrl3(1_000))
    assert figures["pairwise_precision"] >= 0.99
    assert figures["pairwise_recall"] >= 0.85
    assert figures["oracle_f1"] >= 0.95
    assert figures["asked_per_entity"] <= 1.0
    assert figures["blocking_recall"] >= 0.95
    assert figures["candidates_per_entity"] <= 40
    assert figures["second_pass_merges"] == 0


async def test_a_mentions_slice_never_merges_a_shared_bare_surname() -> None:
    figures = await evaluate(mentions(400))
    assert figures["bare_merges"] == 0
    assert figures["pairwise_precision"] >= 0.99
    assert figures["pairwise_recall"] >= 0.95
    assert figures["second_pass_merges"] == 0


async def test_undoing_a_febrl3_slices_merges_newest_first_stays_within_budget() -> None:
    """20 ms per merge is the budget for all of FEBRL3; a slice's log is shorter."""
    figures = await undo_all(febrl3(1_000), baseline=3)
    assert figures["undo_ms_per_merge"] <= 20
