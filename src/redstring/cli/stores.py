"""Where the command line chooses its stores, tenants and embedding models.

`open_database` is the one place a `--db` value becomes stores: a file
path means SQLite, a `postgresql://` (or `postgres://`) URL means the
Postgres stores (the `postgres` extra), in their default schema. Read
commands open it read-only, so they never create or change a file or a
schema; one that is not a redstring database is refused, not given tables.
The passages `add` writes live in the same file or schema (a chunk store);
a command that reads them opens it too, read-only, and finds none in a
database nothing was ever added to.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Self, overload
from uuid import NAMESPACE_URL, UUID, uuid5

from redstring.chunks.adapters.sqlite import SqliteChunkStore
from redstring.domain.exceptions import StoreError
from redstring.domain.ids import TenantId
from redstring.events.adapters.sqlite import SqliteEventLog
from redstring.graph.adapters.sqlite import SqliteGraphStore
from redstring.llm.adapters.fake_embedding import FakeEmbeddingProvider
from redstring.vector.adapters.sqlite import SqliteVectorStore

if TYPE_CHECKING:
    from redstring.chunks.adapters.postgres import PostgresChunkStore
    from redstring.events.adapters.postgres import PostgresEventLog
    from redstring.graph.adapters.postgres import PostgresGraphStore
    from redstring.ports.embedding import EmbeddingProvider
    from redstring.vector.adapters.postgres import PostgresVectorStore

#: The tenant used when `--tenant` is omitted.
DEFAULT_TENANT: Final = "default"
#: The embedding choices `--embeddings` accepts.
EMBEDDINGS: Final = ("local", "hash", "none")
#: The dimension of the `hash` embedding, the same as the local model's.
HASH_DIMENSION: Final = 384
#: How a `--db` value that names a Postgres server begins.
POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def is_postgres(location: str) -> bool:
    """Whether `location` is a Postgres URL rather than a SQLite file.

    The scheme is matched whatever its case, as the driver reads it.
    """
    return location[: len(POSTGRES_SCHEMES[0])].lower().startswith(POSTGRES_SCHEMES)


def shown(location: str) -> str:
    """`location` as messages print it: a Postgres URL without its passwords.

    Hides the password in the authority part (`user:secret@host`) and the
    value of every `password` or `sslpassword` query parameter, however its
    name is cased or percent-encoded (the driver decodes names before reading
    them).
    """
    if not is_postgres(location):
        return location
    scheme, _, rest = location.partition("://")
    authority_end = min((rest.find(mark) for mark in "/?#" if mark in rest), default=len(rest))
    authority, tail = rest[:authority_end], rest[authority_end:]
    user_info, at, host = authority.rpartition("@")
    if at and ":" in user_info:
        authority = f"{user_info.split(':', 1)[0]}:***@{host}"
    tail, hash_, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    if question:
        tail = f"{path}?{_masked_query(query)}"
    return f"{scheme}://{authority}{tail}{hash_}{fragment}"


#: The query parameters of a Postgres URL that `shown` hides.
_SECRET_PARAMETERS: Final = frozenset({"password", "sslpassword"})
_PERCENT_ESCAPES: Final = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _decoded(name: str) -> str:
    """A query parameter's name as the driver reads it: `+` a space, `%XX` a UTF-8 byte."""
    return _PERCENT_ESCAPES.sub(
        lambda run: bytes.fromhex(run[0].replace("%", "")).decode("utf-8", "replace"),
        name.replace("+", " "),
    )


def _masked_query(query: str) -> str:
    fields = []
    for field in query.split("&"):
        name, equals, _ = field.partition("=")
        if equals and _decoded(name).lower() in _SECRET_PARAMETERS:
            field = f"{name}=***"
        fields.append(field)
    return "&".join(fields)


class CommandError(Exception):
    """A failure to report in one line and exit with status 1."""


