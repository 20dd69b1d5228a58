"""Making the store's files durable: LanceDB does not fsync its own files, so a
checkpoint syncs the file system they are on first (``syncfs``, ``sync`` without it),
then lets the log drop what it covers."""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from memoryd.durability.wal import WriteAheadLog
from memoryd.security.audit import AuditLog


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


def checkpoint(
    wal: WriteAheadLog,
    target: int,
    store_dir: Path,
    store_versions: Callable[[], Mapping[str, int]] | None,
    audit: AuditLog | None,
) -> None:
    """Record ``target`` (every entry up to it applied) as the log's checkpoint once
    the store's files and the audit events those entries carry are durable, and drop
    the log's segments below it. OSError: no checkpoint now (the log keeps them)."""
    # Read before the sync: these versions hold every write up to ``target`` (it was
    # applied before) and the sync makes every file of them durable.
    versions = store_versions() if store_versions is not None else None
    sync_tree(store_dir)
    if audit is not None:
        audit.sync()  # the events of the entries up to ``target``, before they go
    wal.write_checkpoint(target, versions)
    wal.truncate(target)
