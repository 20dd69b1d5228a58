"""The data directory's lock: one daemon (or offline `memoryd wal` command) at a time;
the error a start refuses with when the directory's store is damaged.

Apart from app.py so the command line takes it without importing the daemon's
modules (LanceDB, the model, gRPC).
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO


class DataDirLocked(RuntimeError):
    pass


class DataDirDamaged(RuntimeError):
    """The store's files are damaged beyond what the write-ahead log can repair: the
    daemon refuses to start rather than lose acknowledged writes."""


def lock_data_dir(data_dir: Path) -> IO[bytes]:
    """One daemon per data dir: LanceDB tables must have a single writer."""
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / ".lock", "wb")  # noqa: SIM115 - held for the daemon's lifetime
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise DataDirLocked(f"another memoryd is using {data_dir}") from None
    return handle