def tenant_id_for(value: str) -> TenantId:
    """`value` itself when it is a UUID, else a stable UUID derived from it."""
    try:
        return TenantId(UUID(value))
    except ValueError:
        return TenantId(uuid5(NAMESPACE_URL, f"redstring:tenant:{value}"))


def tenant_label(tenant_id: TenantId) -> str:
    """`default` for the default tenant; otherwise the UUID (names are not stored)."""
    return DEFAULT_TENANT if tenant_id == tenant_id_for(DEFAULT_TENANT) else str(tenant_id)


def embedding_provider(choice: str) -> EmbeddingProvider | None:
    """The provider `--embeddings` names, or `None` for `none`."""
    if choice == "none":
        return None
    if choice == "hash":
        return FakeEmbeddingProvider(dimension=HASH_DIMENSION)
    try:
        from redstring.llm.adapters.e5 import E5EmbeddingProvider
    except ImportError as exc:
        raise CommandError(f"{exc} (or pass --embeddings hash or none)") from exc
    return E5EmbeddingProvider()


def _choice_for(model: str) -> str | None:
    if model == FakeEmbeddingProvider(dimension=HASH_DIMENSION).model:
        return "hash"
    try:
        from redstring.llm.adapters.e5 import MODEL
    except ImportError:
        return "local" if "e5" in model else None
    return "local" if model == MODEL else None


