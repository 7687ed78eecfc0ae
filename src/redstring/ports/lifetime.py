"""The lifetime every adapter shares, written once.

`AsyncClosable` is the base class of every adapter redstring ships. It gives
an adapter its whole lifetime: `close()` (idempotent), `async with`, the
`closed` state, and one rule after closing: every coroutine method the
adapter defines raises `ClosedError`. See
[ADR 0017](../adr/0017-one-lifetime-and-one-rule-after-close.md).
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Concatenate, Final, Self

from redstring.domain.exceptions import ClosedError

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

#: Methods the closed check leaves alone: closing again is allowed, and
#: `__aexit__` only closes.
_UNGUARDED: Final = frozenset({"close", "__aexit__"})


def _guarded[A: AsyncClosable, **P, T](
    method: Callable[Concatenate[A, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[A, P], Coroutine[Any, Any, T]]:
    """`method`, raising `ClosedError` instead of running once its adapter is closed."""

    @functools.wraps(method)
    async def guarded(self: A, /, *args: P.args, **kwargs: P.kwargs) -> T:
        if self._closed:
            raise ClosedError(resource=self._resource_name())
        return await method(self, *args, **kwargs)

    _GUARDS.add(guarded)
    return guarded


#: Every method `_guarded` made, so that a subclass does not wrap one again.
_GUARDS: Final[set[object]] = set()


class AsyncClosable:
    """An async context manager with an idempotent `close()`, and refused after it.

    Every adapter subclasses it (next to the port it implements), and gets:

    - `close()`: releases what the adapter opened, by calling `_release()`
      once; a second call returns at once. The adapter is closed from the
      moment `close()` starts, even if releasing fails.
    - `async with adapter as same:` gives the adapter itself; leaving the
      block closes it and returns `None`, so an exception raised inside is
      never swallowed.
    - `closed`: whether `close()` has been called.
    - After `close()`, every public coroutine method the subclass has
      (its own or inherited, as from a port's checked base), and
      `__aenter__`, raises `ClosedError` naming the adapter, before it looks
      at its arguments. Properties (`model`, `dimension`) stay readable.

    An adapter closes only what it opened, never a client, connection or pool
    it was handed: the caller that made it owns it. A subclass overrides
    `_release()` to free its resources and `_describe()` to name itself in
    `ClosedError` and in its `repr` (`SqliteGraphStore('/a.db', open)`).
    """

    _closed: bool = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # Every public coroutine method the class has, its own or one it
        # inherits from a port's checked base (`GraphStoreBase`, ...).
        for name in dir(cls):
            if (not name.startswith("_") or name == "__aenter__") and name not in _UNGUARDED:
                member = inspect.getattr_static(cls, name)
                if inspect.iscoroutinefunction(member) and member not in _GUARDS:
                    setattr(cls, name, _guarded(member))

    @property
    def closed(self) -> bool:
        """Whether `close()` has been called."""
        return self._closed

    async def close(self) -> None:
        """Release what the adapter opened. Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        await self._release()

    async def _release(self) -> None:
        """Free what the adapter opened; called once, by the first `close()`."""

    def _check_open(self) -> None:
        """Raise `ClosedError` if `close()` has been called.

        The guard on every coroutine method calls it; a subclass calls it
        again where a call may wait (for a lock, a thread) while it closes.
        """
        if self._closed:
            raise ClosedError(resource=self._resource_name())

    def _describe(self) -> str | None:
        """What names this adapter within its class name (`'/a.db'`, `schema='x'`), if anything."""
        return None

    def _resource_name(self) -> str:
        """How `ClosedError` names this adapter: its class, and `_describe()` if any."""
        described = self._describe()
        return type(self).__name__ if described is None else f"{type(self).__name__}({described})"

    def __repr__(self) -> str:
        described = self._describe()
        if described is None:
            return object.__repr__(self)
        state = "closed" if self._closed else "open"
        return f"{type(self).__name__}({described}, {state})"

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
