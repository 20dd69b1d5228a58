"""Write-behind access statistics: reads never cause a synchronous store write.

Recall and get record hits here; a background task flushes the accumulated counts
per partition in one ``Store.record_access`` call, by interval or when enough are
pending, and once more on shutdown. Statistics are best effort: a failed flush is
logged and dropped, never retried on the request path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from datetime import datetime

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.models import AccessUpdate, Partition
from memoryd.storage.base import Store

log = structlog.get_logger(__name__)

#: Seconds the flush at shutdown may take, unless it is at most SMALL_FLUSH memories.
FINAL_FLUSH_S = 0.3
SMALL_FLUSH = 256


class AccessStatsBuffer:
    def __init__(self, store: Store, *, interval_s: float, max_pending: int) -> None:
        self._store = store
        self._interval_s = interval_s
        self._max_pending = max_pending
        self._pending: dict[Partition, dict[str, AccessUpdate]] = {}
        self._count = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="access-stats")

    def record(self, partition: Partition, ids: Iterable[str], at: datetime) -> None:
        updates = self._pending.setdefault(partition, {})
        for memory_id in ids:
            previous = updates.get(memory_id)
            if previous is None:
                updates[memory_id] = AccessUpdate(1, at)
                self._count += 1
            else:
                updates[memory_id] = AccessUpdate(
                    previous.count + 1, max(previous.last_accessed_at, at)
                )
        if self._count >= self._max_pending:
            self._wake.set()

    async def flush(self) -> None:
        pending, self._pending, self._count = self._pending, {}, 0
        for partition, updates in pending.items():
            try:
                await self._store.record_access(partition, updates)
            except Exception:
                log.warning("access statistics flush failed", exc_info=True, dropped=len(updates))

    async def close(self, budget_s: float = FINAL_FLUSH_S) -> None:
        """Stop with a last flush: a small one (one commit's worth) in full, a larger
        one for ``budget_s`` at most (statistics are best effort, and a flush rewrites
        whole rows: under load it took seconds of a shutdown)."""
        await cancel_and_wait(self._task)
        self._task = None
        left = self._count
        try:
            async with asyncio.timeout(None if left <= SMALL_FLUSH else budget_s):
                await self.flush()
        except TimeoutError:
            log.warning("access statistics not all flushed at shutdown", pending=left)

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._interval_s)
            self._wake.clear()
            await self.flush()
