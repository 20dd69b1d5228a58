"""Notices when a file is replaced or rewritten, by polling its ``stat``.

Kubernetes updates a mounted Secret by swapping the ``..data`` symlink its files point
through: nothing writes to the mounted path itself, so inotify on it stays silent,
while ``stat`` (which follows the link) sees a new inode. Polling every few seconds
costs one system call.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from memoryd.aio import cancel_and_wait

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Signature:
    inode: int
    size: int
    mtime_ns: int


def signature(path: Path) -> Signature | None:
    """What identifies this version of the file; None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Signature(st.st_ino, st.st_size, st.st_mtime_ns)


class FileWatcher:
    """Calls ``on_change`` when ``path``'s signature differs from the last one seen
    (at start, at the previous change, or at :meth:`mark`)."""

    def __init__(self, path: Path, interval_s: float, on_change: Callable[[], None]) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.path = path
        self.interval_s = interval_s
        self._on_change = on_change
        self._seen = signature(path)
        self._task: asyncio.Task[None] | None = None

    def mark(self) -> None:
        """The file as it is now counts as seen (whoever reloads it calls this first)."""
        self._seen = signature(self.path)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"watch {self.path.name}")

    async def close(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            current = signature(self.path)
            if current is None or current == self._seen:
                continue  # a missing file (mid-swap) is not a change to act on
            log.info("file changed; reloading", path=str(self.path))
            self._seen = current  # before the callback, which may mark a newer one
            try:
                self._on_change()
            except Exception:
                log.exception("reload after a file change failed", path=str(self.path))
