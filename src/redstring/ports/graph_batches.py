"""The graph store's batch reads: many entities' relationships, merges or name candidates at once.

Each is a capability a store may offer beside the graph store port (ADR
0122, ADR 0123). A caller that reads many ids or names asks for them in one
call where the store offers it; the answer is what the one-at-a-time read
gives for each, so a store without it loses only speed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from redstring.domain.names import NAME_CANDIDATE_LIMIT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship


@runtime_checkable
class MergedIdBatchReader(Protocol):
    """Lists the ids merged into many entities in one read."""

    async def merged_ids_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[EntityId]]:
        """`merged_ids` of each requested id, read at once; every requested id is a key.

        Read from one snapshot; an id repeated in the request is one key.
        See ADR 0122.
        """
        ...


@runtime_checkable
class RelationshipBatchReader(Protocol):
    """Reads the relationships of many entities in one read."""

    async def relationships_of(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, list[Relationship]]:
        """`get_relationships` of each requested id, read at once; every requested id is a key.

        Read from one snapshot; an id repeated in the request is one key,
        and a relationship joining two requested ids is in both lists, as
        separate objects. See ADR 0122.
        """
        ...


@runtime_checkable
class NameCandidateBatchReader(Protocol):
    """Finds the name candidates of many queries in one read."""

    async def find_name_candidates_of(
        self, queries: Sequence[str], tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> dict[str, list[Entity]]:
        """`find_name_candidates` of each requested query, read at once; every query is a key.

        Read from one snapshot; a query repeated in the request is one key.
        The entities are copies, and an entity several queries find may be
        one copy in each of their lists. See ADR 0123.

        Raises:
            ValueError: `queries` is a string or no sequence, an item is no
                string, or `limit` is not a non-negative integer.
        """
        ...


@runtime_checkable
class SharedNameCandidateBatchReader(Protocol):
    """Finds the name candidates of many queries at once and lends the store's own entities."""

    async def find_shared_name_candidates_of(
        self, queries: Sequence[str], tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> dict[str, list[Entity]]:
        """`find_shared_name_candidates` of each requested query, read at once.

        Every query is a key, one repeated is one key. Lent as
        `SharedNameCandidateReader` lends: change none of them, and hand out
        only copies. Raises as `find_name_candidates_of` does. See ADR 0123.
        """
        ...
