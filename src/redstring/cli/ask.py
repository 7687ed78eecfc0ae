"""A question's context, as `redstring ask` prints it and the MCP `retrieve_context` tool serves it.

`answer` runs `ContextRetriever` over the database's chunk store and graph
and turns the `Context` into plain data that keeps every id: the passages
(best first, with each channel's score, the document, the offsets and the
entities the passage names), the entities that matter, the
relationships among them, and the paths by which the question's relation
chain reached its answers (ADR 0128). `print_answer` prints it as tables,
or as that data in JSON. See ADR 0082.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypedDict

import click

from redstring.chunks.adapters.memory import InMemoryChunkStore
from redstring.cli.output import print_json, print_table
from redstring.composition import ContextRetriever, mentioned_entities

if TYPE_CHECKING:
    from redstring.domain.context import Context, ScoredPassage
    from redstring.domain.entity import Entity
    from redstring.domain.ids import ChunkId, EntityId, TenantId
    from redstring.domain.relationship import Relationship
    from redstring.ports.chunk_store import ChunkStore
    from redstring.ports.graph_store import GraphReader


class NamedEntity(TypedDict):
    """An entity as a context names it."""

    id: str
    name: str
    entity_type: str


class ContextPassage(TypedDict):
    """One passage of a context: its scores, where it is, its text, the entities it names.

    `score` is the fused score; `bm25`, `graph` and `dense` are each
    channel's own, `None` where that channel did not rank the passage.
    `start` and `end` are offsets into the document `source_id`.
    """

    rank: int
    score: float
    bm25: float | None
    graph: float | None
    dense: float | None
    chunk_id: str
    source_id: str
    title: str | None
    start: int
    end: int
    text: str
    entities: list[NamedEntity]


class ContextEntity(TypedDict):
    """An entity the context's passages bear on, best first."""

    id: str
    name: str
    entity_type: str
    score: float


class ContextRelationship(TypedDict):
    """A relationship between two of the context's entities."""

    id: str
    relationship_type: str
    source: NamedEntity
    target: NamedEntity


class ContextPath(TypedDict):
    """How the question's relation chain reached one answer, from an entity it names.

    `relationships[i]` joins `entities[i]` and `entities[i + 1]`, in
    either direction.
    """

    entities: list[NamedEntity]
    relationships: list[ContextRelationship]


class ContextAnswer(TypedDict):
    """A question's context: passages, entities, relationships and relation paths."""

    query: str
    passages: list[ContextPassage]
    entities: list[ContextEntity]
    relationships: list[ContextRelationship]
    paths: list[ContextPath]


#: Passages `ask` and `retrieve_context` give by default.
ASK_K: Final = 5
#: Characters of a passage's text a table row shows.
_SNIPPET: Final = 200


def _named(entity: Entity) -> NamedEntity:
    return NamedEntity(id=str(entity.id), name=entity.name, entity_type=entity.entity_type)


def _relationship(relationship: Relationship, held: dict[EntityId, Entity]) -> ContextRelationship:
    return ContextRelationship(
        id=str(relationship.id),
        relationship_type=relationship.relationship_type,
        source=_named(held[relationship.source_entity_id]),
        target=_named(held[relationship.target_entity_id]),
    )


def _passage(rank: int, passage: ScoredPassage, entities: list[Entity]) -> ContextPassage:
    chunk = passage.chunk
    title = chunk.metadata.get("title")
    return ContextPassage(
        rank=rank,
        score=passage.score,
        bm25=passage.bm25,
        graph=passage.graph,
        dense=passage.dense,
        chunk_id=str(chunk.id),
        source_id=chunk.source_id,
        title=title if isinstance(title, str) else None,
        start=chunk.start,
        end=chunk.end,
        text=chunk.text,
        entities=[_named(entity) for entity in entities],
    )


async def _entities_named(
    passages: list[ScoredPassage], tenant_id: TenantId, chunks: ChunkStore, graph: GraphReader
) -> dict[ChunkId, list[Entity]]:
    """The entities each passage names, in order of first mention.

    Of a passage cut to fit a budget, only those named in what is left of
    its text (a mention without a span counts).
    """
    named = await mentioned_entities(
        [passage.chunk.id for passage in passages], tenant_id, chunks=chunks, graph=graph
    )
    lengths = {passage.chunk.id: len(passage.chunk.text) for passage in passages}
    spans = [
        (mention.chunk_id, mention.entity_id, mention.end)
        for mention in await chunks.mentions_in(list(lengths), tenant_id)
        if mention.entity_id is not None
    ]
    inside = [
        (chunk, entity) for chunk, entity, end in spans if end is None or end <= lengths[chunk]
    ]
    if len(inside) == len(spans):
        return named
    canonical = await graph.resolve(list({entity for _, entity in inside}), tenant_id)
    kept = {(chunk, canonical[entity]) for chunk, entity in inside}
    return {
        chunk_id: [entity for entity in entities if (chunk_id, entity.id) in kept]
        for chunk_id, entities in named.items()
    }


