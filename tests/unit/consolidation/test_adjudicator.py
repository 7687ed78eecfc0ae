"""The language-model adjudicator, against the scripted fake."""

from __future__ import annotations

import json

import pytest

from redstring import FakeLlmProvider
from redstring.consolidation.adjudicator import (
    LlmMergeAdjudicator,
    MergeAdjudicator,
    MergeQuestion,
    MergeVerdict,
)
from redstring.llm.adapters.fake import EMPTY
from tests.factories import make_entity


def _questions(count: int) -> list[MergeQuestion]:
    return [
        MergeQuestion(
            left=make_entity(name=f"Left {n}", description="a poet", properties={"x": n}),
            right=make_entity(name=f"Right {n}"),
            score=0.5,
            reason="names 0.90",
        )
        for n in range(count)
    ]


def test_it_is_a_merge_adjudicator() -> None:
    assert isinstance(LlmMergeAdjudicator(FakeLlmProvider(script=[])), MergeAdjudicator)


async def test_each_pair_gets_its_own_verdict_by_number_in_batches() -> None:
    provider = FakeLlmProvider(
        script=[
            {
                "verdicts": [
                    {"pair": 2, "same": False, "reason": "different dates"},
                    {"pair": 1, "same": True, "reason": "one poet"},
                ]
            },
            {"verdicts": [{"pair": 1, "same": None, "reason": "cannot tell"}]},
        ]
    )
    answers = await LlmMergeAdjudicator(provider, batch_size=2).adjudicate(_questions(3))
    assert answers == [
        MergeVerdict(same=True, reason="one poet"),
        MergeVerdict(same=False, reason="different dates"),
        None,
    ]
    first = json.loads(provider.calls[0][0])
    assert [pair["pair"] for pair in first["pairs"]] == [1, 2]
    assert first["pairs"][0]["left"] == {
        "name": "Left 0",
        "type": "person",
        "description": "a poet",
        "properties": {"x": 0},
    }


async def test_an_unanswered_or_twice_answered_pair_has_no_answer() -> None:
    provider = FakeLlmProvider(
        script=[
            {
                "verdicts": [
                    {"pair": 1, "same": True},
                    {"pair": 1, "same": False},
                    {"pair": 9, "same": True},
                ]
            }
        ]
    )
    assert await LlmMergeAdjudicator(provider).adjudicate(_questions(2)) == [None, None]


async def test_a_failed_call_answers_nothing_for_its_batch_only() -> None:
    provider = FakeLlmProvider(script=[EMPTY, {"verdicts": [{"pair": 1, "same": True}]}])
    answers = await LlmMergeAdjudicator(provider, batch_size=1).adjudicate(_questions(2))
    assert answers == [None, MergeVerdict(same=True)]


async def test_no_questions_make_no_call() -> None:
    provider = FakeLlmProvider(script=[])
    assert await LlmMergeAdjudicator(provider).adjudicate([]) == []
    assert provider.calls == ()


@pytest.mark.parametrize("size", [0, -1, True, 1.5])
def test_a_batch_size_that_is_not_a_positive_integer_is_refused(size: object) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        LlmMergeAdjudicator(FakeLlmProvider(script=[]), batch_size=size)  # type: ignore[arg-type]
