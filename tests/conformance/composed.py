"""The conformance suite on the composed repository (durability/repository.py).

Each ``<backend>+repository`` variant wraps a backend the way the daemon does, and
both the store and the record suites run on it:

- ``lancedb+repository``: the daemon's default chain, write-ahead log (in the
  test's scratch directory, applying behind as on LanceDB) -> metrics -> hot cache
  -> LanceDB;
- ``memory+repository``: log -> metrics -> an in-process store (the chain every
  single-writer store without a hot cache gets: Qdrant local mode and Edge, and a
  Qdrant server that one replica owns);
- ``qdrant-server-shared+repository``: a replica's chain over a shared server,
  WriteThrough (no log) -> metrics -> Qdrant.

- ``qdrant-local+repository``, ``qdrant-edge+repository`` and
  ``qdrant-server+repository`` (a server one replica owns): the same chain as
  ``memory+repository`` over each of them.

Every backend runs bare in the same suite too: the contract holds at each end.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.durability.repository import (
    HotCacheOptions,
    LogOptions,
    Repository,
    compose_repository,
)
from memoryd.observability.metrics import Metrics
from memoryd.resilience.degradation import ComponentStates
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

#: What the daemon applies behind on a group-commit store (wiring.APPLY_BEHIND_EMBEDDED).
APPLY_BEHIND = 256


def log_options(root: Path, store: Store) -> LogOptions:
    return LogOptions(
        wal_dir=root / "wal",
        store_dir=root,
        segment_bytes=2**20,
        checkpoint_interval_s=0.05,
        apply_behind=APPLY_BEHIND if store.capabilities.group_commit else 0,
        apply_delay_s=0.0,
    )


@dataclass
class Composed:
    """One opened composition; ``close`` closes it all in reverse (log, then stores)."""

    repository: Repository
    stack: AsyncExitStack = field(repr=False)

    async def close(self) -> None:
        await self.stack.aclose()


async def compose(root: Path, store: Store, records: RecordStore, dimension: int) -> Composed:
    """``store`` and ``records`` composed as app.py composes them, opened."""
    stack = AsyncExitStack()
    try:
        repository = await compose_repository(
            store,
            records,
            dimension=dimension,
            stack=stack,
            states=ComponentStates(),
            wal=None if store.capabilities.shared else log_options(root, store),
            retry_max_s=0.2,
            hot_cache=HotCacheOptions(64 * 2**20) if store.capabilities.wants_hot_cache else None,
            metrics=Metrics(process_metrics=False),
        )
    except BaseException:
        await stack.aclose()
        raise
    return Composed(repository, stack)
