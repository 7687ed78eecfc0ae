"""An embedding provider that remembers the vectors of the texts it embedded last.

A `Retriever` embeds every query it is asked, and an agent asks the same
ones again and again: with a remote model each is a paid round trip, with a
local one about 10 ms of a two-core machine. `CachingEmbeddingProvider`
wraps any `EmbeddingProvider` and answers a text it embedded recently from
memory. See ADR 0125.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from redstring.domain.exceptions import EmbeddingProviderError
from redstring.domain.validation import (
    check_collaborator,
    check_integer,
    check_texts,
    check_vector_count,
)
from redstring.ports.embedding import EmbeddingProvider, PassageEmbedder

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Vectors held by default: 1,024 of 768 floats are about 25 MB as Python floats.
DEFAULT_CACHE_SIZE: Final = 1024
#: The most vectors a cache may be asked to hold.
MAX_CACHE_SIZE: Final = 1_000_000


class CachingEmbeddingProvider(EmbeddingProvider, PassageEmbedder):
    """`embeddings`, with the vectors of the last `size` distinct texts it embedded kept.

    `embed` answers each text it holds from memory and asks the model for
    the others in one call, each distinct text once, in input order; the
    vectors returned are new lists, so a caller can never change what is
    held. Only `embed` is remembered (queries and names, short and asked
    again): `embed_passages` passes every passage through to the model's
    passage form, or to its `embed` when it has none, as
    `import_documents` would. `model` and `dimension` are the model's. A
    failed call keeps nothing. The wrapper does not own `embeddings`:
    close that yourself.

    Raises:
        ValueError: `embeddings` is not an `EmbeddingProvider`, or `size` is
            not an int within `0..MAX_CACHE_SIZE` (0 keeps nothing).
    """

    def __init__(self, embeddings: EmbeddingProvider, *, size: int = DEFAULT_CACHE_SIZE) -> None:
        self._provider = check_collaborator(embeddings, EmbeddingProvider, argument="embeddings")
        check_integer(size, argument="size", minimum=0, maximum=MAX_CACHE_SIZE)
        self._size = size
        # Oldest first: `popitem(last=False)` forgets the text used longest ago.
        self._held: OrderedDict[str, tuple[float, ...]] = OrderedDict()

    @property
    def model(self) -> str:
        """The wrapped provider's model."""
        return self._provider.model

    @property
    def dimension(self) -> int:
        """The wrapped provider's dimension."""
        return self._provider.dimension

    @property
    def held(self) -> int:
        """How many texts' vectors are held now."""
        return len(self._held)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order, each held one from memory.

        Raises:
            ValueError: `texts` is a string or no sequence of strings.
            EmbeddingProviderError: the model failed or returned a wrong
                count or a vector of the wrong length; nothing is kept.
        """
        batch = check_texts(texts)
        missing = list(dict.fromkeys(text for text in batch if text not in self._held))
        fresh: dict[str, tuple[float, ...]] = {}
        if missing:
            vectors = await self._provider.embed(missing)
            check_vector_count(vectors, len(missing), model=self.model)
            for text, vector in zip(missing, vectors, strict=True):
                if len(vector) != self.dimension:
                    reason = f"returned {len(vector)} components for {text!r}, not {self.dimension}"
                    raise EmbeddingProviderError(model=self.model, reason=reason)
            fresh = {
                text: tuple(float(value) for value in vector)
                for text, vector in zip(missing, vectors, strict=True)
            }
        found = [fresh[text] if text in fresh else self._held[text] for text in batch]
        for text in batch:
            if text in self._held:
                self._held.move_to_end(text)
        if self._size:
            self._held.update(fresh)
            while len(self._held) > self._size:
                self._held.popitem(last=False)
        return [list(vector) for vector in found]

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """The model's passage vectors (its `embed` without a passage form), never held."""
        if isinstance(self._provider, PassageEmbedder):
            return await self._provider.embed_passages(texts)
        return await self._provider.embed(texts)
