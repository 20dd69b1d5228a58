"""One conformance suite, run against every Store backend.

To add a backend, append a :class:`Backend` to ``BACKENDS``; every test in this
directory then runs against it through the ``store`` fixture. The ``qdrant-server``
backends run on the session's real Qdrant server (tests/qdrant_server.py), each test
in collections of its own prefix (emptied after it for the next test of that backend:
``Prefixes``); they are skipped, saying why, where no server binary exists.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from memoryd.storage.base import Store
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.qdrant import QdrantOptions, QdrantRecordStore, QdrantStore
from memoryd.storage.qdrant.edge import edge_record_store, edge_store
from memoryd.storage.qdrant.schema import DENSE
from memoryd.storage.records import RecordStore
from tests.qdrant_server import QdrantServer

from .composed import compose
from .support import DIM


@dataclass(frozen=True)
class Scratch:
    """Where a test's store lives: a directory, and for the server backends a server
    and the test's collection prefix (the same for a reopened store)."""

    path: Path
    server: QdrantServer | None = None
    prefix: str = ""

    def qdrant(self, *, grpc: bool = True) -> QdrantOptions:
        """The session server, with this test's collection prefix."""
        assert self.server is not None
        return QdrantOptions(
            url=self.server.url,
            grpc_port=self.server.grpc_port,
            prefer_grpc=grpc,
            collection_prefix=self.prefix,
        )


class Prefixes:
    """Collection prefixes on one Qdrant server, passed from test to test of a backend.

    After a test its collections are emptied and checked empty, not deleted: the next
    test of the same backend opens them as a reopened store would. Creating a
    repository's collections and their ~50 payload indexes cost the server about 0.6 s
    of CPU per test (measured), emptying them a few milliseconds. Where emptying
    cannot be shown to have worked, the collections are deleted and the prefix retired.
    """

    def __init__(self, server: QdrantServer) -> None:
        self._client = QdrantClient(url=server.url, prefer_grpc=False, check_compatibility=False)
        self._free: dict[str, list[str]] = {}
        self._made = itertools.count()

    def take(self, backend: str) -> str:
        free = self._free.setdefault(backend, [])
        return free.pop() if free else f"c{os.getpid()}_{next(self._made)}_"

    def give_back(self, backend: str, prefix: str) -> None:
        names = [c.name for c in self._client.get_collections().collections]
        mine = [name for name in names if name.startswith(prefix)]
        if all(self._emptied(name) for name in mine):
            self._free[backend].append(prefix)
            return
        for name in mine:
            self._client.delete_collection(name)

    def _emptied(self, name: str) -> bool:
        vectors = self._client.get_collection(name).config.params.vectors
        dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if dense is not None and dense.size != DIM:
            return False
        self._client.delete(name, models.FilterSelector(filter=models.Filter()), wait=True)
        return self._client.count(name, exact=True).count == 0

    def close(self) -> None:
        self._client.close()


@pytest.fixture(scope="session")
def prefixes(qdrant_server: QdrantServer) -> Iterator[Prefixes]:
    made = Prefixes(qdrant_server)
    yield made
    made.close()


@dataclass(frozen=True)
class Backend:
    name: str
    #: (scratch, vector dimension) -> a new, unopened store (whether a new instance
    #: on the same directory sees the old data: its ``capabilities.persistent``).
    make: Callable[[Scratch, int], Store]
    #: Runs on the session's Qdrant server.
    server: bool = False
    #: Composed with these records into a repository (composed.py) when given.
    records: Callable[[Scratch], RecordStore] | None = None


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


def _shared(options: QdrantOptions) -> QdrantOptions:
    return dataclasses.replace(options, shared=True)


#: (name, store factory, record factory, on the server): every backend composed into
#: the daemon's repository (composed.py) with the record store it is deployed with;
#: the store and the record suites both run on each.
COMPOSED: list[
    tuple[str, Callable[[Scratch, int], Store], Callable[[Scratch], RecordStore], bool]
] = [
    ("memory", lambda _s, dim: InMemoryStore(dim), lambda _s: InMemoryRecordStore(), False),
    (
        "lancedb",
        lambda s, dim: LanceDBStore(s.path / "lancedb", dim),
        lambda s: LanceDBRecordStore(s.path / "lancedb"),
        False,
    ),
    (
        "qdrant-local",
        lambda s, dim: QdrantStore.from_options(QdrantOptions(path=s.path / "qdrant"), dim),
        lambda s: QdrantRecordStore.from_options(QdrantOptions(path=s.path / "qdrant-records")),
        False,
    ),
    (
        "qdrant-edge",
        lambda s, dim: edge_store(s.path / "qdrant-edge", dim),
        lambda s: edge_record_store(s.path / "qdrant-edge"),
        False,
    ),
    (
        "qdrant-server",
        lambda s, dim: QdrantStore.from_options(s.qdrant(), dim),
        lambda s: QdrantRecordStore.from_options(s.qdrant()),
        True,
    ),
    (
        "qdrant-server-shared",
        lambda s, dim: QdrantStore.from_options(_shared(s.qdrant()), dim),
        lambda s: QdrantRecordStore.from_options(_shared(s.qdrant())),
        True,
    ),
]
BACKENDS += [
    Backend(f"{name}+repository", make, server=server, records=records)
    for name, make, records, server in COMPOSED
]


