"""Choosing a Store backend by its configured name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memoryd.storage.base import Store


def _lancedb(data_dir: Path, dimension: int) -> Store:
    from memoryd.storage.lancedb import LanceDBStore

    return LanceDBStore(data_dir / "lancedb", dimension)


def _memory(data_dir: Path, dimension: int) -> Store:
    from memoryd.storage.memory import InMemoryStore

    return InMemoryStore(dimension)


#: Backend name -> factory(data_dir, dimension). Imports are deferred so that an
#: unused backend's dependencies are never loaded.
BACKENDS: dict[str, Callable[[Path, int], Store]] = {
    "lancedb": _lancedb,
    "memory": _memory,
}


def build_store(backend: str, *, data_dir: Path, dimension: int) -> Store:
    """A new, not yet opened, Store of the named backend."""
    try:
        factory = BACKENDS[backend]
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown storage backend {backend!r}; known backends: {known}") from None
    return factory(data_dir, dimension)
