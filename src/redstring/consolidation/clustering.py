"""Transitive closure of merge decisions, and which entity of a cluster stands for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


class DisjointSets:
    """Union-find over positions `0..size-1`; each set's root is its smallest member."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        self._parent = list(range(size))
        # Both roots of every union: an item outside it was never joined to anything.
        self._joined: set[int] = set()

    def find(self, item: int) -> int:
        """The root of `item`'s set."""
        parent = self._parent
        root = item
        while parent[root] != root:
            root = parent[root]
        while parent[item] != root:
            parent[item], item = root, parent[item]
        return root

    def union(self, left: int, right: int) -> bool:
        """Join the two sets; return whether they were apart."""
        a, b = self.find(left), self.find(right)
        if a == b:
            return False
        self._parent[max(a, b)] = min(a, b)
        self._joined.update((a, b))
        return True

    def groups(self) -> list[list[int]]:
        """Every set of two or more members, each sorted, ordered by smallest member."""
        members: dict[int, list[int]] = {}
        for item in sorted(self._joined):
            members.setdefault(self.find(item), []).append(item)
        return [group for _, group in sorted(members.items()) if len(group) > 1]


def closure(size: int, edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """The clusters the edges join transitively (singletons left out)."""
    sets = DisjointSets(size)
    for left, right in edges:
        sets.union(left, right)
    return sets.groups()
