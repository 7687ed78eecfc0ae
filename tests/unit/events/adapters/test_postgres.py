"""The Postgres event log: the shared contract, plus durability and concurrent appends."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from redstring.events.adapters.postgres import PostgresEventLog
from redstring.ports.event_log import EventLog
from redstring.ports.lifetime import AsyncClosable
from redstring.testing.event_log import (
    EntityEventReaderCompliance,
    EventLogCompliance,
    event_in,
    make_document_extracted,
    make_entities_merged,
    make_entity_deleted,
    make_merge_undone,
)
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity

if TYPE_CHECKING:
    from tests.postgres import PostgresSchemas


class TestPostgresEventLog(EventLogCompliance):
    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_log(self) -> EventLog:
        return self._postgres.event_log()

    def test_it_satisfies_the_port_and_the_lifetime(self) -> None:
        log = PostgresEventLog("postgresql://localhost/unused")
        assert isinstance(log, EventLog)
        assert isinstance(log, AsyncClosable)

    @pytest.mark.parametrize("bad", [True, 1.0, "1"])
    async def test_a_non_integer_after_is_refused(self, bad: object) -> None:
        with pytest.raises(ValueError, match="after"):
            await self.new_log().read(after=bad)  # type: ignore[arg-type]

    async def test_something_that_is_not_an_event_is_refused_and_nothing_recorded(self) -> None:
        log = self.new_log()
        with pytest.raises(ValueError, match=r"events\[1\]"):
            await log.append_many([event_in(TENANT), "not an event"])  # type: ignore[list-item]
        assert await log.last_sequence() == 0


async def test_events_survive_closing_and_are_read_by_another_log(
    postgres: PostgresSchemas,
) -> None:
    schema = postgres.new_schema()
    first, second = event_in(TENANT), event_in(OTHER_TENANT)
    async with postgres.event_log(schema) as log:
        await log.append_many([first, second])
    async with postgres.event_log(schema) as reopened:
        assert [stored.event for stored in await reopened.read()] == [first, second]
        assert [s.event for s in await reopened.read(tenant_id=OTHER_TENANT)] == [second]


async def test_concurrent_appenders_get_gapless_numbers_in_commit_order(
    postgres: PostgresSchemas,
) -> None:
    """Eight logs on one schema append at once; the numbers they get are 1..N exactly."""
    schema = postgres.new_schema()
    logs = [postgres.event_log(schema, pool_size=2) for _ in range(8)]
    await logs[0].last_sequence()
    try:
        results = await asyncio.gather(
            *(
                log.append_many([event_in(TENANT), event_in(TENANT)])
                for log in logs
                for _ in range(5)
            )
        )
        tail = await logs[3].read(after=40)
    finally:
        for log in logs:
            await log.close()
    handed_out = sorted(sequence for batch in results for sequence in batch)
    assert handed_out == list(range(1, 81))
    for batch in results:
        assert batch[1] == batch[0] + 1
    assert [stored.sequence for stored in tail] == list(range(41, 81))


async def test_an_empty_batch_touches_no_database_and_the_repr_shows_the_state() -> None:
    log = PostgresEventLog("postgresql://postgres@/postgres?host=/nonexistent-socket-dir")
    assert await log.append_many([]) == []
    assert repr(log) == "PostgresEventLog(schema='redstring', open)"
    await log.close()
    assert repr(log) == "PostgresEventLog(schema='redstring', closed)"


class TestPostgresEntityEventReader(EntityEventReaderCompliance):
    @pytest.fixture(autouse=True)
    def _schemas(self, postgres: PostgresSchemas) -> None:
        self._postgres = postgres

    def new_log(self) -> EventLog:
        return self._postgres.event_log()


async def test_a_schema_written_before_the_entity_index_gains_it_filled(
    postgres: PostgresSchemas,
) -> None:
    """The index is built from the stored events the first time a newer log opens the schema."""
    a, b, c = make_entity(name="Ada"), make_entity(name="Ada L"), make_entity(name="Bob")
    merge = make_entities_merged(a, [b])
    undo = make_merge_undone(merge)
    deleted = make_entity_deleted(c.id)
    schema = postgres.new_schema()
    async with postgres.event_log(schema) as log:
        await log.append_many([make_document_extracted([a, b, c]), merge, undo, deleted])
        client = await log._prepare()
        async with client.connection() as connection:
            await connection.execute(f'DROP TABLE "{schema}".event_entities')
            await connection.execute(
                f"DELETE FROM \"{schema}\".meta WHERE component = 'event_index'"
            )
    async with postgres.event_log(schema) as reopened:
        found = await reopened.read_naming([b.id], tenant_id=TENANT)
        assert [s.event for s in found] == [merge, undo]
        found = await reopened.read_naming([a.id, c.id], tenant_id=TENANT)
        assert [s.event for s in found] == [merge, undo, deleted]
