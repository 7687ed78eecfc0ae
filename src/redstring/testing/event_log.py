"""The `EventLog` contract, as a suite every adapter's tests subclass.

Subclass `EventLogCompliance` in a `Test...` class and implement `new_log()`;
every test here then runs against that adapter. The event factories here are
shared with the event and projection tests.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID, uuid4

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.events import (
    DocumentExtracted,
    EntitiesEmbedded,
    EntitiesMerged,
    EntityDeleted,
    MergeUndone,
)
from redstring.domain.vector import VectorRecord
from redstring.ports.event_log import EntityEventReader, EventLog, StoredEvent, entities_named
from redstring.testing.factories import OTHER_TENANT, TENANT, make_entity, make_relationship
from redstring.testing.lifetime import LifetimeCompliance
from redstring.testing.support import property_settings, run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redstring.domain.entity import Entity
    from redstring.domain.events import Event
    from redstring.domain.ids import EntityId, TenantId
    from redstring.domain.relationship import Relationship

#: When every factory-built event happened unless told otherwise.
OCCURRED_AT: Final = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)

PROPERTY_SETTINGS = property_settings(40)


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


def make_entities_merged(canonical: Entity, merged: Sequence[Entity]) -> EntitiesMerged:
    """An `EntitiesMerged` folding `merged` into `canonical`, in the canonical's tenant."""
    return EntitiesMerged(
        event_id=uuid4(),
        tenant_id=canonical.tenant_id,
        occurred_at=OCCURRED_AT,
        canonical=canonical,
        merged_ids=tuple(entity.id for entity in merged),
        reason="the same thing",
        before=(canonical, *merged),
    )


def make_merge_undone(merge: EntitiesMerged) -> MergeUndone:
    """The `MergeUndone` of `merge`, restoring its `before`."""
    return MergeUndone(
        event_id=uuid4(),
        tenant_id=merge.tenant_id,
        occurred_at=OCCURRED_AT,
        merge_event_id=merge.event_id,
        canonical_id=merge.canonical_id,
        merged_ids=merge.merged_ids,
        entities=merge.before,
    )


def make_entity_deleted(entity_id: EntityId, tenant_id: TenantId = TENANT) -> EntityDeleted:
    """An `EntityDeleted` of `entity_id` in `tenant_id`."""
    return EntityDeleted(
        event_id=uuid4(), tenant_id=tenant_id, occurred_at=OCCURRED_AT, entity_id=entity_id
    )


