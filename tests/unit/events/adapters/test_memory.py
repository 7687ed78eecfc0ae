"""The in-memory event log against the shared `EventLog` contract."""

from __future__ import annotations

import pytest

from redstring.events.adapters.memory import InMemoryEventLog
from redstring.ports.event_log import EventLog
from redstring.testing.event_log import EntityEventReaderCompliance, EventLogCompliance, event_in
from redstring.testing.factories import TENANT


class TestInMemoryEventLog(EventLogCompliance):
    def new_log(self) -> EventLog:
        return InMemoryEventLog()

    def test_it_satisfies_the_port(self) -> None:
        assert isinstance(InMemoryEventLog(), EventLog)

    @pytest.mark.parametrize("bad", [True, 1.0, "1"])
    async def test_a_non_integer_after_is_refused(self, bad: object) -> None:
        log = InMemoryEventLog()
        await log.append(event_in(TENANT))
        with pytest.raises(ValueError, match="after"):
            await log.read(after=bad)  # type: ignore[arg-type]

    async def test_something_that_is_not_an_event_is_refused_and_nothing_recorded(self) -> None:
        log = InMemoryEventLog()
        with pytest.raises(ValueError, match=r"events\[1\]"):
            await log.append_many([event_in(TENANT), "not an event"])  # type: ignore[list-item]
        assert await log.last_sequence() == 0


class TestInMemoryEntityEventReader(EntityEventReaderCompliance):
    def new_log(self) -> EventLog:
        return InMemoryEventLog()
