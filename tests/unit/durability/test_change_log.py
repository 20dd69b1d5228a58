"""The change feed's source (durability/changes.py) over a real log on disk and the
in-process store: every visible entry once, in order, from any position, across many
segments; the retention keeps what it says and expires what it dropped, also under a
reader; an entry the store refused before its caller was answered is never visible,
before and after a restart; a write waits to be visible until it is decided; damage
is DATA_LOSS, never a skip."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memoryd.domain.errors import DataLoss
from memoryd.domain.models import Clock, Memory, Partition, utcnow
from memoryd.durability.changes import ChangeLog, CursorExpired, LoggedEntry
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableStore
from memoryd.durability.ops import partition_marker
from memoryd.durability.wal import SUFFIX, WriteAheadLog
from memoryd.resilience.degradation import ComponentStates
from memoryd.storage.base import NO_HINTS, UpsertHints
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.clock import INSTANTS

P = Partition("t", "a")
DIM = 8
#: Segments this small roll every few entries.
SEGMENT = 2048


def memory(i: int, content: str = "") -> Memory:
    now = INSTANTS[0]  # the log does not read a memory's instants
    return Memory(
        id=f"m{i}", tenant_id=P.tenant_id, agent_id=P.agent_id,
        content=content or f"note {i} " + "x" * 200, created_at=now, updated_at=now,
        vector=np.ones(DIM, dtype=np.float32),
    )  # fmt: skip


class RefusingStore(InMemoryStore):
    """Refuses (as invalid input) any memory whose content says "refuse"; blocks any
    whose content says "hold" until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__(DIM)
        self.release = asyncio.Event()
        #: Set once a held write reached the store (it is durable: applied after its fsync).
        self.holding = asyncio.Event()

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        if any(m.content == "refuse" for m in memories):
            raise ValueError("the store refuses this memory")
        if any(m.content == "hold" for m in memories):
            self.holding.set()
            await self.release.wait()
        await super().upsert(partition, memories, hints)


async def open_core(
    tmp: Path,
    *,
    retain: int = 1 << 30,
    store: InMemoryStore | None = None,
    clock: Clock = utcnow,
    segment: int = SEGMENT,
) -> Durability:
    store = store or InMemoryStore(DIM)
    records = InMemoryRecordStore()
    await store.open()
    await records.open()
    wal = WriteAheadLog(tmp / "wal", segment_bytes=segment, retain_bytes=retain)
    core = Durability(
        wal,
        store,
        records,
        states=ComponentStates(),
        store_dir=tmp,
        checkpoint_interval_s=3600,
        clock=clock,
    )
    await core.open()
    return core


def read_all(changes: ChangeLog, after: int) -> list[LoggedEntry]:
    reader = changes.reader(after)
    out: list[LoggedEntry] = []
    try:
        while batch := reader.read(changes.visible_seq()):
            out.extend(batch)
    finally:
        reader.close()
    return out


def ids(entries: list[LoggedEntry]) -> list[str]:
    return [m.id for e in entries for op in e.ops for m in op.memories]


async def test_every_visible_entry_once_in_order_from_any_position(tmp_path: Path) -> None:
    core = await open_core(tmp_path)
    store = DurableStore(core, dimension=DIM)
    for i in range(40):
        await store.upsert(P, [memory(i)])
    assert len(list((tmp_path / "wal").glob(f"*{SUFFIX}"))) > 5  # many segments
    everything = read_all(core.changes, 0)
    seqs = [e.seq for e in everything]
    assert seqs == sorted(set(seqs)) and ids(everything) == [f"m{i}" for i in range(40)]
    for k in (0, 1, 7, 20, 39):
        tail = read_all(core.changes, seqs[k])
        assert [e.seq for e in tail] == seqs[k + 1 :] and ids(tail) == ids(everything)[k + 1 :]
    await core.close()
    # After a restart: the same history, and new writes after it.
    core = await open_core(tmp_path)
    await DurableStore(core, dimension=DIM).upsert(P, [memory(40)])
    again = read_all(core.changes, seqs[-3])
    assert ids(again) == ["m38", "m39", "m40"]
    await core.close()