class EntityEventReaderCompliance:
    """Every rule of `EntityEventReader`; subclass and provide `new_log`.

    The log must also be an `EventLog`: the reads are checked against what
    `read` returns for the same tenant.
    """

    def new_log(self) -> EventLog:
        raise NotImplementedError

    def reader(self) -> tuple[EventLog, EntityEventReader]:
        log = self.new_log()
        assert isinstance(log, EntityEventReader)
        return log, log

    async def test_events_are_read_by_id_in_sequence_order_omitting_unknown_ids(self) -> None:
        log, reader = self.reader()
        first, second, third = event_in(TENANT), event_in(TENANT), event_in(TENANT)
        await log.append_many([first, second, third])
        found = await reader.read_events(
            [third.event_id, uuid4(), first.event_id], tenant_id=TENANT
        )
        assert [(s.sequence, s.event) for s in found] == [(1, first), (3, third)]
        assert await reader.read_events([], tenant_id=TENANT) == []

    async def test_reading_by_id_never_crosses_tenants(self) -> None:
        log, reader = self.reader()
        theirs = event_in(OTHER_TENANT)
        await log.append_many([theirs, event_in(TENANT)])
        assert await reader.read_events([theirs.event_id], tenant_id=TENANT) == []
        assert [
            s.event for s in await reader.read_events([theirs.event_id], tenant_id=OTHER_TENANT)
        ] == [theirs]

    async def test_merges_undoings_and_deletes_naming_an_entity_are_read_in_order(self) -> None:
        log, reader = self.reader()
        a, b, c, d = (make_entity(name=name) for name in ("Ada", "Ada L", "Bob", "Cy"))
        extracted = make_document_extracted([a, b, c, d])
        merge = make_entities_merged(a, [b])
        other = make_entities_merged(c, [d])
        undo = make_merge_undone(merge)
        deleted = make_entity_deleted(b.id)
        await log.append_many([extracted, merge, other, undo, deleted])
        naming_b = await reader.read_naming([b.id], tenant_id=TENANT)
        assert [(s.sequence, s.event) for s in naming_b] == [(2, merge), (4, undo), (5, deleted)]
        naming_a = await reader.read_naming([a.id], tenant_id=TENANT)
        assert [s.event for s in naming_a] == [merge, undo]

    async def test_an_event_naming_several_requested_entities_is_read_once(self) -> None:
        log, reader = self.reader()
        a, b = make_entity(name="Ada"), make_entity(name="Ada L")
        merge = make_entities_merged(a, [b])
        await log.append(merge)
        found = await reader.read_naming([a.id, b.id, a.id], tenant_id=TENANT)
        assert [s.event for s in found] == [merge]

    async def test_after_keeps_only_later_events_naming_the_entity(self) -> None:
        log, reader = self.reader()
        a, b = make_entity(name="Ada"), make_entity(name="Ada L")
        merge = make_entities_merged(a, [b])
        undo = make_merge_undone(merge)
        await log.append_many([merge, undo])
        assert [s.event for s in await reader.read_naming([a.id], tenant_id=TENANT, after=1)] == [
            undo
        ]
        assert await reader.read_naming([a.id], tenant_id=TENANT, after=2) == []

    async def test_the_same_entity_id_in_two_tenants_never_crosses(self) -> None:
        log, reader = self.reader()
        ours = make_entity(name="Ada")
        theirs = make_entity(id=ours.id, tenant_id=OTHER_TENANT, name="Bob")
        await log.append_many(
            [make_entity_deleted(theirs.id, OTHER_TENANT), make_entity_deleted(ours.id)]
        )
        found = await reader.read_naming([ours.id], tenant_id=TENANT)
        assert [(s.sequence, s.event.tenant_id) for s in found] == [(2, TENANT)]

    async def test_an_extraction_names_no_entity(self) -> None:
        log, reader = self.reader()
        entity = make_entity(name="Ada")
        await log.append(make_document_extracted([entity]))
        assert await reader.read_naming([entity.id], tenant_id=TENANT) == []

    async def test_mutating_what_was_read_changes_nothing_held(self) -> None:
        log, reader = self.reader()
        a, b = make_entity(name="Ada", properties={"aliases": ["A"]}), make_entity(name="Ada L")
        merge = make_entities_merged(a, [b])
        await log.append(merge)
        [stored] = await reader.read_naming([a.id], tenant_id=TENANT)
        assert isinstance(stored.event, EntitiesMerged)
        stored.event.canonical.properties["aliases"].append("B")
        [again] = await reader.read_events([merge.event_id], tenant_id=TENANT)
        assert again.event == merge

    async def test_bad_arguments_are_refused_naming_them(self) -> None:
        _, reader = self.reader()
        bad: Any = "not ids"
        with pytest.raises(ValueError, match="event_ids"):
            await reader.read_events(bad, tenant_id=TENANT)
        with pytest.raises(ValueError, match="event_ids"):
            await reader.read_events([uuid4(), bad], tenant_id=TENANT)
        with pytest.raises(ValueError, match="entity_ids"):
            await reader.read_naming([7], tenant_id=TENANT)  # type: ignore[list-item]
        with pytest.raises(ValueError, match="after"):
            await reader.read_naming([], tenant_id=TENANT, after=-1)
        with pytest.raises(ValueError, match="tenant"):
            await reader.read_naming([], tenant_id=bad)
        with pytest.raises(ValueError, match="tenant"):
            await reader.read_events([], tenant_id=bad)

    @PROPERTY_SETTINGS
    @given(
        plan=st.lists(
            st.tuples(st.sampled_from(["merge", "undo", "delete", "extract"]), st.integers(0, 3)),
            min_size=1,
            max_size=12,
        ),
        asked=st.sets(st.integers(0, 3)),
        after=st.integers(0, 12),
    )
    @example(plan=[("merge", 0)], asked={0}, after=0)
    @example(plan=[("delete", 1), ("merge", 1)], asked={1}, after=1)
    def test_reading_by_entity_is_filtering_the_tenants_log_by_what_each_event_names(
        self, plan: list[tuple[str, int]], asked: set[int], after: int
    ) -> None:
        """The index agrees with the definition, over any mix of kinds and tenants."""
        entities = [make_entity(name=f"Entity {n}") for n in range(4)]
        ids = [entity.id for entity in entities]

        async def scenario() -> tuple[list[StoredEvent], list[StoredEvent]]:
            log, reader = self.reader()
            merges: list[EntitiesMerged] = []
            for kind, n in plan:
                event: Event
                if kind == "merge":
                    event = make_entities_merged(entities[n], [entities[(n + 1) % 4]])
                    merges.append(event)
                elif kind == "undo" and merges:
                    event = make_merge_undone(merges.pop())
                elif kind == "delete":
                    event = make_entity_deleted(ids[n], TENANT if n % 2 else OTHER_TENANT)
                else:
                    event = make_document_extracted([entities[n]])
                await log.append(event)
            wanted = [ids[n] for n in sorted(asked)]
            expected = [
                stored
                for stored in await log.read(after=after, tenant_id=TENANT)
                if set(entities_named(stored.event)) & set(wanted)
            ]
            return await reader.read_naming(wanted, tenant_id=TENANT, after=after), expected

        found, expected = run(scenario())
        assert found == expected
