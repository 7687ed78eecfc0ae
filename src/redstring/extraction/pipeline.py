"""Extracting a whole document: chunk, ask the model per chunk, map, merge, resolve."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redstring.domain.entity import Entity
from redstring.domain.exceptions import LlmProviderError
from redstring.domain.json_safety import check_name, shown
from redstring.domain.limits import MAX_CONCURRENCY
from redstring.domain.normalization import normalize_name
from redstring.domain.relationship import Relationship
from redstring.domain.source import SourceDocument
from redstring.domain.validation import check_collaborator, check_integer, check_tenant_id
from redstring.extraction.chunking import Chunk, Chunker, SlidingWindowChunker
from redstring.extraction.mapping import (
    MappedChunk,
    llm_provenance,
    map_extraction,
    relationship_id_for,
)
from redstring.extraction.schema import Extraction
from redstring.ports.llm import LlmProvider

#: A system prompt is the caller's own text, so it is bounded only loosely.
_MAX_PROMPT = 1_000_000

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from redstring.domain.ids import EntityId, RelationshipId, SourceId, TenantId
    from redstring.extraction.schema import ExtractedRelationship


@dataclass(frozen=True, slots=True)
class ChunkFailure:
    """A chunk the model failed on: its index and the error it raised."""

    index: int
    error: LlmProviderError


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """What one document yielded, merged across its chunks.

    `entities` hold one entity per id and `relationships` one per id, each in
    first-seen order. `chunks` counts every chunk, failed ones included, and
    `failed_chunks` lists those whose model call failed, by index;
    `dropped_rows` counts entity and relationship rows that failed
    validation; `unresolved_relationships` counts rows whose source or target
    name matches no extracted entity. `spans` holds the chunks themselves,
    and `entity_chunks` and `relationship_chunks` the indexes of the chunks
    each entity and relationship was extracted from, ascending.
    """

    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]
    chunks: int
    failed_chunks: tuple[ChunkFailure, ...]
    dropped_rows: int
    unresolved_relationships: int
    spans: tuple[Chunk, ...] = ()
    entity_chunks: Mapping[EntityId, tuple[int, ...]] = field(default_factory=dict)
    relationship_chunks: Mapping[RelationshipId, tuple[int, ...]] = field(default_factory=dict)


class ExtractionPipeline:
    """Extracts entities and relationships from documents through an `LlmProvider`.

    Each chunk from `chunker` (a default `SlidingWindowChunker` when `None`)
    is one model call with the `Extraction` schema. Up to `concurrency` calls
    run at once; the result does not depend on it. The pipeline reads and
    writes no store.

    Raises:
        ValueError: `provider` or `chunker` does not implement its port, or
            `concurrency` is not an integer within `1..MAX_CONCURRENCY`.
    """

    def __init__(
        self, provider: LlmProvider, *, chunker: Chunker | None = None, concurrency: int = 1
    ) -> None:
        check_collaborator(provider, LlmProvider, argument="provider")
        if chunker is not None:
            check_collaborator(chunker, Chunker, argument="chunker")
        check_integer(concurrency, argument="concurrency", minimum=1, maximum=MAX_CONCURRENCY)
        self._provider = provider
        self._chunker = chunker if chunker is not None else SlidingWindowChunker()
        self._concurrency = concurrency

    async def run(
        self, document: SourceDocument, *, tenant_id: TenantId, system_prompt: str
    ) -> ExtractionResult:
        """Extract `document` into `tenant_id` using `system_prompt` for every chunk.

        Entities sharing an id merge: the first name, type and non-`None`
        description are kept, properties are united (a later chunk's value
        wins a key) and the highest confidence is kept. A relationship end
        resolves to the entity whose normalized name matches (the lowest
        `str(id)` among several); relationships sharing an id merge the same
        way. A chunk whose call raises `LlmProviderError` is recorded
        in `failed_chunks`, not raised; any other error propagates.
        """
        if not isinstance(document, SourceDocument):
            raise ValueError(f"document must be a SourceDocument, got {shown(document)}")
        check_tenant_id(tenant_id)
        check_name(system_prompt, argument="system_prompt", maximum=_MAX_PROMPT)
        chunks = self._chunker.chunk(document.text)
        outcomes = await self._extract_all(chunks, system_prompt)
        mapped: list[tuple[int, MappedChunk]] = []
        failures: list[ChunkFailure] = []
        for chunk, outcome in zip(chunks, outcomes, strict=True):
            if isinstance(outcome, LlmProviderError):
                failures.append(ChunkFailure(index=chunk.index, error=outcome))
            else:
                mapped.append(
                    (
                        chunk.index,
                        map_extraction(
                            outcome,
                            tenant_id=tenant_id,
                            source_id=document.id,
                            model=self._provider.model,
                        ),
                    )
                )
        entity_chunks: dict[EntityId, list[int]] = {}
        for index, each in mapped:
            for entity in each.entities:
                _note(entity_chunks, entity.id, index)
        entities = _merge_entities(entity for _, each in mapped for entity in each.entities)
        relationships, unresolved, invalid, relationship_chunks = _resolve(
            [(index, row) for index, each in mapped for row in each.relationships],
            entities,
            tenant_id=tenant_id,
            source_id=document.id,
            model=self._provider.model,
        )
        return ExtractionResult(
            entities=entities,
            relationships=relationships,
            chunks=len(chunks),
            failed_chunks=tuple(failures),
            dropped_rows=sum(each.dropped_rows for _, each in mapped) + invalid,
            unresolved_relationships=unresolved,
            spans=tuple(chunks),
            entity_chunks={key: tuple(value) for key, value in entity_chunks.items()},
            relationship_chunks={key: tuple(value) for key, value in relationship_chunks.items()},
        )

    async def _extract_all(
        self, chunks: Sequence[Chunk], system_prompt: str
    ) -> list[Extraction | LlmProviderError]:
        """One answer or model error per chunk, in chunk order, `concurrency` at a time."""
        semaphore = asyncio.Semaphore(self._concurrency)

        async def extract(chunk: Chunk) -> Extraction | LlmProviderError:
            async with semaphore:
                try:
                    return await self._provider.extract(
                        chunk.text, Extraction, system_prompt=system_prompt
                    )
                except LlmProviderError as error:
                    return error

        tasks = [asyncio.create_task(extract(chunk)) for chunk in chunks]
        try:
            return await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


def _note[K](found_in: dict[K, list[int]], key: K, index: int) -> None:
    """Record that `key` came from chunk `index`; chunks arrive in ascending order."""
    held = found_in.setdefault(key, [])
    if not held or held[-1] != index:
        held.append(index)


def _merge_entities(entities: Iterable[Entity]) -> tuple[Entity, ...]:
    """One entity per id, in first-seen order, merged as `ExtractionPipeline.run` says."""
    merged: dict[EntityId, Entity] = {}
    for entity in entities:
        kept = merged.get(entity.id)
        merged[entity.id] = entity if kept is None else _merged(kept, entity)
    return tuple(merged.values())


def _merged[R: (Entity, Relationship)](kept: R, later: R) -> R:
    """`kept` with the higher confidence, its description or else `later`'s, united properties."""
    return kept.model_copy(
        update={
            "properties": {**kept.properties, **later.properties},
            "confidence": max(kept.confidence, later.confidence),
            "description": later.description if kept.description is None else kept.description,
        }
    )


