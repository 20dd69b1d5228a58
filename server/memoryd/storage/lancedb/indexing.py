"""When to fold newly written rows into LanceDB's indexes, off the request path.

Rows the indexes do not cover yet stay correct to query (LanceDB scans them) but cost
more per query, about 1 ms per 3,000 rows for full text. ``optimize()`` folds them in
(and compacts small fragments); it is run in the background once ``rows`` rows were
written since the last run, or ``commits`` commits were made, or once writes pause for
``idle_s`` seconds after any, never twice at a time.

The commit count matters for a trickle of single writes: each commit adds a fragment
(or a deletion file), and LanceDB's commits slow down as fragments pile up (measured
with one-row appends: 2.7 ms each at 100 fragments, 7.7 at 2,000, 13.6 at 3,000, and
the optimize() that finally folded those 3,000 took 15 s). Folding every 256 costs
~0.3-0.4 s in the background (at 20k and at 200k rows alike).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

from memoryd.aio import cancel_and_wait

log = structlog.get_logger(__name__)


#: Commits between runs at most (see the module docstring).
MAX_COMMITS = 256
#: Seconds close waits for a refresh under way before abandoning it.
CLOSE_WAIT_S = 0.3
#: optimize() runs once 1/REFRESH_FRACTION of the table was written since the last run
#: (at least ``index_refresh_rows``). A run costs ~11 ms per 1,000 rows of the *whole*
#: table (LanceDB compacts every fragment below its 1M-row target, so it rewrites the
#: table each time; without any index it grows the same way), so the interval grows
#: with the table: at a quarter, each written row pays for ~5 rows rewritten, at a
#: tenth ~11 (measured: a 20k-row bulk load ran 13% faster without the refreshes).
#: Until a run, at most a fifth of the rows are scanned unindexed, and only by reads
#: the hot cache does not answer; a pause in writes (``index_refresh_idle_s``) folds
#: them in.
REFRESH_FRACTION = 4


class IndexRefresher:
    def __init__(
        self,
        optimize: Callable[[], Awaitable[object]],
        *,
        rows: int,
        idle_s: float,
        commits: int = MAX_COMMITS,
    ) -> None:
        self._optimize = optimize
        self.rows = rows
        self.idle_s = idle_s
        self.max_commits = commits
        self.unindexed = 0
        self.commits = 0
        self.task: asyncio.Task[None] | None = None
        self._idle: asyncio.TimerHandle | None = None

    def wrote(self, rows: int) -> None:
        """Called after each commit, with the rows it wrote (0 for a delete)."""
        self.unindexed += rows
        self.commits += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self.unindexed >= self.rows or self.commits >= self.max_commits:
            self._start()
        elif self.idle_s > 0:
            self._idle = asyncio.get_running_loop().call_later(self.idle_s, self._start)

    def _start(self) -> None:
        self._idle = None
        if not self.commits or (self.task is not None and not self.task.done()):
            return
        self.unindexed = self.commits = 0
        self.task = asyncio.create_task(self._run(), name="lancedb-index-refresh")

    async def _run(self) -> None:
        try:
            await self._optimize()
        except Exception as exc:  # reads stay correct; the next write or pause retries
            log.warning("background index refresh failed", error=str(exc))
        if self.commits and self.idle_s > 0 and self._idle is None:
            # Commits made while this ran: pick them up after the next pause.
            self._idle = asyncio.get_running_loop().call_later(self.idle_s, self._start)

    async def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        task, self.task = self.task, None
        if task is not None:
            # An optimize under way gets a moment, then is abandoned: each of its
            # steps is its own atomic commit, and a shutdown must not wait for a
            # compaction of the whole table.
            await asyncio.wait([task], timeout=wait_s)
            if not task.done():
                log.warning("shutdown: background index refresh abandoned")
                await cancel_and_wait(task)
