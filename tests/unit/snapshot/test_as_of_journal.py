"""The memory history's journal (storage/history_journal.py): what a history answered
before a restart it answers after it, read back lazily from one file per agent; a
torn tail, pruning, the max_versions floor and erasure, on real files."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memoryd.domain.models import AccessUpdate, Memory, Partition
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_journal import HistoryJournal
from memoryd.storage.history_stores import HistoryStore, stored_memories
from memoryd.storage.memory import InMemoryStore
from tests.unit.hot_cache.helpers import memory
from tests.unit.snapshot.world import Clock, scope_for

START = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
Seen = dict[str, tuple[str, bool, int, bytes]]


def _history(root: Path, clock: Clock, **kwargs: object) -> MemoryHistory:
    return MemoryHistory(
        timedelta(hours=1),
        clock=clock,
        journal=HistoryJournal(root),
        **kwargs,  # type: ignore[arg-type]
    )


def _seen(history: MemoryHistory, p: Partition, at: datetime, stored: list[Memory]) -> Seen:
    return {
        m.id: (
            m.content,
            m.archived,
            m.access_count,
            b"" if m.vector is None else np.asarray(m.vector, "<f4").tobytes(),
        )
        for m in history.valid_at(p, at, stored)
    }


async def _life(store: HistoryStore, p: Partition, clock: Clock) -> list[datetime]:
    """Writes of every kind, an instant after each."""
    instants = []
    kept, gone = memory(p, content="the user drinks green tea"), memory(p, content="to forget")
    await store.upsert(p, [kept, gone])
    instants.append(clock())
    for step, change in enumerate(("black tea", "archived", "access", "forget", "oolong")):
        clock.advance(minutes=3)
        if change == "archived":
            archived = kept.copy()
            archived.archived = True
            await store.upsert(p, [archived])
        elif change == "access":
            await store.record_access(p, {kept.id: AccessUpdate(2, clock())})
        elif change == "forget":
            await store.delete(p, [gone.id])
        else:
            kept = kept.copy()
            kept.content = f"the user drinks {change} (step {step})"
            await store.upsert(p, [kept])
        instants.append(clock())
        clock.advance(seconds=30)
        instants.append(clock())
    return instants


async def _world(root: Path, clock: Clock) -> tuple[InMemoryStore, MemoryHistory, HistoryStore]:
    inner = InMemoryStore(16)
    await inner.open()
    history = _history(root, clock)
    return inner, history, HistoryStore(inner, history)


async def test_a_restart_answers_every_instant_as_before(tmp_path: Path) -> None:
    clock = Clock(START)
    p = scope_for().partition
    inner, history, store = await _world(tmp_path, clock)
    instants = await _life(store, p, clock)
    stored = await stored_memories(inner, p)
    before = {t: _seen(history, p, t, stored) for t in instants}
    horizon = history.horizon(p)

    clock.advance(minutes=1)
    restarted = _history(tmp_path, clock)  # a new process: nothing in memory
    assert restarted.version_count() == 0
    assert restarted.horizon(p) == horizon  # read from the file on first touch
    assert {t: _seen(restarted, p, t, stored) for t in instants} == before
    # The archive and the access shared their predecessor's vector: read back equal.
    assert len({v[3] for seen in before.values() for v in seen.values() if v[0]}) == 1 + 1


async def test_a_torn_tail_is_cut_and_what_came_before_stands(tmp_path: Path) -> None:
    clock = Clock(START)
    p = scope_for().partition
    inner, history, store = await _world(tmp_path, clock)
    instants = await _life(store, p, clock)
    stored = await stored_memories(inner, p)
    before = {t: _seen(history, p, t, stored) for t in instants}
    path = HistoryJournal(tmp_path).path(p)
    whole = path.stat().st_size
    with path.open("ab") as f:
        f.write(b"\x95\xa1v\xcf")  # a record cut short by a power loss
    # And a rewrite cut short: its new file never replaced the old one.
    path.with_suffix(".rewrite").write_bytes(b"a pruned version's stale bytes")

    restarted = _history(tmp_path, clock)
    assert {t: _seen(restarted, p, t, stored) for t in instants} == before
    assert path.stat().st_size == whole
    assert not path.with_suffix(".rewrite").exists()
    # Appends after the cut are read back too.
    clock.advance(minutes=1)
    later = memory(p, content="written after the restart")
    await HistoryStore(inner, restarted).upsert(p, [later])
    again = _history(tmp_path, clock)
    assert "written after the restart" in {
        c for c, *_ in _seen(again, p, clock(), await stored_memories(inner, p)).values()
    }


async def test_pruning_rewrites_the_file_and_keeps_the_horizon_answer(tmp_path: Path) -> None:
    clock = Clock(START)
    p = scope_for().partition
    inner, history, store = await _world(tmp_path, clock)
    churn = memory(p, content="version 0")
    for n in range(40):
        clock.advance(minutes=3)
        churn = churn.copy()
        churn.content = f"version {n}"
        await store.upsert(p, [churn])
    path = HistoryJournal(tmp_path).path(p)
    size = path.stat().st_size
    assert await history.prune() > 0
    assert path.stat().st_size < size * 0.6  # 20 of 40 versions were past the hour
    horizon = history.horizon(p)
    assert horizon is not None
    stored = await stored_memories(inner, p)
    answer = _seen(history, p, horizon, stored)
    assert _seen(_history(tmp_path, clock), p, horizon, stored) == answer


async def test_files_not_loaded_are_pruned_in_slices(tmp_path: Path) -> None:
    clock = Clock(START)
    _, _, store = await _world(tmp_path, clock)
    agents = [scope_for(agent=f"agent-{n}").partition for n in range(5)]
    for p in agents:
        m = memory(p, content="first")
        await store.upsert(p, [m])
        clock.advance(minutes=1)
        m = m.copy()
        m.content = "second"
        await store.upsert(p, [m])
    clock.advance(hours=2)
    fresh = _history(tmp_path, clock)  # a restart: no partition loaded
    sizes = [fresh.journal.path(p).stat().st_size for p in agents]  # type: ignore[union-attr]
    await fresh.prune(files=2)
    assert fresh.version_count() == 0  # visited, not kept loaded
    smaller = [
        fresh.journal.path(p).stat().st_size < s  # type: ignore[union-attr]
        for p, s in zip(agents, sizes, strict=True)
    ]
    assert sum(smaller) == 2
    await fresh.prune(files=8)
    assert all(
        fresh.journal.path(p).stat().st_size < s  # type: ignore[union-attr]
        for p, s in zip(agents, sizes, strict=True)
    )


async def test_the_max_versions_floor_survives_a_restart(tmp_path: Path) -> None:
    clock = Clock(START)
    p = scope_for().partition
    inner = InMemoryStore(16)
    await inner.open()
    history = MemoryHistory(
        timedelta(days=30), clock=clock, journal=HistoryJournal(tmp_path), max_versions=100
    )
    store = HistoryStore(inner, history)
    churn = memory(p, content="version 0")
    for n in range(150):
        clock.advance(minutes=1)
        churn = churn.copy()
        churn.content = f"version {n}"
        await store.upsert(p, [churn])
    horizon = history.horizon(p)
    assert horizon is not None and horizon > START
    restarted = MemoryHistory(timedelta(days=30), clock=clock, journal=HistoryJournal(tmp_path))
    assert restarted.horizon(p) == horizon
    assert [m.content for m in restarted.valid_at(p, horizon)] == [
        m.content for m in history.valid_at(p, horizon)
    ]


async def test_erasure_leaves_no_byte_of_the_erased_in_the_file(tmp_path: Path) -> None:
    clock = Clock(START)
    p, other = scope_for().partition, scope_for(agent="other").partition
    _, history, store = await _world(tmp_path, clock)
    secret = memory(p, content="my email is ada@example.org")
    plain = memory(p, content="the user likes tea")
    await store.upsert(p, [secret, plain])
    clock.advance(minutes=1)
    revised = secret.copy()
    revised.content = "my email changed"  # the superseded version still holds it
    await store.upsert(p, [revised])
    await store.upsert(other, [memory(other, content="another agent's")])
    vector = np.asarray(secret.vector, "<f4").tobytes()
    path = history.journal.path(p)  # type: ignore[union-attr]
    assert b"ada@example.org" in path.read_bytes() and vector in path.read_bytes()

    assert await history.erase(p, [secret.id]) == 2  # as written, as revised
    data = path.read_bytes()
    assert b"ada@example.org" not in data and vector not in data
    assert b"the user likes tea" in data
    assert not path.with_suffix(".rewrite").exists()
    restarted = _history(tmp_path, clock)
    assert [m.content for m in restarted.valid_at(p, START)] == ["the user likes tea"]

    assert await history.erase_partition(p) == 1
    assert not path.exists()
    assert history.journal.path(other).exists()  # type: ignore[union-attr]


async def test_a_write_replayed_after_a_crash_is_absent_before_it_was_made(
    tmp_path: Path,
) -> None:
    """A write logged but not answered when the daemon died reaches the store by the
    log's replay, without a version: as of an instant before it was made the memory
    it created is absent (as it was then), and present after."""
    clock = Clock(START)
    p = scope_for().partition
    inner, _, store = await _world(tmp_path, clock)
    await store.upsert(p, [memory(p, content="answered before the crash", created_at=clock())])
    clock.advance(minutes=1)
    before_crash = clock()
    clock.advance(seconds=5)
    replayed = memory(p, content="in flight at the crash", created_at=clock())
    await inner.upsert(p, [replayed])  # the replay: straight into the store
    clock.advance(minutes=1)

    restarted = _history(tmp_path, clock)
    stored = await stored_memories(inner, p)
    assert [m.content for m in restarted.valid_at(p, before_crash, stored)] == [
        "answered before the crash"
    ]
    assert {m.content for m in restarted.valid_at(p, clock(), stored)} == {
        "answered before the crash",
        "in flight at the crash",
    }


async def test_a_read_leaves_no_file_and_the_first_record_writes_its_header(
    tmp_path: Path,
) -> None:
    clock = Clock(START)
    p = scope_for().partition
    _, history, store = await _world(tmp_path, clock)
    history.start(p)  # what an as-of read of a never-written agent does
    path = HistoryJournal(tmp_path).path(p)
    assert not path.exists()  # a read of any agent name writes nothing

    clock.advance(minutes=1)
    await store.upsert(p, [memory(p, content="the first memory")])
    clock.advance(minutes=1)
    restarted = _history(tmp_path, clock)
    # The header came with the first record: the horizon is the read's, as before.
    assert restarted.horizon(p) == history.horizon(p) == START


async def test_the_first_touch_after_a_start_reads_the_file_in_a_worker_thread(
    tmp_path: Path,
) -> None:
    clock = Clock(START)
    p = scope_for().partition
    inner, _, store = await _world(tmp_path, clock)
    await _life(store, p, clock)
    restarted = _history(tmp_path, clock)
    journal = restarted.journal
    assert journal is not None
    threads: list[str] = []
    read = journal.load

    def recording_load(partition: Partition) -> object:
        threads.append(threading.current_thread().name)
        return read(partition)

    journal.load = recording_load  # type: ignore[method-assign,assignment]
    await HistoryStore(inner, restarted).upsert(p, [memory(p, content="after the start")])
    assert threads and threading.main_thread().name not in threads
    assert restarted.version_count() > 1  # the file's versions, then the new one
