"""One conformance suite, run against every Store backend.

To add a backend, append a :class:`Backend` to ``BACKENDS``; every test in this
directory then runs against it through the ``store`` fixture.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.storage.base import Store
from memoryd.storage.hot_cache import HotCacheStore
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.qdrant import QdrantOptions, QdrantRecordStore, QdrantStore
from memoryd.storage.qdrant.edge import edge_record_store, edge_store
from memoryd.storage.records import RecordStore

from .support import DIM


@dataclass(frozen=True)
class Backend:
    name: str
    #: (scratch directory, vector dimension) -> a new, unopened store.
    make: Callable[[Path, int], Store]
    #: Whether a new instance on the same directory sees the old data.
    persistent: bool


BACKENDS = [
    Backend("memory", lambda _path, dim: InMemoryStore(dim), persistent=False),
    Backend("lancedb", lambda path, dim: LanceDBStore(path / "lancedb", dim), persistent=True),
    Backend(
        "lancedb+hot-cache",
        lambda path, dim: HotCacheStore(
            LanceDBStore(path / "lancedb", dim), dimension=dim, budget_bytes=64 * 2**20
        ),
        persistent=True,
    ),
    Backend(
        "qdrant-local",
        lambda path, dim: QdrantStore.from_options(QdrantOptions(path=path / "qdrant"), dim),
        persistent=True,
    ),
    Backend(
        "qdrant-edge", lambda path, dim: edge_store(path / "qdrant-edge", dim), persistent=True
    ),
]


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    result: Backend = request.param
    return result


@pytest.fixture
async def store(backend: Backend, tmp_path: Path) -> AsyncIterator[Store]:
    s = backend.make(tmp_path, DIM)
    await s.open()
    yield s
    await s.close()


Reopen = Callable[..., Awaitable[Store]]


@pytest.fixture
async def reopen(backend: Backend, tmp_path: Path, store: Store) -> AsyncIterator[Reopen]:
    """Close ``store`` and open a new instance on the same directory (persistent only)."""
    if not backend.persistent:
        pytest.skip(f"{backend.name} does not persist across instances")
    opened: list[Store] = []

    async def _reopen(dimension: int = DIM) -> Store:
        await store.close()
        for s in opened:
            await s.close()
        new = backend.make(tmp_path, dimension)
        await new.open()
        opened.append(new)
        return new

    yield _reopen
    for s in opened:
        await s.close()


# ---------------------------------------------------------------- record stores


@dataclass(frozen=True)
class RecordBackend:
    name: str
    #: scratch directory -> a new, unopened record store.
    make: Callable[[Path], RecordStore]
    persistent: bool


RECORD_BACKENDS = [
    RecordBackend("memory", lambda _path: InMemoryRecordStore(), persistent=False),
    RecordBackend("lancedb", lambda path: LanceDBRecordStore(path / "lancedb"), persistent=True),
    RecordBackend(
        "qdrant-local",
        lambda path: QdrantRecordStore.from_options(QdrantOptions(path=path / "qdrant-records")),
        persistent=True,
    ),
    RecordBackend(
        "qdrant-edge", lambda path: edge_record_store(path / "qdrant-edge"), persistent=True
    ),
]


@pytest.fixture(params=RECORD_BACKENDS, ids=lambda b: b.name)
def record_backend(request: pytest.FixtureRequest) -> RecordBackend:
    result: RecordBackend = request.param
    return result


@pytest.fixture
async def record_store(record_backend: RecordBackend, tmp_path: Path) -> AsyncIterator[RecordStore]:
    s = record_backend.make(tmp_path)
    await s.open()
    yield s
    await s.close()


ReopenRecords = Callable[[], Awaitable[RecordStore]]


@pytest.fixture
async def reopen_records(
    record_backend: RecordBackend, tmp_path: Path, record_store: RecordStore
) -> AsyncIterator[ReopenRecords]:
    """Close ``record_store`` and open a new instance on the same directory."""
    if not record_backend.persistent:
        pytest.skip(f"{record_backend.name} does not persist across instances")
    opened: list[RecordStore] = []

    async def _reopen() -> RecordStore:
        await record_store.close()
        for s in opened:
            await s.close()
        new = record_backend.make(tmp_path)
        await new.open()
        opened.append(new)
        return new

    yield _reopen
    for s in opened:
        await s.close()
