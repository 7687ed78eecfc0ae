"""The `EventLog` contract, as a suite every adapter's tests subclass.

Subclass `EventLogCompliance` in a `Test...` class and implement `new_log()`;
every test here then runs against that adapter. The event factories here are
shared with the event and projection tests.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redstring.domain.events import DocumentExtracted, EntitiesEmbedded
from redstring.domain.vector import VectorRecord
from redstring.ports.event_log import EventLog
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.lifetime import LifetimeCompliance

if TYPE_CHECKING:
    from collections.abc import Coroutine, Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.ids import TenantId
    from redstring.domain.relationship import Relationship

#: When every factory-built event happened unless told otherwise.
OCCURRED_AT: Final = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)

#: Every adapter's subclass runs the same properties, so hypothesis sees several
#: executors; each example builds its own log, so none carries state across.
PROPERTY_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
)


def run[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion inside a synchronous hypothesis test."""
    return asyncio.run(coroutine)


def make_document_extracted(
    entities: Sequence[Entity] = (),
    relationships: Sequence[Relationship] = (),
    **overrides: Any,
) -> DocumentExtracted:
    """A valid `DocumentExtracted` in `TENANT`; `overrides` replace any field."""
    fields: dict[str, Any] = {
        "event_id": uuid4(),
        "tenant_id": TENANT,
        "source_id": "doc-1",
        "occurred_at": OCCURRED_AT,
        "domain": "general",
        "model": "fake/canned-v1",
        "entities": tuple(entities),
        "relationships": tuple(relationships),
        **overrides,
    }
    return DocumentExtracted(**fields)


def make_entities_embedded(
    records: Sequence[VectorRecord] = (), **overrides: Any
) -> EntitiesEmbedded:
    """A valid `EntitiesEmbedded` of dimension 4 in `TENANT`; `overrides` win."""
    fields: dict[str, Any] = {
        "event_id": uuid4(),
        "tenant_id": TENANT,
        "occurred_at": OCCURRED_AT,
        "model": "fake/hash-v1",
        "dimension": 4,
        "records": tuple(records),
        **overrides,
    }
    return EntitiesEmbedded(**fields)


def event_in(tenant_id: TenantId) -> DocumentExtracted:
    """A one-entity `DocumentExtracted` in `tenant_id`, with properties to mutate."""
    entity = make_entity(tenant_id=tenant_id, properties={"aliases": ["Ada"]})
    return make_document_extracted([entity], tenant_id=tenant_id)


