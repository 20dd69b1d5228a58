"""What watchers cost the daemon (docs/watch.md, Flow control), over a real log on disk
and the change feed's service: a watcher whose message was not taken reads nothing
and is not woken, however many writes happen meanwhile, and then resumes with every
change once, in order; every watcher's log reads run in the feed's own thread, never
in the loop's default executor (whose threads the write path's work queues for); a
stalled watcher holds no file of the log open (an open file keeps a segment's disk
space after retention deleted it); a closed feed answers UNAVAILABLE."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memoryd.domain.changes import WatchItem, WatchQuery, WatchStart
from memoryd.domain.errors import Unavailable
from memoryd.domain.models import SecurityLevel
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.durability.changes import ChangeReader, LoggedEntry
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableStore
from memoryd.service.changes.cursor import CursorCodec
from memoryd.service.changes.service import ChangeFeedService
from memoryd.service.common.pagination import PageTokenCodec
from tests.clock import INSTANTS, SteppingClock
from tests.unit.durability.test_change_log import DIM, P, memory, open_core

#: Small segments: the writes of a test span several, so reads cross segment ends.
SEGMENT = 4096
SCOPE = CallScope(
    Principal("test", P.tenant_id, frozenset({"*"}), SecurityLevel.RESTRICTED, frozenset(Role)),
    P,
)
FOLLOW = WatchQuery(start=WatchStart.OLDEST, follow=True)


class Reads:
    """Counts ``ChangeReader.read`` calls (every log read of every watcher) and the
    threads they ran in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.threads: set[str] = set()
        read = ChangeReader.read

        def counted(reader: ChangeReader, visible: int, marker: bytes = b"") -> list[LoggedEntry]:
            self.count += 1
            self.threads.add(threading.current_thread().name)
            return read(reader, visible, marker)

        monkeypatch.setattr(ChangeReader, "read", counted)


def ids(items: list[WatchItem]) -> Iterator[str]:
    return (c.memory_id for item in items for c in item.changes)


async def until_caught_up(watch: AsyncIterator[WatchItem]) -> list[WatchItem]:
    items = []
    async for item in watch:
        items.append(item)
        if item.caught_up:
            return items
    raise AssertionError("the watch ended before it caught up")


@pytest.fixture
async def core(tmp_path: Path) -> AsyncIterator[Durability]:
    core = await open_core(tmp_path, clock=SteppingClock(INSTANTS[0]), segment=SEGMENT)
    yield core
    await core.close()


async def test_a_stalled_watcher_reads_nothing_and_then_resumes_exactly_once(
    core: Durability, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [memory(0)])
    feed = ChangeFeedService(core.changes, CursorCodec(PageTokenCodec(b"s" * 32)))
    reads = Reads(monkeypatch)
    stalled = feed.watch(SCOPE, FOLLOW)
    first = await anext(stalled)  # its client took one message, then stopped reading
    before = reads.count
    waiters = core.changes.signal.current()
    for i in range(1, 41):
        await store.upsert(P, [memory(i)])  # each one notifies the feed
    assert reads.count == before  # neither woken nor reading
    # What it had not taken is all still there, once each and in order.
    rest = await until_caught_up(stalled)
    assert [*ids([first]), *ids(rest)] == [f"m{i}" for i in range(41)]
    assert waiters.is_set()
    await stalled.aclose()


def open_log_files(core: Durability) -> list[str]:
    """The files of the log's directory this process has open (Linux's /proc)."""
    wal, names = str(core.wal.directory), []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own, closed since
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sorted(n for n in names if n.startswith(wal))


async def test_a_stalled_watcher_holds_no_file_of_the_log(core: Durability) -> None:
    store = DurableStore(core, dimension=DIM)
    for i in range(30):
        await store.upsert(P, [memory(i)])
    feed = ChangeFeedService(core.changes, CursorCodec(PageTokenCodec(b"s" * 32)))
    before = open_log_files(core)  # the log's own open segment
    stalled = feed.watch(SCOPE, FOLLOW)
    await anext(stalled)
    assert open_log_files(core) == before
    await stalled.aclose()


async def test_watchers_read_in_the_feeds_thread(
    core: Durability, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DurableStore(core, dimension=DIM)
    for i in range(30):
        await store.upsert(P, [memory(i)])
    feed = ChangeFeedService(core.changes, CursorCodec(PageTokenCodec(b"s" * 32)))
    reads = Reads(monkeypatch)
    watches = [feed.watch(SCOPE, FOLLOW) for _ in range(3)]
    for watch in watches:
        assert list(ids(await until_caught_up(watch))) == [f"m{i}" for i in range(30)]
        await watch.aclose()
    # Not the loop's default executor ("asyncio_N"), whose threads the writes use.
    assert reads.count >= 3 and {t.split("_")[0] for t in reads.threads} == {"memoryd-feed"}


async def test_a_closed_feed_is_unavailable(tmp_path: Path) -> None:
    core = await open_core(tmp_path, clock=SteppingClock(INSTANTS[0]), segment=SEGMENT)
    await DurableStore(core, dimension=DIM).upsert(P, [memory(0)])
    feed = ChangeFeedService(core.changes, CursorCodec(PageTokenCodec(b"s" * 32)))
    await core.close()
    with pytest.raises(Unavailable, match="shutting down"):
        await anext(feed.watch(SCOPE, FOLLOW))
