"""Vectors as stored, and matches as reported, with one pinned score scale.

"Score" means different things across vector databases: a distance where
lower is better, a cosine on `-1..1`, an inner product. An adapter that passed
its backend's number through would return plausible nonsense rather than an
error. So the scale is pinned here: `VectorMatch.score` is cosine similarity
mapped onto `0..1` by `(1 + cos) / 2`, higher is better, and an adapter never
reports a distance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redstring.domain.ids import EntityId, TenantId  # noqa: TC001 - pydantic needs them
from redstring.domain.json_safety import check_json


class VectorRecord(BaseModel):
    """One entity's vector in one tenant, with metadata to filter on.

    `metadata["entity_type"]`, when present, is what `VectorStore.search`'s
    `entity_types` filter compares against. The numeric checks (length,
    finite, non-zero) are the store's, which knows its dimension.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_id: EntityId
    tenant_id: TenantId
    vector: list[float]
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _metadata_is_storable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_json(value, field="metadata")


class VectorMatch(BaseModel):
    """One search hit: cosine mapped onto `0..1`, higher is better."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_id: EntityId
    score: float = Field(ge=0.0, le=1.0)
    metadata: dict[str, Any] = Field(default_factory=dict)


def cosine_to_score(cosine: float) -> float:
    """Map a cosine on `-1..1` onto the `0..1` score scale, clamping rounding error."""
    return min(1.0, max(0.0, (1.0 + cosine) / 2.0))


def cosine_similarity(left: Sequence[float], right: Sequence[float]) -> float:
    """Cosine of the angle between two equal-length, non-zero vectors, on `-1..1`.

    Each vector is scaled by its largest magnitude first, so neither very
    large nor very small components overflow or underflow the squares.

    Raises:
        ValueError: either side is not a sequence of numbers, the lengths
            differ, either vector is zero, or a component is NaN or infinite.
    """
    for argument, value in (("left", left), ("right", right)):
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ValueError(f"{argument} must be a sequence of numbers, got {value!r:.80}")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            raise ValueError(f"{argument} must hold only numbers, got {value!r:.80}")
    if len(left) != len(right):
        raise ValueError(f"vectors differ in length: {len(left)} and {len(right)}")
    scaled = []
    for vector in (left, right):
        if not all(math.isfinite(x) for x in vector):
            raise ValueError("cosine is undefined for a vector with NaN or infinity")
        largest = max((abs(x) for x in vector), default=0.0)
        if largest == 0.0:
            raise ValueError("cosine is undefined for a zero vector")
        scaled.append([x / largest for x in vector])
    a, b = scaled
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norms))
