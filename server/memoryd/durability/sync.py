"""Making the store's files durable: LanceDB does not fsync its own files, so a
checkpoint syncs the file system they are on first (``syncfs``, ``sync`` without it)."""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Callable
from pathlib import Path


def _libc_syncfs() -> Callable[[int], int] | None:
    with contextlib.suppress(OSError, AttributeError):
        fn: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
        return fn
    return None


_SYNCFS = _libc_syncfs()


def sync_tree(path: Path) -> None:
    """Flush everything written under ``path`` (its file system) to disk."""
    path.mkdir(parents=True, exist_ok=True)
    if _SYNCFS is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _SYNCFS(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
    finally:
        os.close(fd)
