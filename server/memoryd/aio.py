"""asyncio helpers shared by the daemon's long-lived components."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


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
