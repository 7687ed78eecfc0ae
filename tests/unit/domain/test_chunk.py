"""Chunks and mentions are validated at the field; stores re-check them."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

import pytest

from redstring.domain.chunk import (
    MAX_CHUNK_LENGTH,
    Chunk,
    Mention,
    check_chunks,
    check_mention_span,
    check_mentions,
    copy_chunk,
    mention_order,
)
from redstring.domain.ids import ChunkId, EntityId, RelationshipId
from redstring.testing.factories import TENANT, make_chunk


def test_a_chunk_spans_its_text_in_the_source() -> None:
    chunk = make_chunk("Ada", start=10)
    assert (chunk.start, chunk.end) == (10, 13)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"text": "  ", "end": 2}, "blank"),
        ({"text": "x" * (MAX_CHUNK_LENGTH + 1), "end": MAX_CHUNK_LENGTH + 1}, "limit"),
        ({"end": 4}, "end - start"),
        ({"start": 5, "end": 5}, "start < end"),
        ({"start": -1}, "greater than or equal"),
        ({"ordinal": True}, "integer"),
        ({"ordinal": "1"}, "integer"),
        ({"source_id": ""}, "source_id"),
        ({"text": "a\ud800", "end": 2}, "surrogate"),
        ({"metadata": {"a": float("inf")}}, "metadata"),
    ],
)
def test_a_chunk_no_store_could_hold_is_refused(fields: dict[str, Any], message: str) -> None:
    text = fields.pop("text", "Ada")
    with pytest.raises(ValueError, match=message):
        make_chunk(text, **fields)


def test_a_chunk_copy_shares_no_metadata() -> None:
    chunk = make_chunk("Ada", metadata={"tags": ["a"]})
    copy = copy_chunk(chunk)
    copy.metadata["tags"].append("b")
    assert copy == make_chunk("Ada", id=chunk.id, metadata={"tags": ["a", "b"]})
    assert chunk.metadata == {"tags": ["a"]}
    assert copy_chunk(make_chunk("Ada")).metadata == {}


def _mention(**fields: Any) -> Mention:
    return Mention(**{"tenant_id": TENANT, "chunk_id": ChunkId(uuid4()), **fields})


def test_a_mention_names_exactly_one_target() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        _mention()
    with pytest.raises(ValueError, match="exactly one"):
        _mention(entity_id=uuid4(), relationship_id=uuid4())


@pytest.mark.parametrize(("start", "end"), [(3, 3), (4, 3), (0, None), (None, 2)])
def test_a_mention_span_is_whole_and_forward(start: int | None, end: int | None) -> None:
    with pytest.raises(ValueError, match="start"):
        _mention(entity_id=uuid4(), start=start, end=end)


def test_a_mention_span_must_fit_its_chunk() -> None:
    chunk = make_chunk("Ada")
    check_mention_span(_mention(entity_id=uuid4(), start=0, end=3), chunk)
    check_mention_span(_mention(entity_id=uuid4()), chunk)
    with pytest.raises(ValueError, match="past the 3 characters"):
        check_mention_span(_mention(entity_id=uuid4(), start=1, end=4), chunk)


def test_mentions_order_by_chunk_kind_target_and_span() -> None:
    chunk = ChunkId(UUID(int=1))
    entity = _mention(chunk_id=chunk, entity_id=EntityId(UUID(int=9)), start=0, end=1)
    whole = _mention(chunk_id=chunk, entity_id=EntityId(UUID(int=9)))
    edge = _mention(chunk_id=chunk, relationship_id=RelationshipId(UUID(int=1)))
    earlier = _mention(chunk_id=ChunkId(UUID(int=0)), relationship_id=RelationshipId(UUID(int=5)))
    assert sorted([edge, entity, earlier, whole], key=mention_order) == [
        earlier,
        whole,
        entity,
        edge,
    ]


def test_check_chunks_names_the_first_bad_chunk_and_its_field() -> None:
    good = make_chunk("Ada")
    cases: list[tuple[Any, str]] = [
        (good.model_copy(update={"id": "x"}), r"chunks\[1\]\.id"),
        (good.model_copy(update={"tenant_id": 1}), r"chunks\[1\]\.tenant_id"),
        (good.model_copy(update={"source_id": 3}), r"chunks\[1\]\.source_id"),
        (good.model_copy(update={"text": 3}), r"chunks\[1\]\.text"),
        (good.model_copy(update={"metadata": []}), r"chunks\[1\]\.metadata"),
        (good.model_copy(update={"metadata": {"a": {1, 2}}}), r"chunks\[1\]\.metadata"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            check_chunks([make_chunk("Bob", source_id="other"), bad])
    with pytest.raises(ValueError, match="sequence"):
        check_chunks("Ada")


def test_check_mentions_re_checks_what_model_copy_let_through() -> None:
    good = _mention(entity_id=uuid4())
    with pytest.raises(ValueError, match=r"mentions\[0\]\.chunk_id"):
        check_mentions([good.model_copy(update={"chunk_id": "x"})])
    with pytest.raises(ValueError, match=r"mentions\[0\] must name exactly one"):
        check_mentions([good.model_copy(update={"relationship_id": uuid4()})])
    with pytest.raises(ValueError, match=r"target must be a uuid"):
        check_mentions([good.model_copy(update={"entity_id": "x"})])
    with pytest.raises(ValueError, match="sequence"):
        check_mentions(good)
    assert check_mentions([good]) == [good]


def test_a_checked_batch_is_returned_as_given() -> None:
    chunks = [make_chunk("Ada"), make_chunk("Bob", ordinal=1)]
    assert check_chunks(chunks) is chunks
    assert isinstance(chunks[0], Chunk)
