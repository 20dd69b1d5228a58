"""asyncio helpers shared by the daemon's long-lived components."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    """Cancel a component's background task and wait until it has stopped (the
    component's close must not return while the task can still touch its state)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def abandon(task: asyncio.Task[Any] | None) -> None:
    """Cancel a task whose result is no longer wanted, without waiting for it; an
    exception it already ended with is retrieved, so asyncio does not log it as lost."""
    if task is None:
        return
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())


class Repeating:
    """A component's background work: ``round_`` every ``interval_s`` in a task of its
    own, from :meth:`start` until :meth:`close`. A round that raises is logged as
    ``failed`` and the next one retries (background work must never take the daemon
    down)."""

    def __init__(
        self,
        round_: Callable[[], Awaitable[None]],
        interval_s: float,
        *,
        name: str,
        failed: str,
    ) -> None:
        self._round = round_
        self._interval_s = interval_s
        self._name = name
        self._failed = failed
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the rounds; the first runs at once."""
        self._task = asyncio.create_task(self._run(), name=self._name)

    async def close(self) -> None:
        """Stop the rounds and wait until the one under way, if any, has stopped."""
        await cancel_and_wait(self._task)
        self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self._round()
            except Exception as exc:
                log.warning(self._failed, error=str(exc))
            await asyncio.sleep(self._interval_s)
