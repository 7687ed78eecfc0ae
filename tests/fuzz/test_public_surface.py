"""Every public entry point, called with wrong types and boundary values, refuses cleanly.

The suite is mechanical: it walks `redstring.__all__`, and for each exported
function, each exported class's constructor and each public method of the
adapters, it builds a valid call from the parameter names (`VALID`), then
lets hypothesis replace one argument with a hostile value (`HOSTILE`). The
only outcomes allowed are an answer, a `ValueError` (which names the
argument) or a `RedstringError`. A `TypeError`, `AttributeError`,
`KeyError`, `OverflowError`, `UnicodeEncodeError` or `RecursionError` fails
the test with the call that raised it.

A new public method is covered without touching this file as long as its
parameters have names `VALID` knows; one that does not makes
`test_every_public_callable_is_covered` fail, naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID, uuid4

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import redstring
from redstring import (
    CachingEmbeddingProvider,
    ChunkId,
    ChunkProjection,
    Consolidator,
    ContextRetriever,
    DocumentExtracted,
    EntityId,
    Extraction,
    ExtractionPipeline,
    FakeEmbeddingProvider,
    FakeLlmProvider,
    GraphProjection,
    InMemoryChunkStore,
    InMemoryEventLog,
    InMemoryGraphStore,
    InMemoryVectorStore,
    LlmMergeAdjudicator,
    MergeQuestion,
    PassageVectorProjection,
    PostgresChunkStore,
    PostgresEventLog,
    PostgresGraphStore,
    PostgresVectorStore,
    RedstringError,
    RelationshipId,
    RetrievalMode,
    Retriever,
    SlidingWindowChunker,
    SourceDocument,
    SourceId,
    SqliteChunkStore,
    SqliteEventLog,
    SqliteGraphStore,
    SqliteVectorStore,
    VectorProjection,
    VectorRecord,
)
from redstring.domain.limits import MAX_DEPTH, MAX_LIMIT, MAX_NAME_LENGTH, MAX_QUERY_LENGTH
from redstring.testing.factories import TENANT, make_chunk, make_entity, make_relationship

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

DIMENSION = 8
ENTITY_ID = EntityId(UUID("00000000-0000-4000-8000-00000000000a"))
CHUNK_ID = ChunkId(UUID("00000000-0000-4000-8000-00000000000c"))
ANSWER = {"entities": [{"name": "Ada Lovelace", "entity_type": "person"}], "relationships": []}
#: The session's Postgres server, set by `_postgres_server` before any test runs.
POSTGRES: list[str] = []


@pytest.fixture(autouse=True)
def _postgres_server(postgres_dsn: str) -> None:
    if not POSTGRES:
        POSTGRES.append(postgres_dsn)


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return {"deep": value}


#: Values no entry point should be surprised by: wrong types, the edges of
#: every bound, text no store can hold, and numbers past every fixed width.
HOSTILE: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1.5,
    math.nan,
    math.inf,
    2**64,
    -(2**63) - 1,
    10**9,
    MAX_LIMIT + 1,
    MAX_DEPTH + 1,
    "",
    " ",
    "Ada\x00",
    "\ud800",
    "x" * (MAX_NAME_LENGTH + 1),
    "x" * (MAX_QUERY_LENGTH + 1),
    str(TENANT),
    TENANT.int,
    b"Ada",
    [],
    [None],
    ["\udfff"],
    [str(ENTITY_ID)],
    [2**64],
    {},
    {"k": 2**64},
    {"k": math.nan},
    nested(100),
    object(),
    RetrievalMode.LEXICAL,
)

hostile = st.sampled_from(HOSTILE) | st.integers() | st.floats() | st.text(max_size=3)


def document() -> SourceDocument:
    return SourceDocument(id=SourceId("doc-1"), text="Ada Lovelace wrote the first program.")


def extracted() -> DocumentExtracted:
    return DocumentExtracted(
        event_id=uuid4(),
        tenant_id=TENANT,
        source_id=SourceId("doc-1"),
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        domain="general",
        model="fake/canned-v1",
        entities=(make_entity(id=ENTITY_ID),),
        relationships=(),
    )


def vector() -> list[float]:
    return [1.0] + [0.0] * (DIMENSION - 1)


class World:
    """Fresh collaborators for one call; SQLite files live in a temporary folder.

    Each call also runs with that folder as the working directory, so a
    hostile `path` that is merely odd ("lexical", a tenant id) makes its file
    there, not in the repository.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.closing: list[Any] = []
        self.schemas: list[str] = []

    def keep[T](self, thing: T) -> T:
        self.closing.append(thing)
        return thing

    def provider(self) -> FakeLlmProvider:
        return FakeLlmProvider(by_substring={"Ada": ANSWER}, default=ANSWER)

    def embeddings(self) -> FakeEmbeddingProvider:
        return FakeEmbeddingProvider(dimension=DIMENSION)

    def graph(self) -> InMemoryGraphStore:
        return InMemoryGraphStore()

    def vectors(self) -> InMemoryVectorStore:
        return InMemoryVectorStore(dimension=DIMENSION)

    def path(self) -> Path:
        return self.folder / f"{uuid4()}.db"

    @property
    def dsn(self) -> str:
        return POSTGRES[0]

    def schema(self) -> str:
        """A Postgres schema of this world's own, dropped when it closes."""
        self.schemas.append(f"fuzz_{uuid4().hex}")
        return self.schemas[-1]

    async def close(self) -> None:
        for thing in self.closing:
            await thing.close()
        if self.schemas:
            connection = await asyncpg.connect(self.dsn)
            try:
                for name in self.schemas:
                    await connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            finally:
                await connection.close()


