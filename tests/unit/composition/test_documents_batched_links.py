"""Linking reads the name index for a group of documents at once, and links as one by one would."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.composition.documents import import_documents
from redstring.domain.ids import SourceId
from redstring.domain.names import NAME_CANDIDATE_LIMIT
from redstring.domain.source import SourceDocument
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.ports.graph_batches import NameCandidateBatchReader, SharedNameCandidateBatchReader
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId
    from redstring.ports.graph_store import GraphStore, NameCandidateReader

#: More documents than the first two groups hold (16, then 32).
DOCUMENTS = 60
CITIES = ("Oslo", "Rome", "Lagos", "Lima", "Quito", "Hanoi", "Porto Alegre")


class OneWordAtATime:
    """A graph that offers only the one-query read: the fallback path."""

    def __init__(self, inner: NameCandidateReader) -> None:
        self.inner = inner
        self.words: list[str] = []

    async def find_name_candidates(
        self, query: str, tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> list[Entity]:
        self.words.append(query)
        return await self.inner.find_name_candidates(query, tenant_id, limit=limit)


class Counting(OneWordAtATime):
    """A graph with the batch read too, counting the words each batch asks for."""

    def __init__(self, inner: SqliteGraphStore) -> None:
        super().__init__(inner)
        self.store = inner
        self.batches: list[tuple[int, list[str]]] = []

    async def find_name_candidates_of(
        self, queries: Sequence[str], tenant_id: TenantId, *, limit: int = NAME_CANDIDATE_LIMIT
    ) -> dict[str, list[Entity]]:
        self.batches.append((limit, list(queries)))
        return await self.store.find_name_candidates_of(queries, tenant_id, limit=limit)


def texts() -> list[SourceDocument]:
    """Each document names two cities, one of them a new one every few documents."""
    made = []
    for number in range(DOCUMENTS):
        first, second = CITIES[number % len(CITIES)], CITIES[(number * 3 + 1) % len(CITIES)]
        made.append(
            SourceDocument(
                id=SourceId(f"doc-{number}"),
                text=f"From {first} to {second}, then Springfield Word{number}.",
            )
        )
    return made


async def fill(graph: GraphStore) -> None:
    """The cities and forty Springfields, and the same ids named otherwise in another tenant."""
    ours = [make_entity(name=city, entity_type="city") for city in CITIES]
    ours += [make_entity(name="Springfield", entity_type="city") for _ in range(40)]
    theirs = [make_entity(id=entity.id, name="Atlantis", tenant_id=OTHER_TENANT) for entity in ours]
    await graph.upsert_entities([*ours, *theirs])


async def linked(
    graph: NameCandidateReader,
) -> tuple[list[tuple[str, str, int | None, int | None]], list[int]]:
    """The mentions importing `texts()` links, as comparable tuples, and the progress reported."""
    chunks = InMemoryChunkStore()
    progress: list[int] = []
    await import_documents(
        texts(),
        TENANT,
        chunks=chunks,
        graph=graph,
        on_progress=lambda done, _: progress.append(done),
    )
    ids = [
        chunk.id
        for number in range(DOCUMENTS)
        for chunk in await chunks.get_source_chunks(SourceId(f"doc-{number}"), TENANT)
    ]
    found = [
        (str(mention.chunk_id), str(mention.entity_id), mention.start, mention.end)
        for mention in await chunks.mentions_in(ids, TENANT)
    ]
    return sorted(found, key=str), progress


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_batched_links_are_the_one_word_at_a_time_links(backend: str, tmp_path: Path) -> None:
    graph: InMemoryGraphStore | SqliteGraphStore = (
        InMemoryGraphStore() if backend == "memory" else SqliteGraphStore(tmp_path / "g.db")
    )
    await fill(graph)
    assert isinstance(graph, NameCandidateBatchReader)
    assert isinstance(graph, SharedNameCandidateBatchReader) == (backend == "memory")
    batched, progress = await linked(graph)
    alone = OneWordAtATime(graph)
    assert await linked(alone) == (batched, progress)
    assert progress == list(range(1, DOCUMENTS + 1))
    # Seven cities, forty Springfields, each said in many documents.
    assert len({entity for _, entity, _, _ in batched}) == 47
    # Each word is looked up once, but for the one forty entities hold,
    # asked again at twice the limit until all come back (16, 32, 64).
    assert [word for word in alone.words if alone.words.count(word) > 1] == ["springfield"] * 3
    if isinstance(graph, SqliteGraphStore):
        await graph.close()


async def test_each_group_asks_once_and_only_the_short_words_again(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "g.db")
    await fill(store)
    graph = Counting(store)
    await linked(graph)
    assert graph.words == []  # the batch read is used, never the one-word read
    limits = [limit for limit, _ in graph.batches]
    # Groups of 16 and 32 documents and the rest: each asks for its new words
    # at 16; "springfield", held by 40 entities, is asked again alone at 32
    # and 64 in the first group, where it is new.
    assert limits == [16, 32, 64, 16, 16]
    assert [words for limit, words in graph.batches if limit > 16] == [["springfield"]] * 2
    asked = [word for limit, words in graph.batches if limit == 16 for word in words]
    assert len(asked) == len(set(asked))
    assert {"oslo", "porto", "springfield", "word0", "word59"} <= set(asked)
    await store.close()


async def test_a_group_with_many_new_words_reads_them_a_bounded_number_at_a_time(
    tmp_path: Path,
) -> None:
    store = SqliteGraphStore(tmp_path / "g.db")
    await fill(store)
    graph = Counting(store)
    many = " ".join(f"Word{number}" for number in range(1_200))
    await import_documents(
        [SourceDocument(id=SourceId("long"), text=f"Oslo {many} Rome.")],
        TENANT,
        chunks=InMemoryChunkStore(),
        graph=graph,
    )
    assert [len(words) for _, words in graph.batches] == [512, 512, 178]
    await store.close()
