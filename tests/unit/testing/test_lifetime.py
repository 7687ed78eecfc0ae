"""The lifetime suite's helpers find every port method and build calls that cannot succeed."""

from __future__ import annotations

from typing import Protocol

from redstring.ports.graph_store import GraphReader
from redstring.testing.lifetime import placeholder_arguments, port_coroutine_methods


class _Port(Protocol):
    async def fetch(
        self, first: int, /, second: str, *rest: int, key: str, flag: bool = False
    ) -> None:
        """Every kind of parameter, with and without a default."""

    async def _hidden(self) -> None:
        """Private: not part of the port."""

    def plain(self) -> None:
        """Not a coroutine: not refused by the lifetime rule."""


def test_only_public_coroutine_methods_are_listed() -> None:
    assert port_coroutine_methods(_Port) == ["fetch"]


def test_every_required_parameter_gets_a_placeholder_and_optional_ones_none() -> None:
    assert placeholder_arguments(_Port, "fetch") == ([None, None], {"key": None})


def test_a_graph_reader_lists_each_read() -> None:
    assert "find_by_blocking_keys" in port_coroutine_methods(GraphReader)
    assert placeholder_arguments(GraphReader, "neighbors") == ([None, None], {})
