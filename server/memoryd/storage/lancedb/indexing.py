"""When to fold newly written rows into LanceDB's indexes, off the request path.

Rows the indexes do not cover yet stay correct to query (LanceDB scans them) but cost
more per query, about 1 ms per 3,000 rows for full text. ``optimize()`` folds them in
(and compacts small fragments); it is run in the background once ``rows`` rows were
written since the last run, or once writes pause for ``idle_s`` seconds with any
rows still unindexed, never twice at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger(__name__)


class IndexRefresher:
    def __init__(
        self, optimize: Callable[[], Awaitable[None]], *, rows: int, idle_s: float
    ) -> None:
        self._optimize = optimize
        self.rows = rows
        self.idle_s = idle_s
        self.unindexed = 0
        self.task: asyncio.Task[None] | None = None
        self._idle: asyncio.TimerHandle | None = None

    def wrote(self, rows: int) -> None:
        """Called after each committed write of ``rows`` rows."""
        self.unindexed += rows
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self.unindexed >= self.rows:
            self._start()
        elif self.unindexed and self.idle_s > 0:
            self._idle = asyncio.get_running_loop().call_later(self.idle_s, self._start)

    def _start(self) -> None:
        self._idle = None
        if not self.unindexed or (self.task is not None and not self.task.done()):
            return
        self.unindexed = 0
        self.task = asyncio.create_task(self._run(), name="lancedb-index-refresh")

    async def _run(self) -> None:
        try:
            await self._optimize()
        except Exception as exc:  # reads stay correct; the next write or pause retries
            log.warning("background index refresh failed", error=str(exc))
        if self.unindexed and self.idle_s > 0 and self._idle is None:
            # Rows written while this ran: pick them up after the next pause.
            self._idle = asyncio.get_running_loop().call_later(self.idle_s, self._start)

    async def close(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        task, self.task = self.task, None
        if task is not None:
            # optimize() cannot be interrupted midway; let it finish.
            await asyncio.wait([task])
