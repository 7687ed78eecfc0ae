"""The events that keep documents' passages: their checks and their pinned wire format."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from redstring.domain.chunk import Mention
from redstring.domain.events import (
    DocumentChunked,
    DocumentDeleted,
    PassagesEmbedded,
    event_from_json,
    event_to_json,
)
from redstring.domain.ids import ChunkId, EntityId, SourceId
from redstring.domain.vector import VectorRecord
from redstring.testing.factories import OTHER_TENANT, TENANT, make_chunk

FIXED = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
CHUNK = make_chunk("Ada wrote.", id=ChunkId(UUID(int=3)), source_id=SourceId("doc"), ordinal=0)
ADA = EntityId(UUID(int=9))


def chunked(**overrides: Any) -> DocumentChunked:
    fields: dict[str, Any] = {
        "event_id": UUID(int=1),
        "tenant_id": TENANT,
        "source_id": SourceId("doc"),
        "occurred_at": FIXED,
        "chunks": (CHUNK,),
        "mentions": (Mention(tenant_id=TENANT, chunk_id=CHUNK.id, entity_id=ADA, start=0, end=3),),
        **overrides,
    }
    return DocumentChunked(**fields)


def test_the_wire_formats_are_pinned_and_round_trip() -> None:
    event = chunked()
    assert json.loads(event_to_json(event)) == {
        "kind": "document_chunked",
        "version": 1,
        "event_id": "00000000-0000-0000-0000-000000000001",
        "tenant_id": "00000000-0000-4000-8000-000000000001",
        "source_id": "doc",
        "occurred_at": "2024-05-06T07:08:09Z",
        "chunks": [json.loads(CHUNK.model_dump_json())],
        "mentions": [
            {
                "tenant_id": "00000000-0000-4000-8000-000000000001",
                "chunk_id": "00000000-0000-0000-0000-000000000003",
                "entity_id": "00000000-0000-0000-0000-000000000009",
                "relationship_id": None,
                "start": 0,
                "end": 3,
            }
        ],
    }
    deleted = DocumentDeleted(
        event_id=UUID(int=2),
        tenant_id=TENANT,
        occurred_at=FIXED,
        source_id=SourceId("doc"),
        chunk_ids=(CHUNK.id,),
    )
    assert json.loads(event_to_json(deleted)) == {
        "kind": "document_deleted",
        "version": 1,
        "event_id": "00000000-0000-0000-0000-000000000002",
        "tenant_id": "00000000-0000-4000-8000-000000000001",
        "occurred_at": "2024-05-06T07:08:09Z",
        "source_id": "doc",
        "chunk_ids": ["00000000-0000-0000-0000-000000000003"],
    }
    embedded = PassagesEmbedded(
        event_id=UUID(int=4),
        tenant_id=TENANT,
        occurred_at=FIXED,
        model="m",
        dimension=2,
        records=(VectorRecord(entity_id=EntityId(CHUNK.id), tenant_id=TENANT, vector=[0.5, 1.0]),),
    )
    assert json.loads(event_to_json(embedded))["kind"] == "passages_embedded"
    for each in (event, deleted, embedded):
        assert event_from_json(event_to_json(each)) == each


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        pytest.param({"chunks": ()}, "chunks must not be empty", id="no-chunks"),
        pytest.param(
            {"chunks": (CHUNK.model_copy(update={"tenant_id": OTHER_TENANT}),)},
            "belongs to tenant",
            id="other-tenant",
        ),
        pytest.param({"source_id": "other"}, "belongs to tenant", id="other-source"),
        pytest.param({"source_id": "  "}, "source_id must not be blank", id="blank-source"),
        pytest.param(
            {"chunks": (CHUNK, CHUNK.model_copy(update={"ordinal": 1}))},
            "comes twice",
            id="a-chunk-twice",
        ),
        pytest.param(
            {
                "mentions": (
                    Mention(tenant_id=TENANT, chunk_id=ChunkId(UUID(int=5)), entity_id=ADA),
                )
            },
            "names no chunk of the event",
            id="mention-of-another-chunk",
        ),
        pytest.param(
            {"mentions": (Mention(tenant_id=OTHER_TENANT, chunk_id=CHUNK.id, entity_id=ADA),)},
            "names no chunk of the event",
            id="mention-in-another-tenant",
        ),
        pytest.param(
            {
                "mentions": (
                    Mention(tenant_id=TENANT, chunk_id=CHUNK.id, entity_id=ADA, start=9, end=11),
                )
            },
            "ends at 11, past its 10 characters",
            id="span-past-the-text",
        ),
    ],
)
def test_a_chunked_document_that_could_not_be_projected_is_refused(
    overrides: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        chunked(**overrides)


def test_a_mention_ending_exactly_at_the_chunks_end_is_accepted() -> None:
    mention = Mention(tenant_id=TENANT, chunk_id=CHUNK.id, entity_id=ADA, start=4, end=10)
    assert chunked(mentions=(mention,)).mentions == (mention,)


def test_passage_records_are_checked_like_entity_records() -> None:
    def embedded(vector: list[float], tenant: Any = TENANT) -> PassagesEmbedded:
        return PassagesEmbedded(
            event_id=UUID(int=4),
            tenant_id=TENANT,
            occurred_at=FIXED,
            model="m",
            dimension=2,
            records=(VectorRecord(entity_id=EntityId(CHUNK.id), tenant_id=tenant, vector=vector),),
        )

    with pytest.raises(ValueError, match=r"record for chunk .* all zeros"):
        embedded([0.0, 0.0])
    with pytest.raises(ValueError, match="belongs to tenant"):
        embedded([1.0, 0.0], OTHER_TENANT)
    with pytest.raises(ValueError, match="model must not be blank"):
        PassagesEmbedded(
            event_id=UUID(int=4),
            tenant_id=TENANT,
            occurred_at=FIXED,
            model=" ",
            dimension=1,
            records=(),
        )


def test_a_deleted_document_needs_a_source() -> None:
    with pytest.raises(ValueError, match="source_id must not be blank"):
        DocumentDeleted(
            event_id=UUID(int=2), tenant_id=TENANT, occurred_at=FIXED, source_id=SourceId(" ")
        )