#: A valid value for a parameter, by its name; each gets the world to build from.
VALID: dict[str, Callable[[World], Any]] = {
    "tenant_id": lambda _: TENANT,
    "entity_id": lambda _: ENTITY_ID,
    "relationship_id": lambda _: RelationshipId(ENTITY_ID),
    "entity_ids": lambda _: [ENTITY_ID],
    "entity": lambda _: make_entity(id=ENTITY_ID),
    "entities": lambda _: [make_entity(id=ENTITY_ID)],
    "relationship": lambda _: make_relationship(make_entity(), make_entity()),
    "relationships": lambda _: [],
    "name": lambda _: "Ada Lovelace",
    "entity_type": lambda _: "person",
    "relationship_type": lambda _: "related_to",
    "limit": lambda _: 5,
    "k": lambda _: 5,
    "depth": lambda _: 2,
    "key": lambda _: "p:ada l",
    "keys": lambda _: ["p:ada l"],
    "vector": lambda _: vector(),
    "metadata": lambda _: {"entity_type": "person"},
    "records": lambda _: [VectorRecord(entity_id=ENTITY_ID, tenant_id=TENANT, vector=vector())],
    "min_score": lambda _: 0.1,
    "entity_types": lambda _: ["person"],
    "query": lambda _: "Ada Lovelace",
    "queries": lambda _: ["Ada Lovelace", "Babbage"],
    "mode": lambda _: RetrievalMode.HYBRID,
    "text": lambda _: "Ada Lovelace wrote the first program.",
    "texts": lambda _: ["Ada Lovelace"],
    "schema": lambda _: Extraction,
    "system_prompt": lambda _: "Extract.",
    "document": lambda _: document(),
    "documents": lambda _: [document()],
    "provider": lambda world: world.provider(),
    "store": lambda world: world.graph(),
    "embeddings": lambda world: world.embeddings(),
    "embedding_provider": lambda world: world.embeddings(),
    "vectors": lambda world: world.vectors(),
    "vector_store": lambda world: world.vectors(),
    "graph": lambda world: world.graph(),
    "chunker": lambda _: SlidingWindowChunker(size=100, overlap=10, min_size=10),
    "concurrency": lambda _: 2,
    "event": lambda _: extracted(),
    "events": lambda _: [extracted()],
    "after": lambda _: 0,
    "log": lambda _: InMemoryEventLog(),
    "projections": lambda world: GraphProjection(world.graph()),
    "dimension": lambda _: DIMENSION,
    "path": lambda world: world.path(),
    "left": lambda _: "Ada Lovelace",
    "right": lambda _: "Ada Lovelock",
    "domain_id": lambda _: "general",
    "domain": lambda _: None,
    "size": lambda _: 100,
    "overlap": lambda _: 10,
    "min_size": lambda _: 10,
    "model": lambda _: "fake/model-v1",
    "script": lambda _: [ANSWER],
    "by_substring": lambda _: None,
    "default": lambda _: None,
    "fail_on": lambda _: None,
    "strategies": lambda _: list(redstring.DEFAULT_STRATEGIES),
    "skip_failed_chunks": lambda _: False,
    "allow_partial": lambda _: False,
    "event_log": lambda _: InMemoryEventLog(),
    "dsn": lambda world: world.dsn,
    "pool": lambda _: None,
    "pool_size": lambda _: 2,
    "cache_size": lambda _: 10,
    "index": lambda _: None,
    "canonical_id": lambda _: ENTITY_ID,
    "canonical": lambda _: make_entity(id=ENTITY_ID),
    "merged_ids": lambda _: [EntityId(uuid4())],
    "reason": lambda _: "the same person",
    "merge_event_id": lambda _: uuid4(),
    "event_ids": lambda _: [uuid4()],
    # Nothing listens on port 1, so a provider's call fails fast as its own error.
    "base_url": lambda _: "http://127.0.0.1:1/v1",
    "api_key": lambda _: None,
    "client": lambda _: None,
    "timeout": lambda _: 1.0,
    "max_retries": lambda _: 0,
    "backoff": lambda _: 0.0,
    "batch_size": lambda _: 2,
    "questions": lambda _: [
        MergeQuestion(left=make_entity(), right=make_entity(), score=0.5, reason="names 0.90")
    ],
    "source_id": lambda _: SourceId("doc-1"),
    "ordinal": lambda _: 0,
    "chunk_id": lambda _: CHUNK_ID,
    "chunk_ids": lambda _: [CHUNK_ID],
    "chunk": lambda _: make_chunk(id=CHUNK_ID),
    "chunks": lambda _: [make_chunk(id=CHUNK_ID)],
    "mentions": lambda _: [],
}

