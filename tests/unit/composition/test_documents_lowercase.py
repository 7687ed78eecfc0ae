"""`import_documents(link_lowercase=True)`: names written in lowercase, linked where said so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.composition.documents import import_documents
from redstring.domain.ids import SourceId
from redstring.domain.source import SourceDocument
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

TEXT = (
    "Abe is a database administrator in paris and Paris. Then his iphone holds an apple, "
    "not Apple stock; he writes html. A Database Administrator too."
)

JOB = make_entity(name="database administrator", entity_type="occupation")
PARIS = make_entity(name="Paris", entity_type="city")
PHONE = make_entity(name="iPhone", entity_type="product")
FRUIT = make_entity(name="apple", entity_type="food")
COMPANY = make_entity(name="Apple", entity_type="company")
MARKUP = make_entity(
    name="HyperText Markup Language", entity_type="language", properties={"aliases": ["html"]}
)
#: The same id as Paris in another tenant, its name written in lowercase: never linked here.
ELSEWHERE = make_entity(id=PARIS.id, tenant_id=OTHER_TENANT, name="his", entity_type="word")
ENTITIES = [JOB, PARIS, PHONE, FRUIT, COMPANY, MARKUP, ELSEWHERE]


@pytest.fixture(params=["memory", "sqlite"])
async def graph(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    store: InMemoryGraphStore | SqliteGraphStore = (
        InMemoryGraphStore() if request.param == "memory" else SqliteGraphStore(tmp_path / "g.db")
    )
    await store.upsert_entities(ENTITIES)
    yield store
    if isinstance(store, SqliteGraphStore):
        await store.close()


async def linked(graph: Any, *, link_lowercase: bool) -> set[tuple[str, str]]:
    """(entity type, text said) of every mention linked in `TEXT`."""
    chunks = InMemoryChunkStore()
    await import_documents(
        [SourceDocument(id=SourceId("abe"), text=TEXT)],
        TENANT,
        chunks=chunks,
        graph=graph,
        link_lowercase=link_lowercase,
    )
    [chunk] = await chunks.get_source_chunks(SourceId("abe"), TENANT)
    type_of = {entity.id: entity.entity_type for entity in ENTITIES if entity.tenant_id == TENANT}
    return {
        (type_of[m.entity_id], TEXT[m.start or 0 : m.end])
        for m in await chunks.mentions_in([chunk.id], TENANT)
        if m.entity_id is not None
    }


async def test_names_written_in_lowercase_are_linked_where_said_in_lowercase(graph: Any) -> None:
    assert await linked(graph, link_lowercase=True) == {
        ("occupation", "database administrator"),
        ("occupation", "Database Administrator"),
        ("city", "Paris"),
        ("product", "iphone"),
        ("food", "apple"),
        ("food", "Apple"),
        ("company", "Apple"),
        ("language", "html"),
    }


async def test_without_the_flag_a_mention_starts_at_a_capital(graph: Any) -> None:
    assert await linked(graph, link_lowercase=False) == {
        ("occupation", "Database Administrator"),
        ("city", "Paris"),
        ("food", "Apple"),
        ("company", "Apple"),
    }


@pytest.mark.parametrize("flag", ["yes", 1, None])
async def test_a_link_lowercase_that_is_not_a_bool_is_refused_before_any_write(flag: Any) -> None:
    chunks = InMemoryChunkStore()
    with pytest.raises(ValueError, match=f"link_lowercase must be a bool, got {flag!r}"):
        await import_documents(
            [SourceDocument(id=SourceId("abe"), text=TEXT)],
            TENANT,
            chunks=chunks,
            graph=InMemoryGraphStore(),
            link_lowercase=flag,
        )
    assert await chunks.count_chunks(TENANT) == 0
