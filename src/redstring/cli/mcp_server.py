"""`redstring mcp`: the graph as tools an agent calls, over stdio, on the official MCP SDK.

`GraphTools` answers each tool from the stores one `--db` names, in one
tenant, through the same actions the commands use (`redstring.cli.actions`,
`redstring.cli.ask`); `build_server` registers its methods on an
`MCPServer`, the write tools only when asked; `serve` opens the stores
(the graph, its vectors, and the chunk store of the passages `add` wrote),
runs the server on standard input and output until the client goes, and
closes them. Needs the `mcp` extra. See ADRs 0070 and 0083.

A tool's bad argument (an entity no one holds, `k` out of range) is a
tool error whose text says what was wrong; the server goes on serving. A
write tool checks its whole batch before writing any of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict
from uuid import uuid4

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from redstring import __version__
from redstring.cli import actions, ask

# Read at run time: the SDK builds each tool's output schema from its annotations.
from redstring.cli.actions import Match, Neighbor  # noqa: TC001
from redstring.cli.ask import ContextAnswer  # noqa: TC001
from redstring.cli.passages import PassageRecord, passages_of
from redstring.cli.rows import RowError, Rows
from redstring.cli.stores import CommandError, open_chunks, open_database, search_provider
from redstring.composition import import_documents
from redstring.domain.blocking import blocking_keys_for
from redstring.domain.entity import Entity, ExtractionMethod
from redstring.domain.exceptions import RedstringError
from redstring.domain.ids import EntityId, RelationshipId, SourceId
from redstring.domain.relationship import Relationship
from redstring.domain.retrieval import RetrievalMode
from redstring.domain.source import SourceDocument
from redstring.llm.adapters.caching import CachingEmbeddingProvider

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from redstring.chunks.adapters.postgres import PostgresChunkStore
    from redstring.chunks.adapters.sqlite import SqliteChunkStore
    from redstring.cli.stores import Database
    from redstring.domain.ids import TenantId
    from redstring.ports.embedding import EmbeddingProvider

#: The server's name, as clients list it.
SERVER_NAME: Final = "redstring"
#: What the server tells an agent about itself when it connects.
INSTRUCTIONS: Final = (
    "An entity graph: people, organisations, places and things, with typed "
    "relationships between them, and the documents they were read from. Ask a "
    "question with retrieve_context (the passages that answer it, the entities and "
    "relationships they name); find entities with search_entities, read one with "
    "get_entity (by id or exact name, with the passages that mention it), walk the "
    "graph with list_neighbors."
)
#: The passages of an entity `get_entity` returns at most.
ENTITY_PASSAGES: Final = 20


class EntityRef(TypedDict):
    """An entity as a tool names it: id, name and type."""

    id: str
    name: str
    entity_type: str


class EntityRecord(TypedDict):
    """An entity's own fields."""

    id: str
    name: str
    entity_type: str
    description: str | None
    properties: dict[str, Any]
    source_id: str | None
    confidence: float


class RelationshipRecord(TypedDict):
    """A relationship seen from one of its ends."""

    id: str
    relationship_type: str
    direction: Literal["outgoing", "incoming"]
    other: EntityRef
    description: str | None
    properties: dict[str, Any]


class SearchAnswer(TypedDict):
    """What `search_entities` returns."""

    query: str
    matches: list[Match]


class EntityAnswer(TypedDict):
    """What `get_entity` returns: the entity, every relationship touching it, its passages.

    `passages` are the first `ENTITY_PASSAGES` passages that mention it, by
    document then offset; `passage_count` is how many there are in all.
    """

    entity: EntityRecord
    relationships: list[RelationshipRecord]
    passages: list[PassageRecord]
    passage_count: int


class DocumentsAnswer(TypedDict):
    """What `add_documents` wrote."""

    documents: int
    passages: int
    replaced: int
    mentions: int
    linked_entities: int


