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
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.memory import InMemoryStore

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