@dataclass
class Database:
    """The stores one `--db` names, and the embedding model its vectors were made with.

    Opened for writing, it holds the file's event log too, which records
    every import and build. `chunks` is its chunk store (the passages and
    their mentions) when the command asked for it and, for reading, the
    database holds one.
    """

    location: str
    graph: SqliteGraphStore | PostgresGraphStore
    vectors: SqliteVectorStore | PostgresVectorStore | None
    model: str | None
    dimension: int | None
    events: SqliteEventLog | PostgresEventLog | None = None
    chunks: SqliteChunkStore | PostgresChunkStore | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the stores and the log."""
        try:
            await self.graph.close()
        finally:
            try:
                if self.vectors is not None:
                    await self.vectors.close()
            finally:
                try:
                    if self.events is not None:
                        await self.events.close()
                finally:
                    if self.chunks is not None:
                        await self.chunks.close()


async def open_database(
    location: str,
    *,
    read_only: bool,
    embeddings: EmbeddingProvider | None = None,
    chunks: bool = False,
) -> Database:
    """The stores at `location`, for reading, or for writing with `embeddings`.

    For reading, the file must exist and hold a redstring graph; it is
    opened read-only, and its vectors only if it holds any. For writing, the
    file's event log comes too, so every import and build is recorded and
    `replay` can rebuild either store from it; and
    the embedding choice must agree with what the file already holds:
    another model's vectors, vectors when `embeddings` is `None`, or
    entities without vectors when it is not, are refused before anything
    is written, since each would hide entities from the semantic channel.
    With `chunks`, the chunk store comes too (see `open_chunks`).

    Raises:
        CommandError: a refusal above, in one line.
    """
    database = await _open_stores(location, read_only=read_only, embeddings=embeddings)
    return await _with_chunks(database, location, read_only=read_only) if chunks else database


async def _with_chunks(database: Database, location: str, *, read_only: bool) -> Database:
    """`database` with its chunk store attached; closed whole if that fails."""
    try:
        database.chunks = await open_chunks(location, read_only=read_only)
    except BaseException:
        await database.close()
        raise
    return database


async def _open_stores(
    location: str, *, read_only: bool, embeddings: EmbeddingProvider | None
) -> Database:
    """`open_database` without the chunk store."""
    if is_postgres(location):
        return await _open_postgres(location, read_only=read_only, embeddings=embeddings)
    try:
        settings = await SqliteVectorStore.stored_settings(location)
    except StoreError as exc:
        raise CommandError(f"{location} is not a redstring database ({exc.reason})") from exc
    dimension, model = settings if settings is not None else (None, None)
    exists = await asyncio.to_thread(os.path.isfile, location)
    if read_only:
        if not exists:
            raise CommandError(f"no such database: {location}")
        graph = SqliteGraphStore(location, read_only=True)
        try:
            await graph.count_by_tenant()
        except StoreError as exc:
            await graph.close()
            raise _refusal(location, exc) from exc
        vectors = (
            SqliteVectorStore(location, dimension=dimension, model=model, read_only=True)
            if dimension is not None
            else None
        )
        return Database(location, graph, vectors, model, dimension)

    _refuse_other_embeddings(location, settings, embeddings)
    if embeddings is not None and settings is None and exists:
        _refuse_unembedded(location, await _entity_count(location))
    graph = SqliteGraphStore(location)
    vectors = None
    if embeddings is not None:
        vectors = await _claimed(
            SqliteVectorStore(location, dimension=embeddings.dimension, model=embeddings.model),
            graph,
        )
    return _writable(location, graph, vectors, embeddings, SqliteEventLog(location))


async def _claimed[V: SqliteVectorStore | PostgresVectorStore](
    vectors: V, graph: SqliteGraphStore | PostgresGraphStore
) -> V:
    """`vectors`, once they claim the database for their model; both closed if that fails.

    The claim is one transaction before the graph is written, so of two
    imports with different models the loser writes nothing.
    """
    try:
        await vectors.count_by_tenant()
    except BaseException:
        await vectors.close()
        await graph.close()
        raise
    return vectors


def _writable(
    label: str,
    graph: SqliteGraphStore | PostgresGraphStore,
    vectors: SqliteVectorStore | PostgresVectorStore | None,
    embeddings: EmbeddingProvider | None,
    events: SqliteEventLog | PostgresEventLog,
) -> Database:
    """The stores opened for writing, with the model and dimension of `embeddings`."""
    model = embeddings.model if embeddings is not None else None
    dimension = embeddings.dimension if embeddings is not None else None
    return Database(label, graph, vectors, model, dimension, events)


def _refuse_other_embeddings(
    location: str,
    settings: tuple[int, str | None] | None,
    embeddings: EmbeddingProvider | None,
) -> None:
    """Refuse an import whose embedding choice disagrees with the vectors held."""
    if settings is None:
        return
    dimension, model = settings
    if embeddings is None:
        raise CommandError(
            f"{shown(location)} holds vectors of model {model!r}: an import without "
            f"embeddings would hide its entities from semantic search; pass --embeddings "
            f"{_choice_for(model or '') or 'with that model'}, or use another --db"
        )
    if dimension != embeddings.dimension or model not in (None, embeddings.model):
        raise CommandError(
            f"{shown(location)} holds vectors of model {model!r} ({dimension} dimensions), "
            f"not {embeddings.model!r}: pass the --embeddings it was made with, or another --db"
        )


def _refuse_unembedded(location: str, held: int) -> None:
    """Refuse embedding new entities beside `held` ones that have no vectors."""
    if held:
        raise CommandError(
            f"{shown(location)} holds {held:,} entities without vectors (imported with "
            "--embeddings none): embedding only the new ones would hide those from "
            "semantic search; pass --embeddings none, or use another --db"
        )


def _postgres() -> tuple[
    type[PostgresGraphStore], type[PostgresVectorStore], type[PostgresEventLog]
]:
    """The Postgres store classes, loaded only for a Postgres `--db`."""
    try:
        from redstring.events.adapters.postgres import PostgresEventLog
        from redstring.graph.adapters.postgres import PostgresGraphStore
        from redstring.vector.adapters.postgres import PostgresVectorStore
    except ImportError as exc:
        raise CommandError(f"{exc}; a postgresql:// --db needs it") from exc
    return PostgresGraphStore, PostgresVectorStore, PostgresEventLog


async def _open_postgres(
    location: str, *, read_only: bool, embeddings: EmbeddingProvider | None
) -> Database:
    """`open_database` for a Postgres URL: the stores in its default schema."""
    graph_store, vector_store, log_store = _postgres()
    label = shown(location)
    try:
        settings = await vector_store.stored_settings(location)
    except StoreError as exc:
        raise CommandError(f"cannot read {label} ({exc.reason})") from exc
    dimension, model = settings if settings is not None else (None, None)
    graph = graph_store(location, read_only=read_only)
    try:
        counts = await graph.count_by_tenant()
    except StoreError as exc:  # read-only: an empty schema; for writing, a failed database
        await graph.close()
        raise CommandError(f"{label} is not a redstring database ({exc.reason})") from exc
    if read_only:
        vectors = (
            vector_store(location, dimension=dimension, model=model, read_only=True)
            if dimension is not None
            else None
        )
        return Database(label, graph, vectors, model, dimension)
    try:
        _refuse_other_embeddings(location, settings, embeddings)
        if embeddings is not None and settings is None:
            _refuse_unembedded(location, sum(entities for entities, _ in counts.values()))
    except CommandError:
        await graph.close()
        raise
    vectors = None
    if embeddings is not None:
        vectors = await _claimed(
            vector_store(location, dimension=embeddings.dimension, model=embeddings.model), graph
        )
    return _writable(label, graph, vectors, embeddings, log_store(location))


@overload
async def open_chunks(
    location: str, *, read_only: Literal[False]
) -> SqliteChunkStore | PostgresChunkStore: ...


@overload
async def open_chunks(
    location: str, *, read_only: bool
) -> SqliteChunkStore | PostgresChunkStore | None: ...


async def open_chunks(
    location: str, *, read_only: bool
) -> SqliteChunkStore | PostgresChunkStore | None:
    """The chunk store of the database at `location` (the passages `add` wrote).

    For writing it is created when missing. For reading it is opened
    read-only, creating nothing, and is `None` when the database holds no
    chunk store (nothing was ever added to it).

    Raises:
        CommandError: the chunk store cannot be read, or the `postgres`
            extra is missing for a Postgres URL.
    """
    store: SqliteChunkStore | PostgresChunkStore
    if is_postgres(location):
        try:
            from redstring.chunks.adapters.postgres import PostgresChunkStore
        except ImportError as exc:
            raise CommandError(f"{exc}; a postgresql:// --db needs it") from exc
        store = PostgresChunkStore(location, read_only=read_only)
    else:
        store = SqliteChunkStore(location, read_only=read_only)
    try:
        await store.count_chunks(tenant_id_for(DEFAULT_TENANT))
    except StoreError as exc:
        await store.close()
        if read_only and "holds no" in exc.reason:
            return None
        if _older(exc.reason):
            raise CommandError(
                f"{shown(location)} holds older redstring passages ({exc.reason}): run "
                f"`redstring migrate --db {shown(location)}` once to upgrade them"
            ) from exc
        raise CommandError(f"cannot read the passages of {shown(location)} ({exc.reason})") from exc
    except BaseException:
        await store.close()
        raise
    return store


async def open_for_documents(location: str) -> Database:
    """The stores `add` writes: the graph (whose names it links), the chunk store, the log.

    Each is created when missing; no vector store is opened, since adding
    documents embeds no entity.

    Raises:
        CommandError: a store cannot be opened, or the `postgres` extra is
            missing for a Postgres URL.
    """
    if is_postgres(location):
        graph_store, _, log_store = _postgres()
        database = Database(
            shown(location), graph_store(location), None, None, None, log_store(location)
        )
    else:
        database = Database(
            location, SqliteGraphStore(location), None, None, None, SqliteEventLog(location)
        )
    return await _with_chunks(database, location, read_only=False)


def event_log(location: str) -> SqliteEventLog | PostgresEventLog:
    """The event log of the database at `location`, opened for writing."""
    if is_postgres(location):
        return _postgres()[2](location)
    return SqliteEventLog(location)


def _refusal(location: str, exc: StoreError) -> CommandError:
    """Why a read-only open refused `location`, and what to do about an older file."""
    if "older than" in exc.reason:
        return CommandError(
            f"{location} holds an older redstring graph ({exc.reason}): run "
            f"`redstring migrate --db {location}` once to upgrade it"
        )
    return CommandError(f"{location} is not a redstring database ({exc.reason})")


async def migrate_database(location: str) -> bool:
    """Bring the graph at `location` to this redstring's schema, in place.

    `True` if it was migrated, `False` if it was already current. The file
    is first opened read-only, so one that is not a redstring database is
    refused without being given tables.

    Passages kept in an older layout are migrated too, on SQLite and
    Postgres alike (ADR 0096); a Postgres graph is never older than this
    redstring's, since its stores check their layout on every open.

    Raises:
        CommandError: no such file, or not a redstring database.
    """
    if is_postgres(location):
        await (await open_database(location, read_only=True)).close()
        return await _migrate_passages(location)
    if not await asyncio.to_thread(os.path.isfile, location):
        raise CommandError(f"no such database: {location}")
    reader = SqliteGraphStore(location, read_only=True)
    try:
        await reader.count_by_tenant()
    except StoreError as exc:
        refusal = _refusal(location, exc)
        if "older than" not in exc.reason:
            raise refusal from exc
    else:
        return await _migrate_passages(location)
    finally:
        await reader.close()
    async with SqliteGraphStore(location) as graph:
        await graph.count_by_tenant()
    await _migrate_passages(location)
    return True


def _older(reason: str) -> bool:
    """Whether a store's refusal says its layout is older than this redstring's."""
    other_version = "older than" in reason or "reads only version" in reason
    return other_version and "newer" not in reason


async def _migrate_passages(location: str) -> bool:
    """Bring the passages at `location`, if it holds any, to this redstring's layout.

    A chunk store migrates itself on its first writable open (ADR 0096); a
    database holding no passages is given no chunk tables.
    """
    try:
        reader = await open_chunks(location, read_only=True)
    except CommandError as exc:
        if "older" not in str(exc):
            raise
    else:
        if reader is not None:
            await reader.close()
        return False
    await (await open_chunks(location, read_only=False)).close()
    return True


async def open_for_delete(location: str) -> Database:
    """The stores of an existing database, for deleting from both channels.

    Raises:
        CommandError: no such file, or not a redstring database.
    """
    found = await open_database(location, read_only=True)
    await found.close()
    if is_postgres(location):
        graph_store, vector_store, _ = _postgres()
        pg_vectors = (
            vector_store(location, dimension=found.dimension, model=found.model)
            if found.dimension is not None
            else None
        )
        graph = graph_store(location)
        return Database(found.location, graph, pg_vectors, found.model, found.dimension)
    vectors = (
        SqliteVectorStore(location, dimension=found.dimension, model=found.model)
        if found.dimension is not None
        else None
    )
    return Database(location, SqliteGraphStore(location), vectors, found.model, found.dimension)


async def _entity_count(location: str) -> int:
    graph = SqliteGraphStore(location, read_only=True)
    try:
        counts = await graph.count_by_tenant()
    except StoreError as exc:
        if "older than" in exc.reason:
            # Its entities cannot be counted without migrating, which a refusal must not do.
            raise _refusal(location, exc) from exc
        return 0
    finally:
        await graph.close()
    return sum(entities for entities, _ in counts.values())


async def search_provider(database: Database) -> EmbeddingProvider | None:
    """The provider that made `database`'s vectors, or `None` when it holds none.

    Raises:
        CommandError: the file's model is one this command cannot run.
    """
    if database.model is None or database.dimension is None:
        return None
    choice = _choice_for(database.model)
    provider = embedding_provider(choice) if choice is not None else None
    if provider is None or provider.dimension != database.dimension:
        raise CommandError(
            f"{database.location} holds vectors of model {database.model!r}, "
            "which this command lacks"
        )
    return provider
