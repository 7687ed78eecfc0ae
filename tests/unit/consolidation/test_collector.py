"""The pass's pause of the cyclic collector, and an adjudicator's wait without it."""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING, Any

import pytest

from redstring import FakeLlmProvider, LlmMergeAdjudicator
from redstring.consolidation.collector import collector_paused, collector_resumed
from tests.factories import TENANT, make_entity
from tests.unit.composition.test_consolidation import World

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from redstring.consolidation.adjudicator import MergeQuestion, MergeVerdict


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    gc.enable()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_pause_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        with collector_resumed():
            # Only a pause that turned the collector off turns it back on.
            assert gc.isenabled() is enabled
        assert not gc.isenabled()
    assert gc.isenabled() is enabled


@pytest.mark.parametrize("enabled", [True, False])
def test_resuming_outside_a_pause_changes_nothing(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with collector_resumed():
        assert gc.isenabled() is enabled
    assert gc.isenabled() is enabled


async def test_a_pause_belongs_to_the_task_that_took_it() -> None:
    paused = asyncio.Event()
    release = asyncio.Event()

    async def pass_() -> None:
        with collector_paused():
            paused.set()
            await release.wait()

    task = asyncio.create_task(pass_())
    await paused.wait()
    # Another task's wait does not end this task's pause.
    with collector_resumed():
        assert not gc.isenabled()
    release.set()
    await task
    assert gc.isenabled()


class Watching:
    """An LLM adjudicator that notes whether the collector runs while it is asked."""

    def __init__(self) -> None:
        verdicts = {"verdicts": [{"pair": 1, "same": True, "reason": "one engineer"}]}
        self.inner = LlmMergeAdjudicator(FakeLlmProvider(script=[verdicts]))
        self.asking = False
        self.enabled: list[bool] = []

    async def adjudicate(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        self.asking = True
        self.enabled.append(gc.isenabled())
        try:
            return await self.inner.adjudicate(questions)
        finally:
            self.asking = False


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_pass_pauses_the_collector_except_while_the_adjudicator_is_asked(
    enabled: bool,
) -> None:
    adjudicator = Watching()
    world = World(adjudicator=adjudicator)
    await world.add(
        make_entity(name="John Smith"),
        make_entity(name="Jon Smith"),
        *(
            make_entity(name=f"{given} Major", properties={"dob": f"19{n:02}0101"})
            for n, given in enumerate(("Ada", "Bea", "Cy", "Dov", "Eli", "Fay", "Gus", "Hal"))
        ),
    )
    during: list[bool] = []

    def started(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and inside:
            during.append(adjudicator.asking)

    (gc.enable if enabled else gc.disable)()
    gc.collect()
    # Thousands of allocations in the pass, a handful before its pause starts.
    gc.set_threshold(100)
    gc.callbacks.append(started)
    inside = True
    try:
        report = await world.consolidator.consolidate(TENANT)
    finally:
        inside = False
        gc.callbacks.remove(started)
    assert len(report.merges) == 1
    assert (adjudicator.enabled, gc.isenabled()) == ([enabled], enabled)
    # No collection started in the pass but while the adjudicator was asked,
    # and the one that fell due meanwhile, once the pause is over.
    assert during.count(False) <= 1