async def test_retention_keeps_its_bytes_and_expires_older_cursors(tmp_path: Path) -> None:
    core = await open_core(tmp_path, retain=3 * SEGMENT)
    store = DurableStore(core, dimension=DIM)
    for i in range(60):
        await store.upsert(P, [memory(i)])
    reader = core.changes.reader(0)  # positioned in the oldest segment, before the truncation
    assert [e.seq for e in reader.read(3)] == [1, 2, 3]  # as if only those were visible
    written = len(list((tmp_path / "wal").glob(f"*{SUFFIX}")))
    await asyncio.to_thread(core._make_durable, core.visible_seq())  # checkpoint, truncate
    kept = sorted((tmp_path / "wal").glob(f"*{SUFFIX}"))
    assert len(kept) < written
    sizes = [p.stat().st_size for p in kept]
    # At least the retention is kept, and no segment more than it needs.
    assert sum(sizes) >= 3 * SEGMENT > sum(sizes[1:])
    oldest = core.changes.retained_from()
    with pytest.raises(CursorExpired, match="cursor expired"):
        core.changes.reader(oldest - 2)
    assert ids(read_all(core.changes, oldest - 1))[-1] == "m59"
    with pytest.raises(CursorExpired):  # its next segments are gone: never a silent gap
        while reader.read(core.changes.visible_seq()):
            pass
    reader.close()
    await core.close()


async def test_a_write_refused_before_its_answer_is_never_visible(tmp_path: Path) -> None:
    core = await open_core(tmp_path, store=RefusingStore())
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [memory(0)])
    with pytest.raises(ValueError, match="refuses"):
        await store.upsert(P, [memory(1, "refuse")])
    await store.upsert(P, [memory(2)])
    assert ids(read_all(core.changes, 0)) == ["m0", "m2"]
    await core.close()
    core = await open_core(tmp_path, store=RefusingStore())
    assert ids(read_all(core.changes, 0)) == ["m0", "m2"]
    await core.close()


async def test_a_write_is_visible_only_once_decided(tmp_path: Path) -> None:
    held = RefusingStore()
    core = await open_core(tmp_path, store=held)
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [memory(0)])
    before = core.visible_seq()
    signal = core.changes.signal.current()
    writing = asyncio.create_task(store.upsert(P, [memory(1, "hold")]))
    await held.holding.wait()  # durable, being applied, not answered
    assert core.wal.durable_seq > before
    assert core.visible_seq() == before and not signal.is_set()
    assert ids(read_all(core.changes, before)) == []
    held.release.set()
    await writing
    assert signal.is_set() and core.visible_seq() > before
    assert ids(read_all(core.changes, before)) == ["m1"]
    await core.close()


async def test_damaged_bytes_are_data_loss_never_a_skip(tmp_path: Path) -> None:
    core = await open_core(tmp_path)
    store = DurableStore(core, dimension=DIM)
    for i in range(20):
        await store.upsert(P, [memory(i)])
    segment = sorted((tmp_path / "wal").glob(f"*{SUFFIX}"))[1]
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    with pytest.raises(DataLoss, match="damaged"):
        read_all(core.changes, 0)
    await core.close()


async def test_a_write_whose_caller_went_away_is_applied_and_visible(tmp_path: Path) -> None:
    """A call cancelled while its durable write waits to be applied (the client went
    away) must not leave the entry undecided: the feed would stall for everyone."""
    held = RefusingStore()
    core = await open_core(tmp_path, store=held)
    store = DurableStore(core, dimension=DIM)
    holding = asyncio.create_task(store.upsert(P, [memory(0, "hold")]))
    await held.holding.wait()  # the apply lock is held by this write's apply
    leaving = asyncio.create_task(store.upsert(P, [memory(1)]))
    await asyncio.sleep(0)  # it logs its entry
    logged = core.pending.values()[-1]
    assert ids([LoggedEntry(logged.seq, logged.ops)]) == ["m1"]
    await asyncio.shield(logged.durable)  # durable, waiting for the apply lock
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    held.release.set()
    await holding
    await asyncio.wait_for(core.changes.wait(1), 5)
    assert ids(read_all(core.changes, 0)) == ["m0", "m1"]
    await core.caught_up(P)
    assert [m.id for m in await held.get(P, ["m1"])] == ["m1"]
    await core.close()


async def test_a_reader_passes_over_other_partitions_entries(tmp_path: Path) -> None:
    core = await open_core(tmp_path)
    store = DurableStore(core, dimension=DIM)
    others = [Partition("t", "b"), Partition("tt", "a"), Partition("u", "a")]
    for i, partition in enumerate([P, *others, P]):
        m = memory(i)
        m.tenant_id, m.agent_id = partition.tenant_id, partition.agent_id
        await store.upsert(partition, [m])

    def read(marker: bytes) -> list[str]:
        reader = core.changes.reader(0)
        try:
            return ids(reader.read(core.changes.visible_seq(), marker))
        finally:
            reader.close()

    assert read(partition_marker("t", "a")) == ["m0", "m4"]
    assert read(partition_marker("t")) == ["m0", "m1", "m4"]
    assert read(partition_marker("u")) == ["m3"]
    assert read(b"") == ["m0", "m1", "m2", "m3", "m4"]
    await core.close()
