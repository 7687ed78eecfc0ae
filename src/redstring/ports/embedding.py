"""The embedding model port."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors of one constant dimension."""

    @property
    def model(self) -> str:
        """The model's name, as reported in errors and events."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector this provider returns. Constant."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, **in input order** -- the order is the contract.

        `[]` for `[]`, without calling the model.

        Raises:
            EmbeddingProviderError: the model failed, or answered with the
                wrong number of vectors or a vector of the wrong length.
        """
        ...


@runtime_checkable
class PassageEmbedder(Protocol):
    """A model with a form of its own for passages that queries will search (e5's `"passage: "`).

    Optional: a caller embedding passages uses `embed_passages` when the
    provider offers it and `EmbeddingProvider.embed` otherwise
    (`redstring.composition.documents` does). Its vectors are of the
    provider's `dimension`, to be compared with the vectors `embed` gives
    the queries. See ADR 0086.
    """

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """One passage vector per text, in input order; `[]` for `[]` without calling the model.

        Raises:
            EmbeddingProviderError: as `EmbeddingProvider.embed`.
        """
        ...
