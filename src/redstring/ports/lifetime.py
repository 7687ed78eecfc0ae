"""The lifetime every adapter shares."""

from __future__ import annotations

from typing import Protocol, Self, runtime_checkable


@runtime_checkable
class AsyncClosable(Protocol):
    """An async context manager with an idempotent `close()`.

    `__aexit__` closes and returns `None`, so it never swallows an exception.
    An adapter closes only what it opened, never a client it was handed.
    """

    async def close(self) -> None:
        """Release what the adapter opened. Safe to call more than once."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...
