"""The language model port."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel


@runtime_checkable
class LlmProvider(Protocol):
    """Answers a prompt with structured output validated against a schema."""

    @property
    def model(self) -> str:
        """The model's name, as reported in errors and on extracted rows."""
        ...

    async def extract[S: BaseModel](
        self, text: str, schema: type[S], *, system_prompt: str | None = None
    ) -> S:
        """Ask the model about `text` and return its answer as a `schema` instance.

        Never returns `None`.

        Raises:
            EmptyCompletionError: the model answered with nothing.
            MalformedCompletionError: the answer does not validate against `schema`.
            RefusedCompletionError: the model refused.
            LlmProviderError: any other failure of the model or its transport.
        """
        ...
