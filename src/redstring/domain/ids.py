"""Identifier types.

Ids are `NewType`s over `UUID` so that mypy refuses an `EntityId` where a
`TenantId` was meant, at no runtime cost.
"""

from __future__ import annotations

from typing import NewType
from uuid import UUID

#: Identifies an entity within its tenant. The store key is `(tenant_id, id)`.
EntityId = NewType("EntityId", UUID)
#: Identifies a relationship within its tenant.
RelationshipId = NewType("RelationshipId", UUID)
#: Identifies a tenant. Nothing ever crosses from one tenant to another.
TenantId = NewType("TenantId", UUID)
#: Identifies the document an entity or relationship was extracted from.
SourceId = NewType("SourceId", str)
#: Identifies a chunk (a passage of a source document) within its tenant.
ChunkId = NewType("ChunkId", UUID)
