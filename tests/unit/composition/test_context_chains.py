"""A context follows the question's chain of relations to the passages its words do not name."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import NAMESPACE_URL, uuid5

from bench.phantomwiki import load_universe

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.composition.context import ContextRetriever
from redstring.composition.documents import import_documents
from redstring.domain.context import ContextSettings
from redstring.domain.ids import EntityId, SourceId
from redstring.domain.relation_chains import read_relation_chain
from redstring.domain.source import SourceDocument
from redstring.graph.adapters.memory import InMemoryGraphStore
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.context import Context
    from redstring.domain.entity import Entity
    from redstring.domain.ids import TenantId

ARTICLES = {
    "Eve Moss": "Eve Moss paints. The mother of Eve Moss is Joan Moss.",
    "Joan Moss": "Joan Moss throws pots. The sister of Joan Moss is Ruth Hale.",
    "Ruth Hale": "Ruth Hale bakes bread. The son of Ruth Hale is Tom Hale.",
    "Tom Hale": "Tom Hale sails.",
    "Ivy Lund": "Ivy Lund sings. Ivy Lund is a friend of Eve Moss.",
    "Max Roe": "Max Roe rows. Max Roe is a friend of Eve Moss.",
    "Ned Park": "Ned Park runs. Ned Park is a friend of Eve Moss.",
}
FACTS = (
    ("Eve Moss", "mother", "Joan Moss"),
    ("Joan Moss", "sister", "Ruth Hale"),
    ("Ruth Hale", "son", "Tom Hale"),
    ("Eve Moss", "friend", "Ivy Lund"),
    ("Eve Moss", "friend", "Max Roe"),
    ("Eve Moss", "friend", "Ned Park"),
)


def person_entities(tenant: TenantId) -> dict[str, Entity]:
    """The people, with the same ids in every tenant."""
    return {
        name: make_entity(id=EntityId(uuid5(NAMESPACE_URL, name)), name=name, tenant_id=tenant)
        for name in ARTICLES
    }


async def cousins(
    tenant: TenantId = TENANT, graph: InMemoryGraphStore | None = None
) -> tuple[InMemoryGraphStore, InMemoryChunkStore]:
    """Eve's cousin Tom is three stated relations away; her three friends are one."""
    graph = InMemoryGraphStore() if graph is None else graph
    chunks = InMemoryChunkStore()
    people = person_entities(tenant)
    await graph.upsert_entities(list(people.values()))
    await graph.upsert_relationships(
        [make_relationship(people[a], people[b], relationship_type=kind) for a, kind, b in FACTS]
    )
    documents = [
        SourceDocument(id=SourceId(name), title=name, text=text) for name, text in ARTICLES.items()
    ]
    await import_documents(documents, tenant, chunks=chunks, graph=graph)
    return graph, chunks


async def ask(settings: ContextSettings | None = None, query: str | None = None) -> Context:
    graph, chunks = await cousins()
    retriever = ContextRetriever(chunks=chunks, graph=graph, settings=settings)
    return await retriever.retrieve_context(query or "Who is the cousin of Eve Moss?", TENANT, k=3)


async def test_the_chain_brings_the_answer_and_its_passage_to_the_top() -> None:
    context = await ask()
    assert [e.entity.name for e in context.entities[:2]] == ["Eve Moss", "Tom Hale"]
    assert {p.chunk.source_id for p in context.passages[:2]} == {"Eve Moss", "Tom Hale"}
    # The context explains the answer by the relationships among its entities.
    assert "son" in {edge.relationship_type for edge in context.relationships}


async def test_the_same_words_asked_possessively_give_the_same_context() -> None:
    of = await ask()
    possessive = await ask(query="Eve Moss's cousin: who is that?")
    assert [e.entity.name for e in possessive.entities[:2]] == ["Eve Moss", "Tom Hale"]
    assert {p.chunk.source_id for p in possessive.passages[:2]} == {
        p.chunk.source_id for p in of.passages[:2]
    }


async def test_without_chains_the_walk_alone_ranks_the_friends_first() -> None:
    context = await ask(ContextSettings(follow_chains=False))
    assert "Tom Hale" not in {p.chunk.source_id for p in context.passages}
    assert "Tom Hale" not in {e.entity.name for e in context.entities}
    zero = await ask(ContextSettings(chain_weight=0.0))
    assert [p.chunk.source_id for p in zero.passages] == [
        p.chunk.source_id for p in context.passages
    ]


async def test_a_question_composing_no_relation_is_answered_by_the_walk_alone() -> None:
    graph, chunks = await cousins()
    query = "What does Eve Moss paint?"
    chained = ContextRetriever(chunks=chunks, graph=graph)
    walked = ContextRetriever(
        chunks=chunks, graph=graph, settings=ContextSettings(follow_chains=False)
    )
    assert await chained.retrieve_context(query, TENANT) == await walked.retrieve_context(
        query, TENANT
    )


async def test_another_tenant_with_the_same_ids_answers_from_its_own_graph() -> None:
    graph, chunks = await cousins()
    # The other tenant holds the same people, under the same ids, with no family stated.
    await graph.upsert_entities(list(person_entities(OTHER_TENANT).values()))
    documents = [
        SourceDocument(id=SourceId(name), title=name, text=text) for name, text in ARTICLES.items()
    ]
    await import_documents(documents, OTHER_TENANT, chunks=chunks, graph=graph)
    retriever = ContextRetriever(chunks=chunks, graph=graph)
    context = await retriever.retrieve_context("Who is the cousin of Eve Moss?", OTHER_TENANT, k=3)
    assert "Tom Hale" not in {e.entity.name for e in context.entities}
    assert not context.relationships


