"""What the Postgres adapters share: a pool, the schema they live in, and error translation.

Every Postgres adapter keeps its tables in one schema (`redstring` unless
the caller names another), records its layout version in that schema's
`meta` table, and creates or checks its tables under a transaction-scoped
advisory lock, so that several processes opening a new database at once do
not race on the DDL. Driver exceptions become `StoreError` here. Why
Postgres and this driver: ADR 0031.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final, Literal, NoReturn

from redstring.domain.exceptions import ClosedError, StoreError, missing_extra
from redstring.domain.limits import MAX_POOL_SIZE
from redstring.domain.validation import check_integer
from redstring.ports.lifetime import AsyncClosable

try:
    import asyncpg as asyncpg  # re-exported: the adapters name its Pool type
except ImportError as _import_error:  # pragma: no cover - exercised in a test via sys.modules
    raise missing_extra("redstring's Postgres stores need asyncpg", "postgres") from _import_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from asyncpg.pool import PoolConnectionProxy

#: The schema every Postgres adapter uses unless told otherwise.
DEFAULT_SCHEMA: Final = "redstring"
#: How many connections a pool the adapter opens itself may hold.
DEFAULT_POOL_SIZE: Final = 10

_SCHEMA_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: The URL schemes asyncpg reads as a DSN.
_DSN_SCHEMES: Final = frozenset({"postgresql", "postgres"})
#: One host of a DSN's host list: a socket directory, `[IPv6]:port`, or `host:port`.
_HOST_PORT: Final = re.compile(
    r"(?:/.*|\[[^\]]+\](?::(?P<v6port>[^,]*))?|[^:\[\]]*(?::(?P<port>.*))?)"
)
#: One advisory lock key for all of redstring's DDL, whatever the schema.
_DDL_LOCK: Final = 0x7265_6473_7472_696E  # "redstrin"
#: Errors an adapter translates into `StoreError`.
DRIVER_ERRORS: Final = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError)

type Connection = PoolConnectionProxy | asyncpg.Connection
type Isolation = Literal["read_committed", "repeatable_read", "serializable"]


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Hand a released connection back to the pool as it is, without a round trip.

    asyncpg's default sends `RESET ALL`, `UNLISTEN *`, `CLOSE ALL` and
    `pg_advisory_unlock_all()` on every release: one more round trip per
    store call. The adapters leave nothing in a session to reset: settings
    are the pool's own (or `set_config(..., true)`, which ends with its
    transaction), locks are transaction-scoped, and nothing listens or
    keeps a cursor. asyncpg still rolls back a transaction left open.
    """


def check_schema_name(schema: str) -> str:
    """`schema`, once it is a plain lower-case SQL identifier (so it needs no escaping).

    Raises:
        ValueError: it is not one.
    """
    if not isinstance(schema, str) or _SCHEMA_NAME.fullmatch(schema) is None:
        raise ValueError(
            "schema must be a lower-case SQL identifier (letters, digits, underscores, "
            f"at most 63 characters, not starting with a digit), got {schema!r}"
        )
    return schema


def check_dsn(dsn: str) -> str:
    """`dsn`, once it is a `postgresql://` URL asyncpg can read; the error never shows its password.

    asyncpg parses a DSN only on the first call, and some of its refusals
    echo a field of it (a password with an unencoded `&` shows its tail), so
    the shape is checked here: the scheme, each host's port, and the query's
    `name=value` fields.

    Raises:
        ValueError: it is not such a URL, saying which part is wrong.
    """
    unencoded = "(is a character of the password, such as @ / ? # &, left unencoded?)"
    try:
        parsed = urllib.parse.urlsplit(dsn)
    except ValueError:
        raise ValueError(f"dsn is not a URL asyncpg can read {unencoded}") from None
    if parsed.scheme not in _DSN_SCHEMES:
        raise ValueError(
            "dsn must be a postgresql:// (or postgres://) URL; asyncpg reads no libpq "
            f"keyword string, got scheme {parsed.scheme!r}"
        )
    hosts = parsed.netloc.rpartition("@")[2]
    for number, host in enumerate(hosts.split(",") if hosts else (), start=1):
        # The host is not echoed: with an unencoded character the password's tail lands here.
        match = _HOST_PORT.fullmatch(host)
        port = None if match is None else (match["port"] or match["v6port"])
        if match is None or (port and not (port.isascii() and port.isdigit())):
            raise ValueError(
                f"dsn's host {number} must be a name or address with a numeric port {unencoded}"
            )
    try:
        urllib.parse.parse_qs(parsed.query, strict_parsing=True)
    except ValueError:
        raise ValueError(f"dsn's query must be name=value fields joined by & {unencoded}") from None
    return dsn


