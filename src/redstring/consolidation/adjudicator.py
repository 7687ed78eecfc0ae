"""The adjudicator port: who decides the pairs the evidence leaves in doubt.

A consolidation pass sends the pairs of the middle band, in batches, to a
`MergeAdjudicator`, and merges only those it answers "same" for. Without one
the middle band is left apart. `LlmMergeAdjudicator` asks a language model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from redstring.domain.entity import Entity  # noqa: TC001 - pydantic needs it at runtime
from redstring.domain.exceptions import LlmProviderError
from redstring.domain.validation import check_collaborator, check_sequence
from redstring.ports.llm import LlmProvider

if TYPE_CHECKING:
    from collections.abc import Sequence

#: How many pairs `LlmMergeAdjudicator` puts in one prompt.
DEFAULT_BATCH_SIZE: Final = 10


class MergeQuestion(BaseModel):
    """One pair in doubt: both entities, the pass's score for them, and its reasons."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    left: Entity
    right: Entity
    score: float = Field(ge=0.0, le=1.0)
    reason: str


class MergeVerdict(BaseModel):
    """An adjudicator's answer for one pair: are they the same thing, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    same: bool
    reason: str = ""


@runtime_checkable
class MergeAdjudicator(Protocol):
    """Decides batches of pairs the evidence leaves in doubt."""

    async def adjudicate(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        """One answer per question, in question order; `None` where there is no answer.

        A pass leaves apart every pair answered `None` or `same=False`. An
        answer list of the wrong length is treated as no answer at all.
        """
        ...


class _PairVerdict(BaseModel):
    pair: int
    same: bool | None
    reason: str = ""


class _Verdicts(BaseModel):
    verdicts: list[_PairVerdict]


_SYSTEM_PROMPT: Final = (
    "You decide whether two records describe the same real-world thing. "
    "For each numbered pair answer same=true only when you are confident they are one "
    "thing, same=false when they are different things, and same=null when the records "
    "do not say. Different people can share a name; a shared surname alone is never "
    "enough. Answer every pair, by its number, with a one-sentence reason."
)


def _describe(entity: Entity) -> dict[str, Any]:
    described: dict[str, Any] = {"name": entity.name, "type": entity.entity_type}
    if entity.description:
        described["description"] = entity.description
    if entity.properties:
        described["properties"] = entity.properties
    return described


class LlmMergeAdjudicator:
    """A `MergeAdjudicator` that asks a language model, `batch_size` pairs per prompt.

    The model answers with a structured verdict per pair number. A pair the
    model does not answer, answers twice, or answers with `same=null` gets
    no answer; so does every pair of a batch whose call fails with an
    `LlmProviderError` (the pass then leaves those pairs apart).

    Raises:
        ValueError: `batch_size` is below 1.
    """

    def __init__(self, provider: LlmProvider, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r:.40}")
        self._provider = check_collaborator(provider, LlmProvider, argument="provider")
        self._batch_size = batch_size

    async def adjudicate(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        """Ask the model about each batch of questions; one answer per question.

        Raises:
            ValueError: `questions` is not a sequence of `MergeQuestion`.
        """
        check_sequence(questions, argument="questions")
        for index, question in enumerate(questions):
            if not isinstance(question, MergeQuestion):
                raise ValueError(
                    f"questions[{index}] must be a MergeQuestion, got {type(question).__name__}"
                )
        answers: list[MergeVerdict | None] = []
        for start in range(0, len(questions), self._batch_size):
            answers.extend(await self._batch(questions[start : start + self._batch_size]))
        return answers

    async def _batch(self, questions: Sequence[MergeQuestion]) -> list[MergeVerdict | None]:
        pairs = [
            {"pair": number, "left": _describe(q.left), "right": _describe(q.right)}
            for number, q in enumerate(questions, start=1)
        ]
        text = json.dumps({"pairs": pairs}, ensure_ascii=False, sort_keys=True)
        try:
            answer = await self._provider.extract(text, _Verdicts, system_prompt=_SYSTEM_PROMPT)
        except LlmProviderError:
            return [None] * len(questions)
        by_pair: dict[int, _PairVerdict | None] = {}
        for verdict in answer.verdicts:
            by_pair[verdict.pair] = None if verdict.pair in by_pair else verdict
        results: list[MergeVerdict | None] = []
        for number in range(1, len(questions) + 1):
            given = by_pair.get(number)
            if given is None or given.same is None:
                results.append(None)
            else:
                results.append(MergeVerdict(same=given.same, reason=given.reason))
        return results
