"""A slice of `bench/consolidation.py` with floors, so a quality regression fails CI.

The floors sit just under what the slice measures; each was seen to fail
with the defect it guards against put in (no property evidence, the weak-name
rule removed, initials merged regardless of ambiguity).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from types import ModuleType

BENCH = Path(__file__).parents[3] / "bench" / "consolidation.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_consolidation", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_febrl3_slice_merges_precisely_and_finds_most(bench: ModuleType) -> None:
    figures = await bench.evaluate(bench.febrl3(1_000))
    assert figures["pairwise_precision"] >= 0.99
    assert figures["pairwise_recall"] >= 0.85
    assert figures["oracle_f1"] >= 0.95
    assert figures["asked_per_entity"] <= 1.0
    assert figures["blocking_recall"] >= 0.95
    assert figures["candidates_per_entity"] <= 40
    assert figures["second_pass_merges"] == 0


async def test_mentions_slice_never_merges_a_bare_surname(bench: ModuleType) -> None:
    figures = await bench.evaluate(bench.mentions(400))
    assert figures["bare_merges"] == 0
    assert figures["pairwise_precision"] >= 0.97
    assert figures["pairwise_recall"] >= 0.5
    assert figures["second_pass_merges"] == 0