class NeighborsAnswer(TypedDict):
    """What `list_neighbors` returns."""

    entity: EntityRef
    depth: int
    neighbors: list[Neighbor]


class NewEntity(BaseModel):
    """An entity `add_entities` writes."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The entity's name, as written.")
    entity_type: str = Field(description="Its type, e.g. person, organization, place.")
    description: str | None = Field(default=None, description="One or two sentences.")
    properties: dict[str, Any] = Field(default_factory=dict, description="Any JSON fields.")


class NewDocument(BaseModel):
    """A document `add_documents` writes."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="The document's id; adding it again replaces it.")
    text: str = Field(description="The document's text (plain text or Markdown).")
    title: str | None = Field(default=None, description="Its title, if it has one.")


def _documents(documents: list[NewDocument]) -> list[SourceDocument]:
    """`documents` as source documents, every one checked before any is written."""
    checked = []
    for index, each in enumerate(documents):
        try:
            checked.append(SourceDocument(id=SourceId(each.id), text=each.text, title=each.title))
        except ValidationError as exc:
            reason = "; ".join(error["msg"] for error in exc.errors())
            raise ValueError(f"documents[{index}] (id {each.id!r}): {reason}") from None
    return checked


def _ref(entity: Entity) -> EntityRef:
    return EntityRef(id=str(entity.id), name=entity.name, entity_type=entity.entity_type)


def _record(entity: Entity) -> EntityRecord:
    return EntityRecord(
        id=str(entity.id),
        name=entity.name,
        entity_type=entity.entity_type,
        description=entity.description,
        properties=entity.properties,
        source_id=entity.source_id,
        confidence=entity.confidence,
    )


