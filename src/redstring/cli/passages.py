"""The passages behind an entity or a relationship, as `export`, `view` and `mcp` show them.

A mention (`redstring.domain.chunk.Mention`) says which chunk names an
entity, and where; `passages_of` joins it to its chunk and gives each as a
`PassageRecord`: the chunk id, the document (source id and title), the
span in the document (the mention's, or the whole passage's when the
mention has none) and a snippet of the text around it. Mentions are read
in batches, so a whole tenant's never make one huge query.
"""

from __future__ import annotations

from itertools import batched
from typing import TYPE_CHECKING, Final, Protocol, TypedDict

from redstring.ports.chunk_store import ChunkReader, MentionReader

if TYPE_CHECKING:
    from collections.abc import Sequence
    from uuid import UUID

    from redstring.domain.chunk import Chunk, Mention
    from redstring.domain.ids import EntityId, RelationshipId, TenantId

#: Characters of text a snippet keeps on each side of a mention.
CONTEXT_CHARS: Final = 80
#: Characters of a passage a snippet keeps when the mention has no span.
WHOLE_CHARS: Final = 2 * CONTEXT_CHARS
#: Ids asked for in one read of the mentions.
_BATCH: Final = 500


class PassageReader(ChunkReader, MentionReader, Protocol):
    """What `passages_of` reads: a chunk store's chunks and mentions."""


class PassageRecord(TypedDict):
    """One passage that mentions an entity or a relationship."""

    chunk_id: str
    source_id: str
    title: str | None
    start: int
    end: int
    snippet: str


def snippet(chunk: Chunk, start: int | None, end: int | None) -> str:
    """The text of `chunk` around `start:end` (chunk offsets), whitespace folded.

    `CONTEXT_CHARS` either side, widened to whole words; `…` marks a cut.
    Without a span, the passage's first `WHOLE_CHARS` characters.
    """
    text = chunk.text
    if start is None or end is None:
        left, right = 0, min(len(text), WHOLE_CHARS)
    else:
        left, right = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    while left > 0 and not text[left - 1].isspace():
        left -= 1
    while right < len(text) and not text[right].isspace():
        right += 1
    body = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + body + ("…" if right < len(text) else "")


def _record(chunk: Chunk, mention: Mention) -> PassageRecord:
    title = chunk.metadata.get("title")
    start, end = chunk.start, chunk.end
    if mention.start is not None and mention.end is not None:
        start, end = chunk.start + mention.start, chunk.start + mention.end
    return PassageRecord(
        chunk_id=str(chunk.id),
        source_id=chunk.source_id,
        title=title if isinstance(title, str) else None,
        start=start,
        end=end,
        snippet=snippet(chunk, mention.start, mention.end),
    )


async def _collect(
    chunks: PassageReader,
    tenant_id: TenantId,
    mentions: Sequence[Mention],
    found: dict[UUID, list[PassageRecord]],
) -> None:
    """Add each mention's passage to `found`, under the id it mentions."""
    wanted = list(dict.fromkeys(mention.chunk_id for mention in mentions))
    held = {chunk.id: chunk for chunk in await chunks.get_chunks(wanted, tenant_id)}
    for mention in mentions:
        chunk = held.get(mention.chunk_id)
        target = mention.entity_id or mention.relationship_id
        if chunk is not None and target is not None:
            found.setdefault(target, []).append(_record(chunk, mention))


async def passages_of(
    chunks: PassageReader,
    tenant_id: TenantId,
    *,
    entity_ids: Sequence[EntityId] = (),
    relationship_ids: Sequence[RelationshipId] = (),
) -> dict[UUID, list[PassageRecord]]:
    """Each mentioned entity's or relationship's passages, by document then offset.

    Keyed by the entity or relationship id; one without mentions is absent.
    """
    found: dict[UUID, list[PassageRecord]] = {}
    for entities in batched(dict.fromkeys(entity_ids), _BATCH):
        mentions = await chunks.mentions_of(tenant_id, entity_ids=entities)
        await _collect(chunks, tenant_id, mentions, found)
    for relationships in batched(dict.fromkeys(relationship_ids), _BATCH):
        mentions = await chunks.mentions_of(tenant_id, relationship_ids=relationships)
        await _collect(chunks, tenant_id, mentions, found)
    for records in found.values():
        records.sort(key=lambda record: (record["source_id"], record["start"], record["end"]))
    return found
