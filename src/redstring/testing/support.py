"""What the compliance suites share: hypothesis settings and a coroutine runner."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Coroutine


def property_settings(max_examples: int) -> settings:
    """Settings for a suite's properties, at most `max_examples` examples each.

    Every adapter's subclass runs the same properties, so hypothesis sees
    several executors; each example builds its own store, so none carries
    state across.
    """
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.differing_executors,
        ],
    )


def run[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion inside a synchronous hypothesis test."""
    return asyncio.run(coroutine)