@dataclass
class GraphTools:
    """The tools' work, over one opened database and one tenant.

    Each method is one tool; it raises `ToolError` with a one-line reason
    for a bad argument. `embeddings` is the provider the database's vectors
    were made with (`None`: it holds none, and search is lexical); the
    tools read it through a `CachingEmbeddingProvider`, so a query asked
    again in the session is not embedded again.
    `location` is the `--db` the database was opened from: when it held no
    passages then, each passage tool looks again, so documents added since
    are found; without it, never.
    """

    database: Database
    tenant_id: TenantId
    embeddings: EmbeddingProvider | None
    location: str | None = None

    def __post_init__(self) -> None:
        # An agent asks the same queries again and again: a session embeds
        # each once (ADR 0125).
        if self.embeddings is not None and not isinstance(
            self.embeddings, CachingEmbeddingProvider
        ):
            self.embeddings = CachingEmbeddingProvider(self.embeddings)

    async def _chunks(self) -> SqliteChunkStore | PostgresChunkStore | None:
        """The database's chunk store, opened read-only if one was added since the start."""
        if self.database.chunks is None and self.location is not None:
            self.database.chunks = await open_chunks(self.location, read_only=True)
        return self.database.chunks

    async def search_entities(
        self,
        query: str,
        k: int = 10,
        mode: Literal["hybrid", "semantic", "lexical"] = "hybrid",
        types: list[str] | None = None,
    ) -> SearchAnswer:
        """Rank the graph's entities for a free-text query, best first.

        Args:
            query: What to look for: a name, or words describing the entity.
            k: How many matches to return (1 to 1000).
            mode: hybrid (names and meaning), semantic (meaning) or lexical (names).
            types: Keep only entities of these types, exactly as written.
        """
        matches = await actions.search(
            query,
            self.tenant_id,
            graph=self.database.graph,
            embeddings=self.embeddings,
            vectors=self.database.vectors,
            k=k,
            mode=RetrievalMode(mode),
            types=types or (),
        )
        return SearchAnswer(query=query, matches=matches)

    async def get_entity(self, entity: str) -> EntityAnswer:
        """Read one entity, its properties and every relationship it has.

        Args:
            entity: The entity's id, or its exact name.
        """
        graph = self.database.graph
        found = await actions.entity_for(graph, self.tenant_id, entity)
        entity_id = found.id
        relationships = await graph.get_relationships(entity_id, self.tenant_id)
        others = {
            each.id: each
            for each in await graph.get_entities(
                [
                    each.target_entity_id
                    if each.source_entity_id == entity_id
                    else each.source_entity_id
                    for each in relationships
                ],
                self.tenant_id,
            )
        }
        records = []
        for relationship in relationships:
            outgoing = relationship.source_entity_id == entity_id
            other_id = relationship.target_entity_id if outgoing else relationship.source_entity_id
            other = others.get(other_id)
            records.append(
                RelationshipRecord(
                    id=str(relationship.id),
                    relationship_type=relationship.relationship_type,
                    direction="outgoing" if outgoing else "incoming",
                    other=_ref(other)
                    if other is not None
                    else EntityRef(id=str(other_id), name="", entity_type=""),
                    description=relationship.description,
                    properties=relationship.properties,
                )
            )
        passages: list[PassageRecord] = []
        chunks = await self._chunks()
        if chunks is not None:
            found_passages = await passages_of(chunks, self.tenant_id, entity_ids=[entity_id])
            passages = found_passages.get(entity_id, [])
        return EntityAnswer(
            entity=_record(found),
            relationships=records,
            passages=passages[:ENTITY_PASSAGES],
            passage_count=len(passages),
        )

    async def retrieve_context(
        self, query: str, k: int = ask.ASK_K, budget_chars: int | None = None
    ) -> ContextAnswer:
        """The context for a question: the passages that answer it, best first, and their graph.

        Each passage carries its fused score and each channel's (bm25, graph,
        dense; null where a channel did not rank it), its document and
        offsets, and the entities it names; then the entities that matter
        and the relationships among them.

        Args:
            query: The question, in plain words.
            k: How many passages to return (1 to 1000).
            budget_chars: Keep the passages' texts within this many characters,
                best first, cut only at a sentence end.
        """
        return await ask.answer(
            query,
            self.tenant_id,
            chunks=await self._chunks(),
            graph=self.database.graph,
            k=k,
            budget_chars=budget_chars,
        )

    async def list_neighbors(self, entity: str, depth: int = 1) -> NeighborsAnswer:
        """List the entities within `depth` hops of one entity, nearest first.

        Args:
            entity: The entity's id, or its exact name.
            depth: How many hops to walk (1 to 10).
        """
        start, rows = await actions.neighbors(
            self.database.graph, self.tenant_id, entity, depth=depth
        )
        return NeighborsAnswer(entity=_ref(start), depth=depth, neighbors=rows)

    async def add_entities(self, entities: list[NewEntity]) -> list[EntityRef]:
        """Add entities to the graph (each gets a new id); return them as written.

        Args:
            entities: The entities to add, each with a name and a type.
        """
        written = [
            Entity.model_validate(
                {
                    "id": EntityId(uuid4()),
                    "tenant_id": self.tenant_id,
                    "extraction_method": ExtractionMethod.MANUAL,
                    "confidence": 1.0,
                    **each.model_dump(),
                }
            )
            for each in entities
        ]
        await self._write(written, [])
        return [_ref(entity) for entity in written]

    async def add_documents(
        self, documents: list[NewDocument], link_lowercase: bool = False
    ) -> DocumentsAnswer:
        """Add documents for retrieve_context, linking the graph's entities they name.

        The whole batch is checked first and written together, or not at
        all; a document whose id is held already is replaced.

        Args:
            documents: Each with an id and its text, and a title if it has one.
            link_lowercase: Also link names written in lowercase ("machine
                learning") where the text says them in lowercase; slower.
        """
        chunks, graph, log = self.database.chunks, self.database.graph, self.database.events
        assert chunks is not None  # opened for writing, it is always there
        checked, tenant = _documents(documents), self.tenant_id
        report = await import_documents(
            checked,
            tenant,
            chunks=chunks,
            graph=graph,
            event_log=log,
            link_lowercase=link_lowercase,
        )
        answer: DocumentsAnswer = {
            "documents": report.documents,
            "passages": report.chunks,
            "replaced": report.replaced,
            "mentions": report.mentions,
            "linked_entities": report.linked_entities,
        }
        return answer

    async def add_relationship(
        self,
        source: str,
        target: str,
        relationship_type: str,
        properties: dict[str, Any] | None = None,
    ) -> RelationshipRecord:
        """Join two entities the graph holds with a typed relationship.

        Args:
            source: The entity it goes from: an id, or an exact name.
            target: The entity it goes to: an id, or an exact name.
            relationship_type: What joins them, e.g. works_for, located_in.
            properties: Any JSON fields.
        """
        graph = self.database.graph
        ends = await actions.resolve_all(graph, self.tenant_id, [source, target])
        held = {each.id: each for each in await graph.get_entities(ends, self.tenant_id)}
        relationship = Relationship(
            id=RelationshipId(uuid4()),
            tenant_id=self.tenant_id,
            source_entity_id=ends[0],
            target_entity_id=ends[1],
            relationship_type=relationship_type,
            properties=properties or {},
            extraction_method=ExtractionMethod.MANUAL,
        )
        await self._write([held[ends[0]], held[ends[1]]], [relationship])
        return RelationshipRecord(
            id=str(relationship.id),
            relationship_type=relationship_type,
            direction="outgoing",
            other=_ref(held[ends[1]]),
            description=None,
            properties=relationship.properties,
        )

    async def _write(self, entities: list[Entity], relationships: list[Relationship]) -> None:
        keyed = [
            entity.model_copy(update={"blocking_keys": blocking_keys_for(entity)})
            for entity in entities
        ]
        await actions.import_rows(
            Rows("mcp", keyed, relationships),
            graph=self.database.graph,
            embeddings=self.embeddings,
            vectors=self.database.vectors,
            events=self.database.events,
        )