class PostgresClient(AsyncClosable):
    """A pool the adapter opened from a DSN, or one the caller owns, plus the schema.

    Opens nothing until first used; closes only a pool it opened itself. The
    connections of a pool it opens start with `settings` (server parameters);
    a caller's pool is used as it is. With `read_only`, the pool's
    connections refuse every write (the server's
    `default_transaction_read_only`) and `ensure_tables` creates nothing.
    Its lifetime is `AsyncClosable`'s: after `close()`, every call is a
    `ClosedError`.
    """

    def __init__(
        self,
        *,
        dsn: str | None,
        pool: asyncpg.Pool | None,
        schema: str,
        pool_size: int,
        store: str,
        resource: str,
        settings: dict[str, str] | None = None,
        read_only: bool = False,
    ) -> None:
        if (dsn is None) == (pool is None):
            raise ValueError("give exactly one of dsn and pool")
        if not isinstance(read_only, bool):
            raise ValueError(f"read_only must be a bool, got {read_only!r}")
        if read_only and pool is not None:
            raise ValueError("read_only needs a dsn: a pool the caller owns is used as it is")
        if dsn is not None and (not isinstance(dsn, str) or not dsn.strip()):
            raise ValueError(f"dsn must be a non-blank connection string, got {dsn!r}")
        if dsn is not None:
            check_dsn(dsn)
        if pool is not None and not isinstance(pool, asyncpg.Pool):
            raise ValueError(f"pool must be an asyncpg.Pool, got {pool!r}")
        check_integer(pool_size, argument="pool_size", minimum=1, maximum=MAX_POOL_SIZE)
        self.schema = check_schema_name(schema)
        self.store = f"{store} (schema {schema})"
        self._resource = resource
        self._dsn = dsn
        self._pool = pool
        self._owns_pool = pool is None
        self._settings = dict(settings or {})
        self.read_only = read_only
        if read_only:
            self._settings["default_transaction_read_only"] = "on"
        self._pool_size = pool_size
        self._closed = False
        self._opening = asyncio.Lock()

    def error(self, reason: str) -> StoreError:
        """A `StoreError` naming this adapter."""
        return StoreError(store=self.store, reason=reason)

    def fail(self, exc: BaseException) -> NoReturn:
        """Raise `exc` as a `StoreError`, with `exc` as its cause."""
        raise self.error(f"{type(exc).__name__}: {exc}") from exc

    @property
    def owns_pool(self) -> bool:
        """Whether this client opens its own pool, whose connections carry its settings."""
        return self._owns_pool

    def _resource_name(self) -> str:
        return self._resource

    async def _release(self) -> None:
        """Close the pool if this client opened it; a caller's pool stays open."""
        pool, self._pool = self._pool, None
        if pool is not None and self._owns_pool:
            try:
                await pool.close()
            except DRIVER_ERRORS as exc:
                self.fail(exc)

    async def _get_pool(self) -> asyncpg.Pool:
        self._check_open()
        if self._pool is None:
            # Calls racing to open the pool would each open one and leak all but the last.
            async with self._opening:
                if self._pool is None:
                    pool = await asyncpg.create_pool(
                        self._dsn,
                        min_size=1,
                        max_size=self._pool_size,
                        server_settings=self._settings,
                        reset=_keep_session,
                    )
                    if self._closed:  # closed while the pool was opening
                        await pool.close()
                        raise ClosedError(resource=self._resource)
                    self._pool = pool
        return self._pool

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A pooled connection; any driver error inside becomes a `StoreError`."""
        try:
            pool = await self._get_pool()
            async with pool.acquire() as connection:
                yield connection
        except DRIVER_ERRORS as exc:
            self.fail(exc)

    @asynccontextmanager
    async def transaction(
        self, *, isolation: Isolation = "read_committed", readonly: bool = False
    ) -> AsyncIterator[Connection]:
        """A pooled connection inside one transaction: committed, or rolled back on any error."""
        async with (
            self.connection() as connection,
            connection.transaction(isolation=isolation, readonly=readonly),
        ):
            yield connection

    async def ensure_tables(
        self,
        component: str,
        version: int,
        statements: Sequence[str],
    ) -> dict[str, str]:
        """Create `component`'s tables on first use; return its recorded settings.

        Refuses a schema whose recorded version for `component` differs from
        `version`. `statements` may use `{schema}`, replaced by the quoted
        schema name.

        Read-only, nothing is created: a schema that holds no `component`
        is refused.

        Raises:
            StoreError: another layout version is recorded, the store is
                read-only and the schema holds no `component`, or the
                database failed.
        """
        if self.read_only:
            settings = await self.recorded_settings(component)
            recorded = settings.get("schema_version")
            if recorded is None:
                raise self.error(f"schema {self.schema!r} holds no redstring {component}")
            self._check_version(component, recorded, version)
            return settings
        async with self.transaction() as connection:
            await connection.execute("SELECT pg_advisory_xact_lock($1)", _DDL_LOCK)
            await connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            await connection.execute(
                f'CREATE TABLE IF NOT EXISTS "{self.schema}".meta ('
                "component text NOT NULL, key text NOT NULL, value text NOT NULL, "
                "PRIMARY KEY (component, key))"
            )
            settings = await self.read_settings(connection, component)
            recorded = settings.get("schema_version")
            if recorded is None:
                for statement in statements:
                    await connection.execute(statement.format(schema=f'"{self.schema}"'))
                await self.record_setting(connection, component, "schema_version", str(version))
                settings["schema_version"] = str(version)
            else:
                self._check_version(component, recorded, version)
            return settings

    def _check_version(self, component: str, recorded: str, version: int) -> None:
        if recorded != str(version):
            newer = " (written by a newer redstring)" if int(recorded) > version else ""
            raise self.error(
                f"the database holds {component} schema version {recorded}{newer}; "
                f"this redstring reads only version {version}"
            )

    async def create_vector_extension(self) -> None:
        """`CREATE EXTENSION IF NOT EXISTS vector`, under the DDL lock.

        Without the lock, two processes creating it at once both pass the
        `IF NOT EXISTS` and one fails on the catalogue's unique key.
        """
        async with self.transaction() as connection:
            await connection.execute("SELECT pg_advisory_xact_lock($1)", _DDL_LOCK)
            await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")

    async def recorded_settings(self, component: str) -> dict[str, str]:
        """Every `(key, value)` recorded for `component`; `{}` when the schema has no `meta`."""
        async with self.connection() as connection:
            exists = await connection.fetchval(
                "SELECT to_regclass(format('%I.meta', $1::text)) IS NOT NULL", self.schema
            )
            return await self.read_settings(connection, component) if exists else {}

    async def read_settings(self, connection: Connection, component: str) -> dict[str, str]:
        """Every `(key, value)` recorded for `component`."""
        rows = await connection.fetch(
            f'SELECT key, value FROM "{self.schema}".meta WHERE component = $1', component
        )
        return {row["key"]: row["value"] for row in rows}

    async def record_setting(
        self, connection: Connection, component: str, key: str, value: str
    ) -> None:
        """Record `value` under `key` unless something is recorded there already."""
        await connection.execute(
            f'INSERT INTO "{self.schema}".meta (component, key, value) VALUES ($1, $2, $3) '
            "ON CONFLICT (component, key) DO NOTHING",
            component,
            key,
            value,
        )


def client_for(
    owner: object,
    store: str,
    connect: tuple[str | None, asyncpg.Pool | None],
    schema: str,
    pool_size: int,
    *,
    settings: dict[str, str] | None = None,
    read_only: bool = False,
) -> PostgresClient:
    """The `PostgresClient` of an adapter `owner`, given its `(dsn, pool)` as `connect`.

    Errors name `store`; the resource name is the owner's type and schema.
    """
    dsn, pool = connect
    resource = f"{type(owner).__name__}(schema={schema!r})"
    return PostgresClient(
        dsn=dsn,
        pool=pool,
        schema=schema,
        pool_size=pool_size,
        store=store,
        resource=resource,
        settings=settings,
        read_only=read_only,
    )
