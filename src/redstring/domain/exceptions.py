"""The error hierarchy. Every error redstring raises on purpose is one of these.

```
RedstringError
├── DimensionMismatchError      a vector or collaborator of the wrong dimension
├── MissingEntityError          a relationship endpoint the store does not hold
├── MissingChunkError           a mention's chunk the store does not hold
├── MergeUndoError              a merge that cannot be undone: unknown, undone, or built on
├── UnknownDomainError          a domain id no bundled prompt answers to
├── PartialExtractionError      some chunks of a document failed to extract
├── ClosedError                 an adapter was called after close()
├── StoreError                  a store's backend failed, or holds what this version cannot read
│   └── EmbeddingModelMismatchError  vectors of one model searched or written with another
├── LlmProviderError            the language model failed
│   ├── EmptyCompletionError    ...by answering nothing
│   ├── MalformedCompletionError ...with an answer that fails the schema
│   └── RefusedCompletionError  ...by refusing
└── EmbeddingProviderError      the embedding model failed
```

Caller misuse (a blank name, a negative `k`) is a `ValueError` naming the bad
value, kept apart from these. Each subclass takes keyword-only identifiers,
keeps them as attributes and builds its message from them.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Self
from uuid import UUID  # noqa: TC003 - the surface test resolves the signature at runtime

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.ids import ChunkId, EntityId, TenantId


class RedstringError(Exception):
    """The root of every error redstring raises deliberately.

    Subclasses are built from keyword arguments, which are kept so that an
    error survives `copy`, `pickle` and a trip to another process.
    """

    _keywords: dict[str, object]

    def __new__(cls, *args: object, **keywords: object) -> Self:  # noqa: D102
        error = super().__new__(cls, *args)
        error._keywords = keywords
        return error

    def __reduce__(self) -> str | tuple[Any, ...]:
        if self._keywords:
            return (functools.partial(type(self), **self._keywords), ())
        return super().__reduce__()


class DimensionMismatchError(RedstringError):
    """A vector, or a collaborator, has a different dimension than required."""

    def __init__(self, *, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(f"dimension mismatch: expected {expected}, got {actual}")


class MissingEntityError(RedstringError):
    """An operation referred to an entity the store does not hold."""

    def __init__(self, *, entity_id: EntityId, tenant_id: TenantId) -> None:
        self.entity_id = entity_id
        self.tenant_id = tenant_id
        super().__init__(f"entity {entity_id} does not exist in tenant {tenant_id}")


class MergeUndoError(RedstringError):
    """A merge that cannot be undone: unknown, undone already, or built on by a later one."""

    def __init__(self, *, merge_event_id: UUID, tenant_id: TenantId, reason: str) -> None:
        self.merge_event_id = merge_event_id
        self.tenant_id = tenant_id
        self.reason = reason
        super().__init__(f"cannot undo merge {merge_event_id} of tenant {tenant_id}: {reason}")


class UnknownDomainError(RedstringError):
    """A domain id that no bundled domain prompt answers to."""

    def __init__(self, *, domain: str, available: Sequence[str]) -> None:
        self.domain = domain
        self.available = tuple(available)
        super().__init__(f"unknown domain {domain!r}; available: {', '.join(self.available)}")


class PartialExtractionError(RedstringError):
    """Some chunks of a document failed to extract, and the caller did not allow it."""

    def __init__(self, *, source_id: str, failed_chunks: int, total_chunks: int) -> None:
        self.source_id = source_id
        self.failed_chunks = failed_chunks
        self.total_chunks = total_chunks
        super().__init__(
            f"{failed_chunks} of {total_chunks} chunks of {source_id!r} failed to extract; "
            "pass skip_failed_chunks=True or allow_partial=True to keep the rest"
        )


class ClosedError(RedstringError):
    """An adapter was called after `close()`.

    Every adapter redstring ships raises it from every call made after it was
    closed, before looking at the arguments; `close()` itself may be called
    again. `resource` names the adapter, with its path or model when it has one.
    """

    def __init__(self, *, resource: str) -> None:
        self.resource = resource
        super().__init__(f"{resource} is closed")


class StoreError(RedstringError):
    """A store's backend failed, or holds data this version cannot read.

    Adapters translate their driver's exceptions into this at the edge, so a
    caller never catches a driver's own error type.
    """

    def __init__(self, *, store: str, reason: str) -> None:
        self.store = store
        self.reason = reason
        super().__init__(f"{store}: {reason}")


class EmbeddingModelMismatchError(StoreError):
    """A vector store holds vectors of one embedding model and was opened for another.

    Vectors of two models share no space: mixing them in one search would
    return confident nonsense rather than an error.
    """

    def __init__(self, *, store: str, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(
            store=store,
            reason=f"holds vectors of embedding model {expected!r}, not {actual!r}",
        )


class LlmProviderError(RedstringError):
    """The language model failed to produce a usable answer."""

    def __init__(self, *, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"model {model!r}: {reason}")


class EmptyCompletionError(LlmProviderError):
    """The model answered with nothing."""

    def __init__(self, *, model: str) -> None:
        super().__init__(model=model, reason="empty completion")


class MalformedCompletionError(LlmProviderError):
    """The model answered with something that does not fit the requested schema."""

    def __init__(self, *, model: str, detail: str) -> None:
        self.detail = detail
        super().__init__(model=model, reason=f"completion does not fit the schema: {detail}")


class RefusedCompletionError(LlmProviderError):
    """The model refused to answer."""

    def __init__(self, *, model: str, refusal: str) -> None:
        self.refusal = refusal
        super().__init__(model=model, reason=f"refused: {refusal}")


class EmbeddingProviderError(RedstringError):
    """The embedding model failed, or answered with the wrong count or shape."""

    def __init__(self, *, model: str, reason: str) -> None:
        self.model = model
        self.reason = reason
        super().__init__(f"embedding model {model!r}: {reason}")


class MissingChunkError(RedstringError):
    """An operation referred to a chunk the store does not hold."""

    def __init__(self, *, chunk_id: ChunkId, tenant_id: TenantId) -> None:
        self.chunk_id = chunk_id
        self.tenant_id = tenant_id
        super().__init__(f"chunk {chunk_id} does not exist in tenant {tenant_id}")


def missing_extra(needs: str, extra: str) -> ImportError:
    """The `ImportError` of a module whose optional dependency is not installed.

    `needs` says what is missing ("redstring.vector.adapters.hnsw needs
    hnswlib"); the message adds how to install the `extra` that brings it.
    """
    return ImportError(f"{needs}: install redstring[{extra}] (pip install 'redstring[{extra}]')")