#: The read tools, each answered by the `GraphTools` method of its name.
READ_TOOLS: Final = ("retrieve_context", "search_entities", "get_entity", "list_neighbors")
#: The tools `--allow-writes` adds.
WRITE_TOOLS: Final = ("add_documents", "add_entities", "add_relationship")


def _as_tool_errors[**P, T](
    method: Callable[P, Awaitable[T]],
) -> Callable[P, Awaitable[T]]:
    """`method`, with our errors turned into tool errors the client reads."""

    @wraps(method)
    async def tool(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(*args, **kwargs)
        except (CommandError, RedstringError, RowError, ValueError) as exc:
            raise ToolError(" ".join(str(exc).split())) from exc

    return tool


def build_server(tools: GraphTools, *, allow_writes: bool) -> MCPServer[Any]:
    """An `MCPServer` whose tools are `tools`' methods; the write tools only with `allow_writes`."""
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for name in READ_TOOLS + (WRITE_TOOLS if allow_writes else ()):
        server.add_tool(_as_tool_errors(getattr(tools, name)), name=name)
    return server


async def serve(
    location: str,
    tenant_id: TenantId,
    *,
    allow_writes: bool,
    embeddings: EmbeddingProvider | None,
) -> None:
    """Serve the database at `location` over stdio until the client closes the session.

    Read-only unless `allow_writes`; then the stores are opened for writing
    with `embeddings`, as `import` opens them, and every write is recorded
    in the database's event log. The stores are closed however the session
    ends.
    """
    if allow_writes:
        database = await open_database(
            location, read_only=False, embeddings=embeddings, chunks=True
        )
    else:
        database = await open_database(location, read_only=True, chunks=True)
        try:
            embeddings = await search_provider(database)
        except BaseException:
            await database.close()
            raise
    async with database:
        server = build_server(
            GraphTools(database, tenant_id, embeddings, location), allow_writes=allow_writes
        )
        await server.run_stdio_async()
