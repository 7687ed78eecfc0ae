"""A hash-based embedding model: deterministic vectors with no semantics.

A text's vector is a function of its UTF-8 bytes (a lone surrogate encoded as
is) and the dimension alone: SHAKE-256 of the bytes gives two bytes per
component, read as a little-endian `uint16` and mapped onto `[-1, 1]` without
ever hitting zero. So identical texts get identical vectors (cosine 1.0) in
every process and on every platform, different texts get unrelated vectors
(cosine near 0 at a realistic dimension), and the text is not normalized:
"Ada" and "ada" are unrelated.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import numpy as np

from redstring.domain.exceptions import EmbeddingProviderError
from redstring.domain.json_safety import check_text
from redstring.domain.limits import MAX_DIMENSION
from redstring.domain.validation import check_integer, check_texts
from redstring.ports.embedding import EmbeddingProvider
from redstring.ports.lifetime import AsyncClosable

if TYPE_CHECKING:
    from collections.abc import Sequence

_BYTES_PER_COMPONENT: Final = 2
_HALF_RANGE: Final = (2 ** (8 * _BYTES_PER_COMPONENT) - 1) / 2
"""Midpoint of the `uint16` range, a half-integer, so no component maps to zero."""


class FakeEmbeddingProvider(AsyncClosable, EmbeddingProvider):
    """An `EmbeddingProvider` whose vectors hash the text; for tests, not for meaning.

    Every non-empty `embed` call is recorded in `calls`, including one that
    fails through `fail_on`. Components lie in `[-1, 1]`, are finite, never
    zero and exactly representable as float32, so a float32 store returns
    them unchanged; vectors are not unit-length.

    Raises:
        ValueError: `dimension` is not a positive int, `model` is blank, or
            `fail_on` is not a string.
    """

    def __init__(
        self,
        *,
        model: str = "fake/hash-v1",
        dimension: int = 768,
        fail_on: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-blank string, got {model!r}")
        check_text(model, field="model")
        check_integer(dimension, argument="dimension", minimum=1, maximum=MAX_DIMENSION)
        if fail_on is not None and not isinstance(fail_on, str):
            raise ValueError(f"fail_on must be a string or None, got {fail_on!r}")
        self._model = model
        self._dimension = dimension
        self._fail_on = fail_on
        self._calls: list[tuple[str, ...]] = []

    @property
    def model(self) -> str:
        """The model name this fake reports, in errors and events."""
        return self._model

    @property
    def dimension(self) -> int:
        """The length of every vector this fake returns."""
        return self._dimension

    @property
    def calls(self) -> tuple[tuple[str, ...], ...]:
        """The texts of every non-empty `embed` call so far, one tuple per call, oldest first."""
        return tuple(self._calls)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; `[]` for `[]` without recording a call.

        Raises:
            EmbeddingProviderError: some text contains `fail_on`.
            ValueError: `texts` is a string or not a sequence, or an item is
                not a string (the index is named).
        """
        batch = tuple(check_texts(texts))
        if not batch:
            return []
        self._calls.append(batch)
        if self._fail_on is not None:
            for index, text in enumerate(batch):
                if self._fail_on in text:
                    raise EmbeddingProviderError(
                        model=self._model,
                        reason=f"texts[{index}] contains fail_on {self._fail_on!r}",
                    )
        return self._vectors(batch)

    def _vectors(self, batch: tuple[str, ...]) -> list[list[float]]:
        width = self._dimension * _BYTES_PER_COMPONENT
        digest = b"".join(
            [
                hashlib.shake_256(text.encode("utf-8", "surrogatepass")).digest(width)
                for text in batch
            ]
        )
        raw = np.frombuffer(digest, dtype="<u2").reshape(len(batch), self._dimension)
        half = np.float32(_HALF_RANGE)
        vectors = (raw.astype(np.float32) - half) / half
        return vectors.tolist()  # type: ignore[no-any-return]

    def _resource_name(self) -> str:
        return f"{type(self).__name__}(model={self._model!r})"