async def _as_answer(
    context: Context, tenant_id: TenantId, chunks: ChunkStore, graph: GraphReader
) -> ContextAnswer:
    named = await _entities_named(context.passages, tenant_id, chunks, graph)
    held = {scored.entity.id: scored.entity for scored in context.entities}
    missing = {
        end
        for relationship in context.relationships
        for end in (relationship.source_entity_id, relationship.target_entity_id)
        if end not in held
    }
    if missing:
        held.update((each.id, each) for each in await graph.get_entities(list(missing), tenant_id))
    relationships = [
        _relationship(relationship, held)
        for relationship in context.relationships
        if relationship.source_entity_id in held and relationship.target_entity_id in held
    ]
    paths = []
    for path in context.paths:
        ends = {each.id: each for each in path.entities}
        paths.append(
            ContextPath(
                entities=[_named(each) for each in path.entities],
                relationships=[_relationship(each, ends) for each in path.relationships],
            )
        )
    return ContextAnswer(
        query=context.query,
        passages=[
            _passage(rank, passage, named[passage.chunk.id])
            for rank, passage in enumerate(context.passages, start=1)
        ],
        entities=[
            ContextEntity(
                id=str(scored.entity.id),
                name=scored.entity.name,
                entity_type=scored.entity.entity_type,
                score=scored.score,
            )
            for scored in context.entities
        ],
        relationships=relationships,
        paths=paths,
    )


async def answer(
    question: str,
    tenant_id: TenantId,
    *,
    chunks: ChunkStore | None,
    graph: GraphReader,
    k: int = ASK_K,
    budget_chars: int | None = None,
) -> ContextAnswer:
    """The context `ContextRetriever` gives for `question`, as plain data.

    `chunks` is `None` for a database nothing was added to: it is searched
    as an empty store, so the arguments are checked all the same.

    Raises:
        ValueError: a blank or too long question, `k` or `budget_chars`
            out of range (the message names the value).
    """
    store = chunks if chunks is not None else InMemoryChunkStore()
    retriever = ContextRetriever(chunks=store, graph=graph)
    context = await retriever.retrieve_context(question, tenant_id, k=k, budget_chars=budget_chars)
    return await _as_answer(context, tenant_id, store, graph)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _route(path: ContextPath) -> str:
    """`path` as one line: "Ann -[mother]-> Bea <-[child]- Cal"."""
    entities = path["entities"]
    parts = [entities[0]["name"]]
    steps = zip(entities[:-1], entities[1:], path["relationships"], strict=True)
    for before, entity, edge in steps:
        kind = edge["relationship_type"]
        forward = edge["source"]["id"] == before["id"]
        parts.append(f"-[{kind}]->" if forward else f"<-[{kind}]-")
        parts.append(entity["name"])
    return " ".join(parts)


def print_answer(found: ContextAnswer, *, as_json: bool) -> None:
    """The context as tables (passages, entities, relationships, paths), or as JSON."""
    if as_json:
        print_json(found)
        return
    if not found["passages"]:
        click.echo("no passage matches")
        return
    print_table(
        ["rank", "score", "bm25", "graph", "source", "offsets", "passage", "entities"],
        [
            [
                str(passage["rank"]),
                _score(passage["score"]),
                _score(passage["bm25"]),
                _score(passage["graph"]),
                passage["source_id"],
                f"{passage['start']}-{passage['end']}",
                _snippet(passage["text"]),
                ", ".join(entity["name"] for entity in passage["entities"]),
            ]
            for passage in found["passages"]
        ],
        numeric=("rank", "score", "bm25", "graph"),
        optional=("graph", "bm25"),
    )
    if found["entities"]:
        click.echo("")
        print_table(
            ["entity", "type", "score"],
            [
                [entity["name"], entity["entity_type"], _score(entity["score"])]
                for entity in found["entities"]
            ],
            numeric=("score",),
        )
    if found["relationships"]:
        click.echo("")
        print_table(
            ["source", "relationship", "target"],
            [
                [each["source"]["name"], each["relationship_type"], each["target"]["name"]]
                for each in found["relationships"]
            ],
        )
    if found["paths"]:
        click.echo("")
        print_table(
            ["answer", "path"],
            [[path["entities"][-1]["name"], _route(path)] for path in found["paths"]],
        )
