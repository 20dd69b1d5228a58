"""One conformance suite, run against every Store backend.

To add a backend, append a :class:`Backend` to ``BACKENDS``; every test in this
directory then runs against it through the ``store`` fixture. The ``qdrant-server``
backends run on the session's real Qdrant server (tests/qdrant_server.py), each test
in collections of its own prefix, deleted after it; they are skipped, saying why,
where no server binary exists.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
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
from tests.conftest import drop_collections
from tests.qdrant_server import QdrantServer

from .support import DIM


@dataclass(frozen=True)
class Scratch:
    """Where a test's store lives: a directory, and for the server backends a server."""

    path: Path
    server: QdrantServer | None = None

    @property
    def prefix(self) -> str:
        """Collection prefix of this test (the same for a reopened store)."""
        return "t" + hashlib.sha256(str(self.path).encode()).hexdigest()[:16] + "_"

    def qdrant(self, *, grpc: bool = True) -> QdrantOptions:
        """The session server, with this test's collection prefix."""
        assert self.server is not None
        return QdrantOptions(
            url=self.server.url,
            grpc_port=self.server.grpc_port,
            prefer_grpc=grpc,
            collection_prefix=self.prefix,
        )


@dataclass(frozen=True)
class Backend:
    name: str
    #: (scratch, vector dimension) -> a new, unopened store (whether a new instance
    #: on the same directory sees the old data: its ``capabilities.persistent``).
    make: Callable[[Scratch, int], Store]
    #: Runs on the session's Qdrant server.
    server: bool = False


BACKENDS = [
    Backend("memory", lambda _s, dim: InMemoryStore(dim)),
    Backend("lancedb", lambda s, dim: LanceDBStore(s.path / "lancedb", dim)),
    Backend(
        "lancedb+hot-cache",
        lambda s, dim: HotCacheStore(
            LanceDBStore(s.path / "lancedb", dim), dimension=dim, budget_bytes=64 * 2**20
        ),
    ),
    Backend(
        "qdrant-local",
        lambda s, dim: QdrantStore.from_options(QdrantOptions(path=s.path / "qdrant"), dim),
    ),
    Backend("qdrant-edge", lambda s, dim: edge_store(s.path / "qdrant-edge", dim)),
    Backend(
        "qdrant-server",
        lambda s, dim: QdrantStore.from_options(s.qdrant(), dim),
        server=True,
    ),
    Backend(
        "qdrant-server-rest",
        lambda s, dim: QdrantStore.from_options(s.qdrant(grpc=False), dim),
        server=True,
    ),
]


@pytest.fixture
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    """The test's scratch place; the session's Qdrant server when its backend needs one."""
    callspec = getattr(request.node, "callspec", None)
    params = [] if callspec is None else list(callspec.params.values())
    if not any(isinstance(b, Backend | RecordBackend) and b.server for b in params):
        yield Scratch(tmp_path)
        return
    server: QdrantServer = request.getfixturevalue("qdrant_server")
    made = Scratch(tmp_path, server)
    try:
        yield made
    finally:
        drop_collections(server, made.prefix)


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    result: Backend = request.param
    return result


@pytest.fixture
async def store(backend: Backend, scratch: Scratch) -> AsyncIterator[Store]:
    s = backend.make(scratch, DIM)
    await s.open()
    yield s
    await s.close()


Reopen = Callable[..., Awaitable[Store]]


@pytest.fixture
async def reopen(backend: Backend, scratch: Scratch, store: Store) -> AsyncIterator[Reopen]:
    """Close ``store`` and open a new instance on the same directory (persistent only)."""
    if not store.capabilities.persistent:
        pytest.skip(f"{backend.name} does not persist across instances")
    opened: list[Store] = []

    async def _reopen(dimension: int = DIM) -> Store:
        await store.close()
        for s in opened:
            await s.close()
        new = backend.make(scratch, dimension)
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
    #: scratch -> a new, unopened record store (persistence: its capabilities).
    make: Callable[[Scratch], RecordStore]
    server: bool = False


RECORD_BACKENDS = [
    RecordBackend("memory", lambda _s: InMemoryRecordStore()),
    RecordBackend("lancedb", lambda s: LanceDBRecordStore(s.path / "lancedb")),
    RecordBackend(
        "qdrant-local",
        lambda s: QdrantRecordStore.from_options(QdrantOptions(path=s.path / "qdrant-records")),
    ),
    RecordBackend(
        "qdrant-edge",
        lambda s: edge_record_store(s.path / "qdrant-edge"),
    ),
    RecordBackend(
        "qdrant-server",
        lambda s: QdrantRecordStore.from_options(s.qdrant()),
        server=True,
    ),
    RecordBackend(
        "qdrant-server-rest",
        lambda s: QdrantRecordStore.from_options(s.qdrant(grpc=False)),
        server=True,
    ),
]


@pytest.fixture(params=RECORD_BACKENDS, ids=lambda b: b.name)
def record_backend(request: pytest.FixtureRequest) -> RecordBackend:
    result: RecordBackend = request.param
    return result


@pytest.fixture
async def record_store(
    record_backend: RecordBackend, scratch: Scratch
) -> AsyncIterator[RecordStore]:
    s = record_backend.make(scratch)
    await s.open()
    yield s
    await s.close()


ReopenRecords = Callable[[], Awaitable[RecordStore]]


@pytest.fixture
async def reopen_records(
    record_backend: RecordBackend, scratch: Scratch, record_store: RecordStore
) -> AsyncIterator[ReopenRecords]:
    """Close ``record_store`` and open a new instance on the same directory."""
    if not record_store.capabilities.persistent:
        pytest.skip(f"{record_backend.name} does not persist across instances")
    opened: list[RecordStore] = []

    async def _reopen() -> RecordStore:
        await record_store.close()
        for s in opened:
            await s.close()
        new = record_backend.make(scratch)
        await new.open()
        opened.append(new)
        return new

    yield _reopen
    for s in opened:
        await s.close()
