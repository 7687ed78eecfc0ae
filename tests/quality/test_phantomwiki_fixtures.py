"""The committed PhantomWiki universes load into redstring whole, with stable ids."""

from __future__ import annotations

from uuid import UUID

import pytest
from bench.phantomwiki import HOBBY, OCCUPATION, PERSON, UNIVERSES, load_universe

from redstring import InMemoryChunkStore, InMemoryGraphStore, TenantId, import_documents

TENANT = TenantId(UUID("00000000-0000-4000-8000-000000000001"))
OTHER = TenantId(UUID("00000000-0000-4000-8000-000000000002"))

# What the generator wrote (scripts/make_phantomwiki.py), counted by hand from the
# files: (articles, questions, stated relations).
COUNTS = {
    "dev": (509, 200, 4706),
    "heldout-500": (508, 200, None),
    "heldout-1000": (1014, 200, None),
}


@pytest.mark.parametrize("name", UNIVERSES)
def test_each_universe_has_its_articles_questions_and_one_person_per_article(name: str) -> None:
    universe = load_universe(name)
    articles, questions, relations = COUNTS[name]
    assert len(universe.articles) == articles
    assert len(universe.questions) == questions
    assert {person.name for person in universe.people} == set(universe.articles)
    if relations is not None:
        assert len(universe.facts) == relations
    assert len({question.id for question in universe.questions}) == questions


@pytest.mark.parametrize("name", UNIVERSES)
def test_every_gold_article_exists_and_hops_run_from_one_to_four(name: str) -> None:
    universe = load_universe(name)
    for question in universe.questions:
        assert question.gold, question.id
        assert question.gold <= set(universe.articles), question.id
        assert 1 <= question.hops <= 4
        if question.answer_is_person:
            assert set(question.answers) <= set(universe.articles), question.id
    assert {question.hops for question in universe.questions} == {1, 2, 3, 4}


def test_only_the_held_out_questions_are_reworded_and_each_records_its_wording() -> None:
    assert {q.wording for q in load_universe("dev").questions} == {"template"}
    for name in ("heldout-500", "heldout-1000"):
        questions = load_universe(name).questions
        assert "template" not in {q.wording for q in questions}
        assert all(q.question != q.template for q in questions)
        assert any(q.synonyms for q in questions)


@pytest.mark.parametrize("name", UNIVERSES)
async def test_the_graph_stores_every_entity_and_relationship_with_no_dangling_end(
    name: str,
) -> None:
    universe = load_universe(name)
    entities = universe.entities(TENANT)
    relationships = universe.relationships(TENANT)
    occupations = {v for person in universe.people for v in person.occupations}
    hobbies = {v for person in universe.people for v in person.hobbies}
    assert len(entities) == len(universe.people) + len(occupations) + len(hobbies)
    assert len({entity.id for entity in entities}) == len(entities)
    assert len(relationships) == len(universe.facts)
    by_type = {entity.entity_type for entity in entities}
    assert by_type == {PERSON, OCCUPATION, HOBBY}
    async with InMemoryGraphStore() as graph:
        await graph.upsert_entities(entities)
        await graph.upsert_relationships(relationships)
        person = universe.people[0]
        held = await graph.get_entity(universe.entity_id(PERSON, person.name), TENANT)
        assert held is not None
        assert held.properties == {"dob": person.dob, "gender": person.gender}
        around = await graph.get_relationships(held.id, TENANT)
        mine = {r.id for r in relationships if held.id in (r.source_entity_id, r.target_entity_id)}
        assert {r.id for r in around} == mine
        assert {"dob", "gender"} <= set(held.properties)


def test_two_loads_and_two_tenants_get_the_same_ids() -> None:
    first, second = load_universe("dev"), load_universe("dev")
    assert [e.id for e in first.entities(TENANT)] == [e.id for e in second.entities(OTHER)]
    assert [r.id for r in first.relationships(TENANT)] == [
        r.id for r in second.relationships(OTHER)
    ]
    assert [d.id for d in first.documents()] == [d.id for d in second.documents()]
    assert all(e.tenant_id == OTHER for e in second.entities(OTHER))


async def test_each_article_imports_as_one_chunk_that_maps_back_to_its_title() -> None:
    universe = load_universe("heldout-1000")
    documents = universe.documents(TENANT)
    assert [d.title for d in documents] == list(universe.articles)
    async with InMemoryChunkStore() as chunks:
        report = await import_documents(documents, TENANT, chunks=chunks)
        assert report.documents == report.chunks == len(universe.articles)
        title = universe.people[5].name
        held = await chunks.get_source_chunks(universe.source_id(title), TENANT)
        assert [universe.title_of(chunk.source_id) for chunk in held] == [title]
        assert held[0].text == universe.articles[title]


def test_an_unknown_universe_or_source_id_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'dev2'"):
        load_universe("dev2")
    with pytest.raises(ValueError, match="'dev/Nobody'"):
        load_universe("dev").title_of("dev/Nobody")


async def test_imported_articles_link_every_person_they_name() -> None:
    # Occupations and hobbies are written in lowercase, and the linker reads
    # only words a proper name could start at (ADR 0073): they are not linked.
    universe = load_universe("dev")
    person = universe.people[0]
    named_in_article = {person.name} | {
        fact.object
        for fact in universe.facts
        if fact.subject == person.name and fact.type not in (OCCUPATION, HOBBY)
    }
    async with InMemoryGraphStore() as graph, InMemoryChunkStore() as chunks:
        await graph.upsert_entities(universe.entities(TENANT))
        await graph.upsert_relationships(universe.relationships(TENANT))
        await import_documents(universe.documents(), TENANT, chunks=chunks, graph=graph)
        (chunk,) = await chunks.get_source_chunks(universe.source_id(person.name), TENANT)
        named = {mention.entity_id for mention in await chunks.mentions_in([chunk.id], TENANT)}
    assert named == {universe.entity_id(PERSON, name) for name in named_in_article}
    assert len(named) > 2
