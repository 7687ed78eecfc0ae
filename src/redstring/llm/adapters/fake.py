"""A scripted language model: canned answers, validated like a real model's.

An answer is a payload mapping, validated against the caller's schema on each
call, or `EMPTY`, which stands for an empty completion. Answers are
deep-copied when the fake is built and again on every call, so neither the
caller's script nor a returned model can change a later answer.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from redstring.domain.exceptions import (
    EmptyCompletionError,
    LlmProviderError,
    MalformedCompletionError,
)
from redstring.domain.json_safety import check_text
from redstring.ports.lifetime import AsyncClosable
from redstring.ports.llm import LlmProvider


class EmptyAnswer(Enum):
    """The type of `EMPTY`, the answer that stands for an empty completion."""

    EMPTY = "EMPTY"

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Final = EmptyAnswer.EMPTY
"""An answer that makes `FakeLlmProvider.extract` raise `EmptyCompletionError`."""

_Payload = dict[str, Any] | EmptyAnswer


def _own(answer: object, *, where: str) -> _Payload:
    """Deep-copy one answer into a dict the fake alone holds, or pass `EMPTY` through.

    Raises:
        ValueError: the answer is neither a mapping nor `EMPTY`.
    """
    if isinstance(answer, EmptyAnswer):
        return answer
    if isinstance(answer, Mapping):
        return copy.deepcopy(dict(answer))
    raise ValueError(f"{where} must be a mapping or EMPTY, got {answer!r}")


class FakeLlmProvider(AsyncClosable, LlmProvider):
    """An `LlmProvider` that answers from a script or by substring of the text.

    Give exactly one of `script` (answers consumed in order, one per call) or
    `by_substring` (the answer of the first key, in mapping order, found in
    the text; else `default`). Every call is recorded in `calls`, including
    one that raises. The fake ignores `system_prompt` when choosing an answer.

    Raises:
        ValueError: neither or both of `script` and `by_substring` are given,
            `default` is given with `script`, a `by_substring` key is not a
            non-empty string, or an answer is neither a mapping nor `EMPTY`.
    """

    def __init__(
        self,
        *,
        model: str = "fake/canned-v1",
        script: Sequence[Mapping[str, Any] | EmptyAnswer] | None = None,
        by_substring: Mapping[str, Mapping[str, Any] | EmptyAnswer] | None = None,
        default: Mapping[str, Any] | EmptyAnswer | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-blank string, got {model!r}")
        check_text(model, field="model")
        if (script is None) == (by_substring is None):
            raise ValueError(
                "give exactly one of script or by_substring, "
                f"got {'both' if script is not None else 'neither'}"
            )
        if script is not None and default is not None:
            raise ValueError("default applies only to by_substring; a script has no fallback")
        self._model = model
        self._script: tuple[_Payload, ...] | None = None
        self._answered = 0
        self._by_substring: tuple[tuple[str, _Payload], ...] = ()
        self._default: _Payload | None = None
        if script is not None:
            if isinstance(script, str | bytes) or not isinstance(script, Sequence):
                raise ValueError(f"script must be a sequence of answers, got {script!r}")
            self._script = tuple(
                _own(answer, where=f"script[{i}]") for i, answer in enumerate(script)
            )
        if by_substring is not None:
            if not isinstance(by_substring, Mapping):
                raise ValueError(f"by_substring must be a mapping, got {by_substring!r}")
            pairs = []
            for key, answer in by_substring.items():
                if not isinstance(key, str) or not key:
                    raise ValueError(f"by_substring keys must be non-empty strings, got {key!r}")
                pairs.append((key, _own(answer, where=f"by_substring[{key!r}]")))
            self._by_substring = tuple(pairs)
            if default is not None:
                self._default = _own(default, where="default")
        self._calls: list[tuple[str, str | None]] = []

    @property
    def model(self) -> str:
        """The model name this fake reports, in errors as on extracted rows."""
        return self._model

    @property
    def calls(self) -> tuple[tuple[str, str | None], ...]:
        """Every `extract` call so far, as `(text, system_prompt)` pairs, oldest first."""
        return tuple(self._calls)

    async def extract[S: BaseModel](
        self, text: str, schema: type[S], *, system_prompt: str | None = None
    ) -> S:
        """Return the next answer for `text`, validated as a fresh `schema` instance.

        Raises:
            EmptyCompletionError: the answer is `EMPTY`.
            MalformedCompletionError: the answer does not validate against `schema`.
            LlmProviderError: the script is exhausted, or no key matches and
                there is no default.
            ValueError: `text` is not a string or `schema` is not a pydantic model.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {text!r}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise ValueError(f"schema must be a pydantic model class, got {schema!r}")
        self._calls.append((text, system_prompt))
        answer = self._answer_for(text)
        if isinstance(answer, EmptyAnswer):
            raise EmptyCompletionError(model=self._model)
        try:
            return schema.model_validate(copy.deepcopy(answer))
        except ValidationError as exc:
            raise MalformedCompletionError(model=self._model, detail=str(exc)) from exc

    def _answer_for(self, text: str) -> _Payload:
        if self._script is not None:
            if self._answered == len(self._script):
                raise LlmProviderError(
                    model=self._model,
                    reason=f"script exhausted after {self._answered} answers",
                )
            self._answered += 1
            return self._script[self._answered - 1]
        for key, answer in self._by_substring:
            if key in text:
                return answer
        if self._default is None:
            raise LlmProviderError(
                model=self._model,
                reason="no by_substring key occurs in the text and no default was given",
            )
        return self._default

    def _resource_name(self) -> str:
        return f"{type(self).__name__}(model={self._model!r})"
