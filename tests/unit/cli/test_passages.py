"""The passage records `export`, `view` and `mcp` show: spans in the document, and snippets."""

from __future__ import annotations

from uuid import UUID

from redstring import InMemoryChunkStore, Mention
from redstring.cli.passages import CONTEXT_CHARS, WHOLE_CHARS, passages_of, snippet
from redstring.domain.ids import EntityId, RelationshipId
from redstring.testing.factories import OTHER_TENANT, TENANT, make_chunk

LONG = " ".join(f"word{n:03d}" for n in range(60))  # 60 words of 7 letters, 479 characters


def test_a_snippet_keeps_whole_words_around_the_mention_and_marks_each_cut() -> None:
    chunk = make_chunk(LONG)
    start = LONG.index("word030")
    shown = snippet(chunk, start, start + 7)
    assert shown.startswith("…word")
    assert shown.endswith("…")
    words = shown.strip("…").split()
    assert "word030" in words
    assert all(len(word) == 7 for word in words)
    assert 2 * CONTEXT_CHARS <= len(shown) <= 2 * CONTEXT_CHARS + 7 + 2 * 8 + 2


def test_a_snippet_at_the_edges_is_not_marked_and_folds_whitespace() -> None:
    chunk = make_chunk("Ada\n\n Lovelace   wrote.")
    assert snippet(chunk, 0, 3) == "Ada Lovelace wrote."
    assert snippet(chunk, None, None) == "Ada Lovelace wrote."


def test_a_snippet_without_a_span_is_the_passage_s_beginning() -> None:
    shown = snippet(make_chunk(LONG), None, None)
    assert shown.endswith("…")
    assert not shown.startswith("…")
    assert WHOLE_CHARS <= len(shown) <= WHOLE_CHARS + 8


async def test_passages_are_keyed_by_what_they_mention_with_spans_in_the_document() -> None:
    chunks = InMemoryChunkStore()
    first = make_chunk("Ada met Babbage.", start=100, metadata={"title": "Meeting"})
    second = make_chunk("Babbage built.", source_id="a-doc", ordinal=0, metadata={"title": 7})
    await chunks.put_chunks([first, second])
    ada, babbage = EntityId(UUID(int=1)), EntityId(UUID(int=2))
    met = RelationshipId(UUID(int=3))
    await chunks.put_mentions(
        [
            Mention(tenant_id=TENANT, chunk_id=first.id, entity_id=ada, start=0, end=3),
            Mention(tenant_id=TENANT, chunk_id=first.id, entity_id=babbage, start=8, end=15),
            Mention(tenant_id=TENANT, chunk_id=second.id, entity_id=babbage, start=0, end=7),
            Mention(tenant_id=TENANT, chunk_id=first.id, relationship_id=met),
        ]
    )
    found = await passages_of(
        chunks, TENANT, entity_ids=[ada, babbage, ada], relationship_ids=[met]
    )
    assert [(each["source_id"], each["start"], each["end"]) for each in found[babbage]] == [
        ("a-doc", 0, 7),
        ("doc-1", 108, 115),
    ]
    assert found[babbage][0]["title"] is None  # a title that is not a string is not shown
    [said] = found[ada]
    assert said == {
        "chunk_id": str(first.id),
        "source_id": "doc-1",
        "title": "Meeting",
        "start": 100,
        "end": 103,
        "snippet": "Ada met Babbage.",
    }
    [whole] = found[met]
    assert (whole["start"], whole["end"]) == (100, 116)
    assert await passages_of(chunks, OTHER_TENANT, entity_ids=[ada]) == {}


async def test_passages_of_many_entities_are_read_in_batches_and_none_is_lost() -> None:
    chunks = InMemoryChunkStore()
    chunk = make_chunk(LONG)
    await chunks.put_chunks([chunk])
    ids = [EntityId(UUID(int=n + 1)) for n in range(1201)]
    await chunks.put_mentions(
        [
            Mention(tenant_id=TENANT, chunk_id=chunk.id, entity_id=entity_id, start=0, end=7)
            for entity_id in ids
        ]
    )
    found = await passages_of(chunks, TENANT, entity_ids=ids)
    assert sorted(found) == sorted(ids)
    assert all(len(records) == 1 for records in found.values())