class EventLogCompliance(LifetimeCompliance):
    """Every rule of `redstring.events.EventLog`; subclass and provide `new_log`."""

    port = EventLog

    def new_adapter(self) -> EventLog:
        return self.new_log()

    def new_log(self) -> EventLog:
        raise NotImplementedError

    # -- sequence numbers ------------------------------------------------------

    async def test_an_empty_log_reads_empty_at_sequence_zero(self) -> None:
        log = self.new_log()
        assert await log.last_sequence() == 0
        assert await log.read() == []

    async def test_sequence_numbers_start_at_one_and_strictly_increase(self) -> None:
        log = self.new_log()
        assert await log.append(event_in(TENANT)) == 1
        assert await log.append(event_in(OTHER_TENANT)) == 2
        assert await log.append_many([event_in(TENANT), event_in(TENANT)]) == [3, 4]
        assert await log.append_many([]) == []
        assert await log.last_sequence() == 4
        assert [stored.sequence for stored in await log.read()] == [1, 2, 3, 4]

    async def test_events_read_back_equal_and_in_the_order_appended(self) -> None:
        log = self.new_log()
        source = make_entity(name="Ada Lovelace")
        target = make_entity(name="Charles Babbage")
        extracted = make_document_extracted([source, target], [make_relationship(source, target)])
        embedded = make_entities_embedded(
            [VectorRecord(entity_id=source.id, tenant_id=TENANT, vector=[1.0, 0.5, 0.0, -2.0])]
        )
        await log.append_many([extracted, embedded])
        assert [stored.event for stored in await log.read()] == [extracted, embedded]

    # -- append-only, all or nothing ---------------------------------------------

    async def test_an_event_already_held_is_refused_by_its_id(self) -> None:
        log = self.new_log()
        event = event_in(TENANT)
        await log.append(event)
        with pytest.raises(ValueError, match=str(event.event_id)):
            await log.append(event)
        again = event_in(TENANT).model_copy(update={"event_id": UUID(str(event.event_id))})
        with pytest.raises(ValueError, match=str(event.event_id)):
            await log.append(again)
        assert await log.last_sequence() == 1

    async def test_a_batch_with_a_held_id_after_a_good_event_records_nothing(self) -> None:
        log = self.new_log()
        held = event_in(TENANT)
        await log.append(held)
        good = event_in(TENANT)
        with pytest.raises(ValueError, match=str(held.event_id)):
            await log.append_many([good, held])
        assert await log.last_sequence() == 1
        assert [stored.event for stored in await log.read()] == [held]
        assert await log.append(good) == 2

    async def test_a_batch_repeating_one_id_records_nothing(self) -> None:
        log = self.new_log()
        good = event_in(TENANT)
        with pytest.raises(ValueError, match=str(good.event_id)):
            await log.append_many([good, event_in(TENANT), good])
        assert await log.last_sequence() == 0
        assert await log.read() == []

    # -- reads -----------------------------------------------------------------

    async def test_after_keeps_only_later_sequence_numbers(self) -> None:
        log = self.new_log()
        events = [event_in(TENANT) for _ in range(3)]
        await log.append_many(events)
        assert [stored.sequence for stored in await log.read(after=1)] == [2, 3]
        assert [stored.event for stored in await log.read(after=2)] == [events[2]]
        assert await log.read(after=3) == []
        assert await log.read(after=10) == []

    async def test_a_negative_after_is_refused(self) -> None:
        log = self.new_log()
        await log.append(event_in(TENANT))
        with pytest.raises(ValueError, match="-1"):
            await log.read(after=-1)

    async def test_the_tenant_filter_never_crosses_tenants(self) -> None:
        log = self.new_log()
        mine = make_document_extracted([make_entity(id=UUID(int=1))])
        theirs = make_document_extracted(
            [make_entity(id=UUID(int=1), tenant_id=OTHER_TENANT)], tenant_id=OTHER_TENANT
        )
        await log.append_many([theirs, mine, theirs.model_copy(update={"event_id": uuid4()})])
        read = await log.read(tenant_id=TENANT)
        assert [(stored.sequence, stored.event) for stored in read] == [(2, mine)]
        assert [stored.sequence for stored in await log.read(tenant_id=OTHER_TENANT)] == [1, 3]
        assert await log.read(after=2, tenant_id=TENANT) == []

    async def test_mutating_what_was_appended_or_read_changes_nothing_held(self) -> None:
        log = self.new_log()
        event = event_in(TENANT)
        await log.append(event)
        event.entities[0].properties["aliases"].append("after append")
        [first] = await log.read()
        assert isinstance(first.event, DocumentExtracted)
        first.event.entities[0].properties["aliases"].append("after read")
        [again] = await log.read()
        assert isinstance(again.event, DocumentExtracted)
        assert again.event.entities[0].properties == {"aliases": ["Ada"]}

    @PROPERTY_SETTINGS
    @given(
        tenants=st.lists(st.sampled_from([TENANT, OTHER_TENANT]), max_size=8),
        after=st.integers(min_value=0, max_value=10),
        only=st.sampled_from([None, TENANT, OTHER_TENANT]),
    )
    @example(tenants=[], after=0, only=None)
    @example(tenants=[TENANT], after=0, only=TENANT)
    @example(tenants=[TENANT], after=1, only=None)
    @example(tenants=[OTHER_TENANT, TENANT], after=1, only=OTHER_TENANT)
    def test_a_read_is_the_appended_events_after_a_sequence_and_of_a_tenant(
        self, tenants: list[TenantId], after: int, only: TenantId | None
    ) -> None:
        async def scenario() -> None:
            log = self.new_log()
            appended: list[tuple[int, Event]] = []
            for tenant_id in tenants:
                event = event_in(tenant_id)
                appended.append((await log.append(event), event))
            expected = [
                (sequence, event)
                for sequence, event in appended
                if sequence > after and (only is None or event.tenant_id == only)
            ]
            read = await log.read(after=after, tenant_id=only)
            assert [(stored.sequence, stored.event) for stored in read] == expected
            assert await log.last_sequence() == len(tenants)

        run(scenario())

    # -- lifetime --------------------------------------------------------------
