"""The memory history under as-of reads, at the store seam (storage/history.py): a
memory's state before the history started, the bound on versions, a store that cannot
be read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import AccessUpdate, Memory
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_stores import HistoryStore, stored_memories
from memoryd.storage.memory import InMemoryStore
from tests.unit.hot_cache.helpers import memory
from tests.unit.snapshot.world import Clock, scope_for

#: A Saturday, as the rest of the as-of tests.
START = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


async def test_what_was_stored_before_the_start_reads_as_it_was_until_written() -> None:
    """A memory stored before this process started its history: nothing is read at
    the start; its stored state becomes its first version at its first write (or
    access flush), so an as-of read between the start and that write shows it as it
    was, and one after shows the write."""
    clock = Clock(START)
    inner = InMemoryStore(16)
    await inner.open()
    p = scope_for().partition
    old, untouched = memory(p, content="kept as stored"), memory(p, content="never written")
    await inner.upsert(p, [old, untouched])
    history = MemoryHistory(timedelta(hours=1), clock=clock)
    store = HistoryStore(inner, history)
    history.start(p)
    assert history.version_count() == 0  # the start read nothing
    clock.advance(minutes=5)
    between = clock()
    clock.advance(minutes=5)
    changed = old.copy()
    changed.content = "written after the start"
    await store.upsert(p, [changed])
    clock.advance(minutes=5)
    await store.record_access(p, {untouched.id: AccessUpdate(count=3, last_accessed_at=clock())})
    assert history.version_count() == 4  # two stored states, the write, the access

    def at(instant: datetime, stored: list[Memory]) -> dict[str, tuple[str, int]]:
        return {m.id: (m.content, m.access_count) for m in history.valid_at(p, instant, stored)}

    now_stored = await stored_memories(store, p)
    assert at(between, now_stored) == {
        old.id: ("kept as stored", 0),
        untouched.id: ("never written", 0),
    }
    assert at(clock(), now_stored) == {
        old.id: ("written after the start", 0),
        untouched.id: ("never written", 3),
    }


async def test_past_max_versions_the_oldest_superseded_go_and_the_horizon_says_so() -> None:
    """The history is in process memory: past ``max_versions`` the oldest superseded
    versions are dropped (to 90 %), and only the partition they were of moves its
    horizon, so no read is answered from an incomplete past."""
    clock = Clock(START)
    history = MemoryHistory(timedelta(days=30), clock=clock, max_versions=100)
    inner = InMemoryStore(16)
    await inner.open()
    store = HistoryStore(inner, history)
    busy, quiet = scope_for(agent="busy").partition, scope_for(agent="quiet").partition
    calm = memory(quiet, content="written once")
    await store.upsert(quiet, [calm])
    started = clock()
    churn = memory(busy, content="version 0")
    for n in range(150):
        clock.advance(minutes=1)
        churn.content = f"version {n}"
        await store.upsert(busy, [churn.copy()])

    assert history.version_count() <= 100
    horizon = history.horizon(busy)
    assert horizon is not None and horizon > started
    # Exact from the horizon on: the version valid then, and the last one now.
    [then] = history.valid_at(busy, horizon)
    assert then.content == f"version {(horizon - START) // timedelta(minutes=1) - 1}"
    assert [m.content for m in history.valid_at(busy, clock())] == ["version 149"]
    # The quiet agent lost nothing, so its horizon did not move.
    assert history.horizon(quiet) == started
    assert [m.content for m in history.valid_at(quiet, started)] == ["written once"]


class _UnreadableStore(InMemoryStore):
    """A store that takes writes but cannot be read (as the log takes them in an outage)."""

    async def get(self, *args: Any, **kwargs: Any) -> list[Memory]:
        raise Unavailable("store unavailable: down")


async def test_a_write_whose_before_cannot_be_read_goes_ahead_and_moves_the_horizon() -> None:
    clock = Clock(START)
    inner = _UnreadableStore(16)
    await inner.open()
    p = scope_for().partition
    stored = memory(p, content="stored before the start")
    await inner.upsert(p, [stored])
    history = MemoryHistory(timedelta(hours=1), clock=clock)
    store = HistoryStore(inner, history)
    history.start(p)
    clock.advance(minutes=5)

    changed = stored.copy()
    changed.content = "written in the outage"
    await store.upsert(p, [changed])  # not refused: the write does not need the history

    assert history.horizon(p) == clock()  # what it was before is not known
    assert [m.content for m in history.valid_at(p, clock())] == ["written in the outage"]