@pytest.fixture
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    """The test's scratch place; the session's Qdrant server when its backend needs one."""
    callspec = getattr(request.node, "callspec", None)
    params = [] if callspec is None else list(callspec.params.values())
    backends = [b for b in params if isinstance(b, Backend | RecordBackend) and b.server]
    if not backends:
        yield Scratch(tmp_path)
        return
    server: QdrantServer = request.getfixturevalue("qdrant_server")
    pool: Prefixes = request.getfixturevalue("prefixes")
    # Shared and single-owner stores may lay their collections out differently: a
    # prefix passes only between tests of one backend.
    backend = backends[0].name
    prefix = pool.take(backend)
    try:
        yield Scratch(tmp_path, server, prefix)
    finally:
        pool.give_back(backend, prefix)


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request: pytest.FixtureRequest) -> Backend:
    result: Backend = request.param
    return result


class Opened:
    """The stores a test opened: bare, or composed into a repository."""

    def __init__(self) -> None:
        self._closers: list[Callable[[], Awaitable[None]]] = []
        #: The backend under the last record store opened (itself when bare).
        self.backend_records: RecordStore | None = None

    async def store(self, backend: Backend, scratch: Scratch, dimension: int) -> Store:
        s = backend.make(scratch, dimension)
        if backend.records is None:
            await s.open()
            self._closers.append(s.close)
            return s
        made = await compose(scratch.path, s, backend.records(scratch), dimension)
        self._closers.append(made.close)
        return made.repository.store

    async def records(self, backend: RecordBackend, scratch: Scratch) -> RecordStore:
        r = backend.make(scratch)
        self.backend_records = r
        if backend.store is None:
            await r.open()
            self._closers.append(r.close)
            return r
        made = await compose(scratch.path, backend.store(scratch, DIM), r, DIM)
        self._closers.append(made.close)
        return made.repository.records

    async def close(self) -> None:
        while self._closers:
            await self._closers.pop()()


@pytest.fixture
async def opened() -> AsyncIterator[Opened]:
    made = Opened()
    yield made
    await made.close()


@pytest.fixture
async def store(backend: Backend, scratch: Scratch, opened: Opened) -> Store:
    return await opened.store(backend, scratch, DIM)


Reopen = Callable[..., Awaitable[Store]]


@pytest.fixture
async def reopen(
    backend: Backend, scratch: Scratch, store: Store, opened: Opened
) -> AsyncIterator[Reopen]:
    """Close ``store`` and open a new instance on the same directory (persistent only)."""
    if not store.capabilities.persistent:
        pytest.skip(f"{backend.name} does not persist across instances")

    async def _reopen(dimension: int = DIM) -> Store:
        await opened.close()
        return await opened.store(backend, scratch, dimension)

    yield _reopen


# ---------------------------------------------------------------- record stores


@dataclass(frozen=True)
class RecordBackend:
    name: str
    #: scratch -> a new, unopened record store (persistence: its capabilities).
    make: Callable[[Scratch], RecordStore]
    server: bool = False
    #: Composed with this store into a repository (composed.py) when given.
    store: Callable[[Scratch, int], Store] | None = None


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
RECORD_BACKENDS += [
    RecordBackend(f"{name}+repository", records, server=server, store=make)
    for name, make, records, server in COMPOSED
]


@pytest.fixture(params=RECORD_BACKENDS, ids=lambda b: b.name)
def record_backend(request: pytest.FixtureRequest) -> RecordBackend:
    result: RecordBackend = request.param
    return result


@pytest.fixture
async def record_store(
    record_backend: RecordBackend, scratch: Scratch, opened: Opened
) -> RecordStore:
    return await opened.records(record_backend, scratch)


ReopenRecords = Callable[[], Awaitable[RecordStore]]


@pytest.fixture
async def reopen_records(
    record_backend: RecordBackend, scratch: Scratch, record_store: RecordStore, opened: Opened
) -> AsyncIterator[ReopenRecords]:
    """Close ``record_store`` and open a new instance on the same directory."""
    if not record_store.capabilities.persistent:
        pytest.skip(f"{record_backend.name} does not persist across instances")

    async def _reopen() -> RecordStore:
        await opened.close()
        return await opened.records(record_backend, scratch)

    yield _reopen
