"""The store fails: writes are acknowledged from the log, reads overlay it and say
so, and everything is applied when the store returns; a restart replays the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Memory, MemoryFilter, Partition, utcnow
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableStore
from memoryd.resilience.degradation import collecting
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.reliability.support import open_core, until

P = Partition("t", "a")
DIM = 8


class FlakyStore:
    """Every call fails while ``down`` (a store that is unreachable)."""

    def __init__(self, inner: InMemoryStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise StoreError("connection refused")
            return await attr(*args, **kwargs)

        return call


def _memory(i: int) -> Memory:
    now = utcnow()
    vec = np.zeros(DIM, dtype=np.float32)
    vec[i % DIM] = 1.0
    return Memory(
        id=f"m{i}",
        tenant_id="t",
        agent_id="a",
        content=f"memory {i}",
        created_at=now,
        updated_at=now,
        vector=vec,
    )


async def _core(tmp: Path, store: Any, records: Any) -> Durability:
    return await open_core(tmp, store, records)


async def test_writes_survive_a_store_outage(tmp_path: Path) -> None:
    inner = InMemoryStore(DIM)
    await inner.open()
    flaky = FlakyStore(inner)
    core = await _core(tmp_path, flaky, InMemoryRecordStore())
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [_memory(0)])
    assert core.states.get("store").ok  # type: ignore[union-attr]

    flaky.down = True
    with collecting() as found:
        await store.upsert(P, [_memory(1), _memory(2)])  # acknowledged: it is in the log
    assert [d.component for d in found] == ["store"]
    assert not core.states.get("store").ok  # type: ignore[union-attr]
    with collecting() as found:
        got = await store.get(P, ["m1", "m2"])  # every id asked for is in the log
        hits = await store.search(P, _memory(1).vector, MemoryFilter(), 5)  # type: ignore[arg-type]
    assert [m.id for m in got] == ["m1", "m2"]
    assert [h.memory.id for h in hits][:1] == ["m1"]  # searched in the log, said so
    assert "store" in {d.component for d in found}
    # What only the store can answer is UNAVAILABLE, never missing: m0 is stored, and a
    # caller told "not found" or an incomplete list would take it for the truth.
    for read in (
        lambda: store.get(P, ["m0", "m1"]),
        lambda: store.list(P, MemoryFilter()),
        lambda: store.count(P, MemoryFilter()),
    ):
        with pytest.raises(StoreError, match="store unavailable: connection refused"):
            await read()
    await store.delete(P, ["m1"])

    flaky.down = False
    await until(lambda: not core.pending)
    assert sorted(m.id for m in await inner.get(P, ["m0", "m1", "m2"])) == ["m0", "m2"]
    await until(lambda: core.states.get("store").ok)  # type: ignore[union-attr]
    await core.close()


async def test_restart_replays_what_the_store_never_got(tmp_path: Path) -> None:
    inner = InMemoryStore(DIM)
    await inner.open()
    flaky = FlakyStore(inner)
    core = await _core(tmp_path, flaky, InMemoryRecordStore())
    flaky.down = True
    await DurableStore(core, dimension=DIM).upsert(P, [_memory(i) for i in range(5)])
    # "Crash": abandon the core without closing it; a new process has a new store.
    core._closed = True
    fresh = InMemoryStore(DIM)
    await fresh.open()
    again = await _core(tmp_path, fresh, InMemoryRecordStore())
    assert again.replayed == 1
    assert len(await DurableStore(again, dimension=DIM).get(P, [f"m{i}" for i in range(5)])) == 5
    await again.close()


async def test_a_write_logged_after_a_failed_read_is_applied_when_the_store_returns(
    tmp_path: Path,
) -> None:
    """A failed read starts the read probe; a write logged while it runs must still be
    applied once the store answers (found with a real Qdrant server killed under a
    daemon: Remember's duplicate lookup failed first, then its write stayed pending
    and the store component NOT_SERVING until the next write)."""
    inner = InMemoryStore(DIM)
    await inner.open()
    flaky = FlakyStore(inner)
    core = await _core(tmp_path, flaky, InMemoryRecordStore())
    store = DurableStore(core, dimension=DIM)
    flaky.down = True
    with collecting():
        with pytest.raises(StoreError):  # the read fails (never "not found"): probe started
            await store.get(P, ["m0"])
        await store.upsert(P, [_memory(0)])  # logged, not applied
    assert core.pending
    flaky.down = False
    await until(lambda: not core.pending)
    assert [m.id for m in await inner.get(P, ["m0"])] == ["m0"]
    await until(lambda: core.states.get("store").ok)  # type: ignore[union-attr]
    await core.close()