async def test_a_relation_word_inside_a_linked_name_is_the_names() -> None:
    graph, chunks = InMemoryGraphStore(), InMemoryChunkStore()
    will, ann, bo, kim = (
        make_entity(name=name) for name in ("Will Son", "Ann Son", "Bo Son", "Kim Lee")
    )
    await graph.upsert_entities([will, ann, bo, kim])
    await graph.upsert_relationships(
        [
            make_relationship(will, ann, relationship_type="mother"),
            make_relationship(will, bo, relationship_type="son"),
            make_relationship(bo, kim, relationship_type="mother"),
        ]
    )
    texts = {
        "Will Son": "Will Son fishes.",
        "Ann Son": "Ann Son knits.",
        "Bo Son": "Bo Son climbs.",
        "Kim Lee": "Kim Lee draws.",
    }
    documents = [
        SourceDocument(id=SourceId(name), title=name, text=text) for name, text in texts.items()
    ]
    await import_documents(documents, TENANT, chunks=chunks, graph=graph)
    context = await ContextRetriever(chunks=chunks, graph=graph).retrieve_context(
        "Who is the mother of Will Son?", TENANT, k=2
    )
    # Read as "the mother of the son of Will", the chain would bind Kim Lee.
    assert [e.entity.name for e in context.entities] == ["Will Son", "Ann Son"]


async def test_types_read_from_their_target_give_the_same_context() -> None:
    # "X mother Y" written as an extraction prompt writes it: "Y mother_of X".
    universe = load_universe("dev")
    stated, flipped = InMemoryGraphStore(), InMemoryGraphStore()
    stated_chunks, flipped_chunks = InMemoryChunkStore(), InMemoryChunkStore()
    relationships = universe.relationships(TENANT)
    for graph, chunks, edges in (
        (stated, stated_chunks, relationships),
        (
            flipped,
            flipped_chunks,
            [
                edge.model_copy(
                    update={
                        "source_entity_id": edge.target_entity_id,
                        "target_entity_id": edge.source_entity_id,
                        "relationship_type": f"{edge.relationship_type.upper()}_OF",
                    }
                )
                for edge in relationships
            ],
        ),
    ):
        await graph.upsert_entities(universe.entities(TENANT))
        await graph.upsert_relationships(edges)
        await import_documents(universe.documents(), TENANT, chunks=chunks, graph=graph)
    chained = pathed = 0
    for question in universe.questions[::8]:
        one = await ContextRetriever(chunks=stated_chunks, graph=stated).retrieve_context(
            question.question, TENANT
        )
        other = await ContextRetriever(chunks=flipped_chunks, graph=flipped).retrieve_context(
            question.question, TENANT
        )
        assert [(p.chunk.id, p.score) for p in one.passages] == [
            (p.chunk.id, p.score) for p in other.passages
        ]
        assert [(e.entity.id, e.score) for e in one.entities] == [
            (e.entity.id, e.score) for e in other.entities
        ]
        assert [[e.id for e in path.entities] for path in one.paths] == [
            [e.id for e in path.entities] for path in other.paths
        ]
        chained += bool(read_relation_chain(question.question).terms)
        pathed += bool(one.paths)
    assert chained >= 10
    assert pathed >= 10


async def test_the_answers_path_names_the_relatives_the_context_leaves_out() -> None:
    context = await ask(ContextSettings(subject_weight=0.0), query="Who is the cousin of Eve Moss?")
    held = {scored.entity.name for scored in context.entities}
    [path] = context.paths
    assert [entity.name for entity in path.entities] == [
        "Eve Moss",
        "Joan Moss",
        "Ruth Hale",
        "Tom Hale",
    ]
    assert [edge.relationship_type for edge in path.relationships] == ["mother", "sister", "son"]
    assert not {"Joan Moss", "Ruth Hale"} <= held  # k=3: the path reads them itself
    assert (await ask(query="What does Eve Moss paint?")).paths == []
    assert (await ask(ContextSettings(follow_chains=False))).paths == []


class ForgetfulGraph(InMemoryGraphStore):
    """The in-memory graph, whose entity reads no longer find `gone` (deleted meanwhile)."""

    gone: frozenset[str] = frozenset()

    async def _get_entities(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> list[Entity]:
        found = await super()._get_entities(entity_ids, tenant_id)
        return [entity for entity in found if entity.name not in self.gone]


async def test_a_path_through_an_entity_gone_meanwhile_is_left_out() -> None:
    forgetful = ForgetfulGraph()
    _, chunks = await cousins(graph=forgetful)
    retriever = ContextRetriever(chunks=chunks, graph=forgetful)
    question = "Who is the cousin of Eve Moss?"
    assert len((await retriever.retrieve_context(question, TENANT, k=2)).paths) == 1
    forgetful.gone = frozenset({"Ruth Hale"})
    context = await retriever.retrieve_context(question, TENANT, k=2)
    assert "Tom Hale" in {scored.entity.name for scored in context.entities}
    assert context.paths == []
