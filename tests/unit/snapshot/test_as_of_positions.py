"""The as-of history over the real write-ahead log (durability/) with concurrent
writers: each write's versions are recorded at its own log position and at an instant
in the log's order (storage/write_stamp.py), so a read as of any entry's position
sees exactly the writes up to it; inside a transaction versions are recorded once the
entry is logged, and a transaction that fails records none."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memoryd.domain.models import Memory
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableStore
from memoryd.durability.transaction import transaction
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_stores import HistoryStore, stored_memories
from tests.unit.durability.test_change_log import DIM, P, open_core, read_all
from tests.unit.snapshot.world import Clock

WRITERS, ROUNDS = 8, 6


START = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def note(memory_id: str, content: str) -> Memory:
    return Memory(
        id=memory_id, tenant_id=P.tenant_id, agent_id=P.agent_id, content=content,
        created_at=START, updated_at=START, vector=np.ones(DIM, dtype=np.float32),
    )  # fmt: skip


async def _world(tmp: Path) -> tuple[Durability, MemoryHistory, HistoryStore]:
    # A clock that stands still: the log's stamps alone order the writes.
    clock = Clock(START)
    core = await open_core(tmp, clock=clock)
    history = MemoryHistory(timedelta(hours=1), clock=clock, position=core.changes.last_seq)
    return core, history, HistoryStore(DurableStore(core, dimension=DIM), history)


def _as_of_position(history: MemoryHistory, seq: int, stored: list[Memory]) -> dict[str, str]:
    instant = history.instant_of(P, seq)
    assert instant is not None
    return {m.id: m.content for m in history.valid_at(P, instant, stored)}


async def test_a_read_as_of_each_position_sees_exactly_the_writes_up_to_it(
    tmp_path: Path,
) -> None:
    core, history, store = await _world(tmp_path)

    async def writer(w: int) -> None:
        for r in range(ROUNDS):
            await store.upsert(P, [note(f"w{w}", f"writer {w} round {r}")])

    # Concurrent writers share group fsyncs: each one's versions are recorded after
    # later writers' entries were logged.
    await asyncio.gather(*(writer(w) for w in range(WRITERS)))
    stored = await stored_memories(store, P)
    expected: dict[str, str] = {}
    entries = read_all(core.changes, 0)
    assert len(entries) == WRITERS * ROUNDS
    for entry in entries:
        for op in entry.ops:
            expected.update((m.id, m.content) for m in op.memories)
        assert _as_of_position(history, entry.seq, stored) == expected, entry.seq
    await core.close()


async def test_a_transaction_records_at_its_entry_and_a_failed_one_records_nothing(
    tmp_path: Path,
) -> None:
    core, history, store = await _world(tmp_path)
    await store.upsert(P, [note("kept", "kept from the start")])
    before = history.version_count()

    with pytest.raises(RuntimeError):
        async with transaction():
            await store.upsert(P, [note("phantom", "a mirror never stored")])
            raise RuntimeError("the key's record could not be written")
    assert history.version_count() == before  # nothing was logged, nothing recorded

    async with transaction():
        await store.upsert(P, [note("mirror", "a key's mirror")])
        await store.delete(P, ["kept"])  # answers no ids inside a transaction
    stored = await stored_memories(store, P)
    [first, last] = (e.seq for e in read_all(core.changes, 0))
    assert _as_of_position(history, first, stored) == {"kept": "kept from the start"}
    assert _as_of_position(history, last, stored) == {"mirror": "a key's mirror"}
    assert "phantom" not in {m.id for m in stored}
    await core.close()