#: Parameters whose valid value depends on the callable (cosine's vectors).
OVERRIDES: dict[str, dict[str, Callable[[World], Any]]] = {
    "cosine_similarity": {"left": lambda _: [1.0, 0.0], "right": lambda _: [0.5, 0.5]},
    "event_from_json": {"text": lambda _: redstring.event_to_json(extracted())},
    "VectorProjection": {"store": lambda world: world.vectors()},
    "PassageVectorProjection": {"store": lambda world: world.vectors()},
    "ChunkProjection": {"store": lambda _: InMemoryChunkStore()},
    "ContextRetriever": {
        "chunks": lambda _: InMemoryChunkStore(),
        "passage_vectors": lambda world: world.vectors(),
    },
    **{
        name: {
            "chunks": lambda _: InMemoryChunkStore(),
            "passage_vectors": lambda world: world.vectors(),
        }
        for name in ("import_documents", "delete_tenant")
    },
    **{
        name: {"chunks": lambda _: InMemoryChunkStore()}
        for name in (
            "build_graph",
            "build_graphs",
            "delete_document",
            "entity_mentions",
            "mentioned_entities",
        )
    },
    "PostgresGraphStore": {"schema": lambda world: world.schema()},
    "PostgresVectorStore": {"schema": lambda world: world.schema()},
    "PostgresEventLog": {"schema": lambda world: world.schema()},
    "PostgresChunkStore": {"schema": lambda world: world.schema()},
    "Chunk": {
        "id": lambda _: CHUNK_ID,
        "ordinal": lambda _: 0,
        "start": lambda _: 0,
        "end": lambda _: len("Ada Lovelace wrote the first program."),
    },
}


@dataclass(frozen=True)
class Target:
    """One public callable: how to get it (from a fresh world) and its signature."""

    label: str
    resolve: Callable[[World], Awaitable[Callable[..., Any]]]
    signature: inspect.Signature