def _resolve(
    rows: Sequence[tuple[int, ExtractedRelationship]],
    entities: Sequence[Entity],
    *,
    tenant_id: TenantId,
    source_id: SourceId,
    model: str,
) -> tuple[tuple[Relationship, ...], int, int, dict[RelationshipId, list[int]]]:
    """(relationships, unresolved rows, invalid rows, chunks per relationship) for `rows`.

    Each row comes with the index of the chunk it was read from.
    """
    by_name: dict[str, Entity] = {}
    for entity in entities:
        key = normalize_name(entity.name)
        current = by_name.get(key)
        if current is None or str(entity.id) < str(current.id):
            by_name[key] = entity
    resolved: dict[RelationshipId, Relationship] = {}
    found_in: dict[RelationshipId, list[int]] = {}
    unresolved = invalid = 0
    provenance = llm_provenance(tenant_id, source_id, model)
    for index, row in rows:
        source = by_name.get(normalize_name(row.source_name))
        target = by_name.get(normalize_name(row.target_name))
        if source is None or target is None:
            unresolved += 1
            continue
        try:
            relationship = Relationship(
                id=relationship_id_for(
                    tenant_id, source_id, row.relationship_type, source.id, target.id
                ),
                source_entity_id=source.id,
                target_entity_id=target.id,
                relationship_type=row.relationship_type,
                description=row.description,
                confidence=row.confidence,
                **provenance,
            )
        except ValueError:
            invalid += 1
            continue
        kept = resolved.get(relationship.id)
        resolved[relationship.id] = relationship if kept is None else _merged(kept, relationship)
        _note(found_in, relationship.id, index)
    return tuple(resolved.values()), unresolved, invalid, found_in
