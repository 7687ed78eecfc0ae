"""The lifetime every adapter shares, as a suite every adapter's tests subclass.

Subclass `LifetimeCompliance`, set `port` to the protocol the adapter
implements and implement `new_adapter()`; the store and event-log suites
include it already. The suite holds the adapter to `AsyncClosable`'s rules: `async
with` gives the adapter and lets an exception through, `close()` is
idempotent, and after it every coroutine method of the port, and entering
it again, raises `ClosedError`, before the arguments are looked at.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import pytest

from redstring.domain.exceptions import ClosedError


def port_coroutine_methods(port: type) -> list[str]:
    """The names of the port's public coroutine methods, sorted."""
    return sorted(
        name
        for name in dir(port)
        if not name.startswith("_") and inspect.iscoroutinefunction(getattr(port, name))
    )


def placeholder_arguments(port: type, name: str) -> tuple[list[None], dict[str, None]]:
    """`None` for every required parameter of `port.name`: a call that could never succeed."""
    positional: list[None] = []
    keywords: dict[str, None] = {}
    for parameter in list(inspect.signature(getattr(port, name)).parameters.values())[1:]:
        if parameter.default is not inspect.Parameter.empty:
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = None
        elif parameter.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            positional.append(None)
    return positional, keywords


class LifetimeCompliance:
    """Every rule of `redstring.ports.AsyncClosable`; set `port`, provide `new_adapter`."""

    #: The protocol whose every coroutine method must be refused after close.
    port: ClassVar[type]

    def new_adapter(self) -> Any:
        raise NotImplementedError

    async def test_async_with_gives_the_adapter_and_closes_it(self) -> None:
        adapter = self.new_adapter()
        assert not adapter.closed
        async with adapter as entered:
            assert entered is adapter
            assert not adapter.closed
        assert adapter.closed

    async def test_leaving_async_with_lets_the_exception_through(self) -> None:
        adapter = self.new_adapter()
        with pytest.raises(RuntimeError, match="boom"):
            async with adapter:
                raise RuntimeError("boom")
        assert adapter.closed

    async def test_close_may_be_called_again(self) -> None:
        adapter = self.new_adapter()
        await adapter.close()
        await adapter.close()
        assert adapter.closed

    async def test_every_call_after_close_raises_closed_error(self) -> None:
        adapter = self.new_adapter()
        await adapter.close()
        methods = port_coroutine_methods(self.port)
        assert methods, f"{self.port.__name__} has no coroutine methods to refuse"
        for name in methods:
            positional, keywords = placeholder_arguments(self.port, name)
            with pytest.raises(ClosedError) as raised:
                await getattr(adapter, name)(*positional, **keywords)
            assert type(adapter).__name__ in raised.value.resource, name
            assert "is closed" in str(raised.value)
        await adapter.close()

    async def test_a_closed_adapter_cannot_be_entered_again(self) -> None:
        adapter = self.new_adapter()
        await adapter.close()
        with pytest.raises(ClosedError):
            async with adapter:
                pass  # pragma: no cover - never entered


class StoreLifetimeCompliance[S](LifetimeCompliance):
    """`LifetimeCompliance` for a store's suite, whose adapter is the store `new_store` makes."""

    def new_adapter(self) -> S:
        return self.new_store()

    def new_store(self) -> S:
        raise NotImplementedError
