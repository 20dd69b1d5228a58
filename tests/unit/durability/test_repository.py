"""The composed repository (durability/repository.py): the layers in the order it
promises, chosen by the backend's capabilities; refusals where a layer would lie.
Its behaviour over every backend is the conformance suite's ``+repository`` variants."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter, Partition
from memoryd.durability.facades import DurableRecordStore, DurableStore
from memoryd.durability.repository import HotCacheOptions, LogOptions, compose_repository
from memoryd.durability.write_through import WriteThrough
from memoryd.observability.instrumented import InstrumentedRecordStore, InstrumentedStore
from memoryd.observability.metrics import Metrics
from memoryd.resilience.degradation import ComponentStates
from memoryd.storage.base import Capabilities
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.hot_cache.helpers import DIM, memory, unit_vector

P = Partition("tenant", "agent")


def _log(root: Path) -> LogOptions:
    return LogOptions(
        wal_dir=root / "wal",
        store_dir=root,
        segment_bytes=2**20,
        checkpoint_interval_s=0.05,
        apply_behind=0,
        apply_delay_s=0.0,
    )


class Shared(InMemoryStore):
    capabilities = Capabilities(shared=True, conditional_writes=True)


class SharedRecords(InMemoryRecordStore):
    capabilities = Capabilities(shared=True, conditional_writes=True)


class SharedWithoutConditions(InMemoryRecordStore):
    capabilities = Capabilities(shared=True)


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    async with AsyncExitStack() as s:
        yield s


async def test_log_then_metrics_then_cache_then_backend(
    tmp_path: Path, stack: AsyncExitStack
) -> None:
    backend, records = InMemoryStore(DIM), InMemoryRecordStore()
    metrics = Metrics(process_metrics=False)
    repo = await compose_repository(
        backend,
        records,
        dimension=DIM,
        stack=stack,
        states=ComponentStates(),
        wal=_log(tmp_path),
        retry_max_s=0.2,
        hot_cache=HotCacheOptions(2**20),
        metrics=metrics,
    )
    assert isinstance(repo.store, DurableStore) and isinstance(repo.records, DurableRecordStore)
    assert repo.durability is not None and repo.store.core is repo.durability
    timed = repo.store.inner
    assert isinstance(timed, InstrumentedStore) and timed.inner is repo.hot_cache
    assert isinstance(repo.hot_cache, HotCacheStore) and repo.hot_cache.inner is backend
    assert repo.uncounted is repo.hot_cache
    assert isinstance(repo.records.inner, InstrumentedRecordStore)
    assert repo.records.inner.inner is records
    # A write is logged, then reaches the backend; a search is the cache's.
    v = unit_vector(np.random.default_rng(1))
    await repo.store.upsert(P, [memory(P, id="a", vector=v)])
    assert [h.memory.id for h in await repo.store.search(P, v, MemoryFilter(), 1)] == ["a"]
    assert await backend.count(P, MemoryFilter()) == 1
    assert repo.hot_cache.partition_state(P) != "absent"


async def test_without_log_or_observers_the_backend_is_what_services_get(
    stack: AsyncExitStack,
) -> None:
    backend, records = InMemoryStore(DIM), InMemoryRecordStore()
    repo = await compose_repository(
        backend,
        records,
        dimension=DIM,
        stack=stack,
        states=ComponentStates(),
        wal=None,
        retry_max_s=0.2,
    )
    assert repo.store is backend and repo.records is records and repo.durability is None


async def test_a_shared_store_is_written_through_never_logged(
    tmp_path: Path, stack: AsyncExitStack
) -> None:
    repo = await compose_repository(
        Shared(DIM),
        SharedRecords(),
        dimension=DIM,
        stack=stack,
        states=ComponentStates(),
        wal=_log(tmp_path),
        retry_max_s=0.2,
    )
    assert isinstance(repo.store, DurableStore) and isinstance(repo.store.core, WriteThrough)
    assert repo.durability is None and not (tmp_path / "wal").exists()


async def test_a_shared_store_without_conditional_writes_is_refused(
    stack: AsyncExitStack,
) -> None:
    with pytest.raises(ValueError, match="conditional writes"):
        await compose_repository(
            Shared(DIM),
            SharedWithoutConditions(),
            dimension=DIM,
            stack=stack,
            states=ComponentStates(),
            wal=None,
            retry_max_s=0.2,
        )


async def test_no_hot_cache_in_front_of_a_shared_store(stack: AsyncExitStack) -> None:
    with pytest.raises(ValueError, match="hot cache"):
        await compose_repository(
            Shared(DIM),
            SharedRecords(),
            dimension=DIM,
            stack=stack,
            states=ComponentStates(),
            wal=None,
            retry_max_s=0.2,
            hot_cache=HotCacheOptions(2**20),
        )
