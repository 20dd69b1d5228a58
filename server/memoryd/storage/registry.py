"""Choosing a Store backend by its configured name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import structlog

from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore
from memoryd.storage.settings import QdrantSettings

if TYPE_CHECKING:
    from memoryd.storage.qdrant import QdrantOptions

log = structlog.get_logger(__name__)

F = TypeVar("F")


def _lancedb(data_dir: Path, dimension: int) -> Store:
    from memoryd.storage.lancedb import LanceDBStore

    return LanceDBStore(data_dir / "lancedb", dimension)


def _memory(data_dir: Path, dimension: int) -> Store:
    from memoryd.storage.memory import InMemoryStore

    return InMemoryStore(dimension)


def qdrant_options(settings: QdrantSettings, data_dir: Path, part: str) -> QdrantOptions:
    """A server when ``settings.url`` is set, else local mode in data_dir/qdrant/<part>
    (local mode locks its directory, so memories and records get one each)."""
    from memoryd.storage.qdrant import QdrantOptions

    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    return QdrantOptions(
        url=settings.url,
        api_key=key,
        path=None if settings.url else data_dir / "qdrant" / part,
        prefer_grpc=settings.prefer_grpc,
        grpc_port=settings.grpc_endpoint()[0],
        timeout_s=settings.timeout_s,
        collection_prefix=settings.collection_prefix,
        shared=settings.is_shared,
        write_ordering=settings.write_ordering,
        read_consistency=settings.read_consistency,
        shard_number=settings.shard_number,
        replication_factor=settings.replication_factor,
        write_consistency_factor=settings.write_consistency_factor,
    )


def _qdrant(data_dir: Path, dimension: int, settings: QdrantSettings | None = None) -> Store:
    from memoryd.storage.qdrant import QdrantStore

    settings = settings or QdrantSettings()
    options = qdrant_options(settings, data_dir, "memories")
    if settings.url is not None:
        grpc_port, why = settings.grpc_endpoint()
        endpoint = "REST to the url" if grpc_port is None else f"gRPC on port {grpc_port}"
        guessing_no_port = grpc_port is None and settings.prefer_grpc
        say = log.warning if guessing_no_port else log.info
        say("qdrant server", url=settings.url, talks=endpoint, because=why)
    return QdrantStore.from_options(options, dimension)


#: Backend name -> factory(data_dir, dimension). Imports are deferred so that an
#: unused backend's dependencies are never loaded.
BACKENDS: dict[str, Callable[[Path, int], Store]] = {
    "lancedb": _lancedb,
    "memory": _memory,
    "qdrant": _qdrant,
}


def build_store(
    backend: str, *, data_dir: Path, dimension: int, qdrant: QdrantSettings | None = None
) -> Store:
    """A new, not yet opened, Store of the named backend (``qdrant``: the settings of
    the qdrant backend; defaults to local mode)."""
    factory = _factory(BACKENDS, backend)
    if backend == "qdrant":
        return _qdrant(data_dir, dimension, qdrant)
    return factory(data_dir, dimension)


def _lancedb_records(data_dir: Path) -> RecordStore:
    from memoryd.storage.lancedb.records import LanceDBRecordStore

    # Same directory as the memories table: one LanceDB database per data dir.
    return LanceDBRecordStore(data_dir / "lancedb")


def _memory_records(data_dir: Path) -> RecordStore:
    from memoryd.storage.memory_records import InMemoryRecordStore

    return InMemoryRecordStore()


def _qdrant_records(data_dir: Path, settings: QdrantSettings | None = None) -> RecordStore:
    from memoryd.storage.qdrant import QdrantRecordStore

    return QdrantRecordStore.from_options(
        qdrant_options(settings or QdrantSettings(), data_dir, "records")
    )


#: Backend name -> factory(data_dir) for the document (non-vector) records.
RECORD_BACKENDS: dict[str, Callable[[Path], RecordStore]] = {
    "lancedb": _lancedb_records,
    "memory": _memory_records,
    "qdrant": _qdrant_records,
}


def build_record_store(
    backend: str, *, data_dir: Path, qdrant: QdrantSettings | None = None
) -> RecordStore:
    """A new, not yet opened, RecordStore of the named backend."""
    factory = _factory(RECORD_BACKENDS, backend)
    if backend == "qdrant":
        return _qdrant_records(data_dir, qdrant)
    return factory(data_dir)


def _factory(backends: Mapping[str, F], backend: str) -> F:
    """The factory of ``backend``; ValueError naming the known ones if there is none."""
    try:
        return backends[backend]
    except KeyError:
        known = ", ".join(sorted(backends))
        raise ValueError(f"unknown storage backend {backend!r}; known backends: {known}") from None