def _subjects() -> dict[str, Callable[[World], Any]]:
    """How to build a valid instance of each exported class with public methods."""
    return {
        "InMemoryGraphStore": lambda world: world.graph(),
        "SqliteGraphStore": lambda world: world.keep(SqliteGraphStore(world.path())),
        "InMemoryVectorStore": lambda world: world.vectors(),
        "SqliteVectorStore": lambda world: world.keep(
            SqliteVectorStore(world.path(), dimension=DIMENSION)
        ),
        "InMemoryEventLog": lambda _: InMemoryEventLog(),
        "SqliteEventLog": lambda world: world.keep(SqliteEventLog(world.path())),
        "PostgresGraphStore": lambda world: world.keep(
            PostgresGraphStore(world.dsn, schema=world.schema(), pool_size=2)
        ),
        "PostgresVectorStore": lambda world: world.keep(
            PostgresVectorStore(world.dsn, dimension=DIMENSION, schema=world.schema(), pool_size=2)
        ),
        "PostgresEventLog": lambda world: world.keep(
            PostgresEventLog(world.dsn, schema=world.schema(), pool_size=2)
        ),
        "InMemoryChunkStore": lambda _: InMemoryChunkStore(),
        "SqliteChunkStore": lambda world: world.keep(SqliteChunkStore(world.path())),
        "PostgresChunkStore": lambda world: world.keep(
            PostgresChunkStore(world.dsn, schema=world.schema(), pool_size=2)
        ),
        "FakeEmbeddingProvider": lambda world: world.embeddings(),
        "CachingEmbeddingProvider": lambda world: CachingEmbeddingProvider(world.embeddings()),
        "FakeLlmProvider": lambda world: world.provider(),
        "SlidingWindowChunker": lambda _: SlidingWindowChunker(),
        "ExtractionPipeline": lambda world: ExtractionPipeline(world.provider()),
        "GraphProjection": lambda world: GraphProjection(world.graph()),
        "VectorProjection": lambda world: VectorProjection(world.vectors()),
        "PassageVectorProjection": lambda world: PassageVectorProjection(world.vectors()),
        "ChunkProjection": lambda _: ChunkProjection(InMemoryChunkStore()),
        "Retriever": lambda world: Retriever(
            embeddings=world.embeddings(), vectors=world.vectors(), graph=world.graph()
        ),
        "ContextRetriever": lambda world: ContextRetriever(
            chunks=InMemoryChunkStore(),
            graph=world.graph(),
            embeddings=world.embeddings(),
            passage_vectors=world.vectors(),
        ),
        "Consolidator": lambda world: Consolidator(
            graph=world.graph(), event_log=InMemoryEventLog(), vectors=world.vectors()
        ),
        "LlmMergeAdjudicator": lambda world: LlmMergeAdjudicator(world.provider()),
        "OpenAiCompatibleLlmProvider": lambda world: world.keep(
            redstring.OpenAiCompatibleLlmProvider(
                base_url="http://127.0.0.1:1/v1", model="m", max_retries=0, timeout=1.0
            )
        ),
        "OpenAiCompatibleEmbeddingProvider": lambda world: world.keep(
            redstring.OpenAiCompatibleEmbeddingProvider(
                base_url="http://127.0.0.1:1/v1",
                model="m",
                dimension=DIMENSION,
                max_retries=0,
                timeout=1.0,
            )
        ),
    }


#: Exported classes this suite does not drive, each with why and where it is checked.
NOT_FUZZED: Final = {
    # Every probe of a hostile constructor argument would load the model.
    "E5EmbeddingProvider": "tests/unit/llm/adapters/test_e5.py checks its arguments",
}


def _public_methods(cls: type) -> list[str]:
    return sorted(
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_")
        and name != "close"
        and (inspect.isfunction(member) or inspect.ismethod(member))
    )


def _targets() -> list[Target]:
    targets: list[Target] = []
    subjects = _subjects()
    for export in redstring.__all__:
        thing = getattr(redstring, export)
        if inspect.isfunction(thing):

            async def plain(_: World, thing: Any = thing) -> Any:
                return thing

            targets.append(Target(export, plain, inspect.signature(thing)))
        elif export in subjects:
            cls = thing

            async def constructor(_: World, cls: Any = cls) -> Any:
                return cls

            targets.append(Target(f"{export}()", constructor, inspect.signature(cls)))
            for method in _public_methods(cls):

                async def bound(world: World, export: str = export, method: str = method) -> Any:
                    return getattr(subjects[export](world), method)

                targets.append(
                    Target(f"{export}.{method}", bound, inspect.signature(getattr(cls, method)))
                )
    return targets


TARGETS = _targets()
BY_LABEL = {target.label: target for target in TARGETS}


def _parameters(target: Target) -> list[inspect.Parameter]:
    return [p for p in target.signature.parameters.values() if p.name not in {"self", "cls"}]


def _valid(target: Target, parameter: inspect.Parameter) -> Callable[[World], Any] | None:
    name = target.label.split(".")[0].removesuffix("()")
    return OVERRIDES.get(name, {}).get(parameter.name) or VALID.get(parameter.name)


def test_every_exported_class_with_public_methods_is_a_subject() -> None:
    """A new adapter is fuzzed once it is listed in `_subjects`; this names it until then."""
    missing = sorted(
        export
        for export in redstring.__all__
        if inspect.isclass(thing := getattr(redstring, export))
        # A value type: its constructor is fuzzed with the callables, and its
        # methods are Sequence's own.
        and not issubclass(thing, BaseModel | Exception | Sequence)
        and not getattr(thing, "_is_protocol", False)
        # A port's checked base: abstract, fuzzed through every adapter built on it.
        and not inspect.isabstract(thing)
        and _public_methods(thing)
        and export not in _subjects()
        and export not in NOT_FUZZED
    )
    assert missing == []


def test_every_public_callable_is_covered() -> None:
    """A public method whose parameters this suite cannot fill is named here."""
    unknown = sorted(
        f"{target.label}({parameter.name})"
        for target in TARGETS
        for parameter in _parameters(target)
        if _valid(target, parameter) is None and parameter.default is inspect.Parameter.empty
    )
    assert unknown == []
    assert len(TARGETS) > 60


async def _call(target: Target, world: World, replace: str | None, value: Any) -> Any:
    function = await target.resolve(world)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    in_order = True  # positional until a parameter keeps its default
    for parameter in _parameters(target):
        make = _valid(target, parameter)
        if parameter.name == replace:
            argument = value
        elif make is not None:
            argument = make(world)
        else:
            in_order = False
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY or not in_order:
            keywords[parameter.name] = argument
        else:
            positional.append(argument)
    result = function(*positional, **keywords)
    if inspect.isawaitable(result):
        result = await result
    if target.label.endswith("()"):
        await _probe(result, world)
    return result


async def _probe(instance: Any, world: World) -> None:
    """Use what a hostile constructor argument built: a bad value may only bite later."""
    if hasattr(instance, "close"):
        world.keep(instance)
    for method in _public_methods(type(instance)):
        function = getattr(instance, method)
        signature = inspect.signature(function)
        overrides = OVERRIDES.get(type(instance).__name__, {})
        keywords = {
            name: make(world)
            for name in signature.parameters
            if (make := overrides.get(name) or VALID.get(name)) is not None
        }
        result = function(**keywords)
        if inspect.isawaitable(result):
            await result


def _run_one(target: Target, replace: str | None, value: Any) -> BaseException | None:
    async def scenario() -> BaseException | None:
        with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
            world = World(Path(folder))
            try:
                await _call(target, world, replace, value)
            except (ValueError, RedstringError):
                return None
            except Exception as exc:
                return exc
            finally:
                await world.close()
        return None

    return asyncio.run(scenario())


@pytest.mark.parametrize("label", sorted(BY_LABEL))
def test_a_valid_call_succeeds(label: str) -> None:
    """The baseline every hostile call departs from: without it the fuzzing proves nothing.

    A valid call may still meet a `RedstringError` the fresh world explains
    (a relationship whose endpoints it does not hold); never a `ValueError`.
    """
    target = BY_LABEL[label]

    async def scenario() -> None:
        with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
            world = World(Path(folder))
            try:
                await _call(target, world, None, None)
            except RedstringError:
                pass
            finally:
                await world.close()

    asyncio.run(scenario())


FUZZ = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)


@pytest.mark.parametrize(
    "label", sorted(label for label, target in BY_LABEL.items() if _parameters(target))
)
@FUZZ
@given(data=st.data())
def test_a_hostile_argument_is_refused_with_value_error_or_redstring_error(
    label: str, data: st.DataObject
) -> None:
    target = BY_LABEL[label]
    parameter = data.draw(st.sampled_from([p.name for p in _parameters(target)]), label="argument")
    value = data.draw(hostile, label="value")
    raised = _run_one(target, parameter, value)
    assert raised is None, f"{label}({parameter}={value!r:.60}) raised {raised!r:.300}"


@pytest.mark.parametrize(
    "label", sorted(label for label, target in BY_LABEL.items() if _parameters(target))
)
def test_every_hostile_literal_is_refused_for_every_argument(label: str) -> None:
    """The literals, exhaustively: cheap, and what hypothesis would take longest to find."""
    target = BY_LABEL[label]
    failures = [
        f"{label}({parameter.name}={value!r:.60}) raised {raised!r:.200}"
        for parameter in _parameters(target)
        for value in HOSTILE
        if (raised := _run_one(target, parameter.name, value)) is not None
    ]
    assert failures == []
