"""The data directory's lock: one daemon (or offline `memoryd wal` command) at a time;
the daemon's identity among replicas, kept there; the error a start refuses with
when the directory's store is damaged.

Apart from app.py so the command line takes it without importing the daemon's
modules (LanceDB, the model, gRPC).
"""

from __future__ import annotations

import fcntl
import os
import socket
import uuid
from pathlib import Path
from typing import IO

#: The file in the data directory holding the daemon's replica id.
REPLICA_ID_FILE = "replica-id"


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


def replica_id(data_dir: Path) -> str:
    """This daemon's identity among the replicas of a shared store, the same across its
    restarts: what a replica restarted after a crash holds (a partition's write lease)
    is still its own, and not waited out. Call it holding the directory's lock (two
    live daemons never share an id). The id kept in the directory goes with the host
    name and the directory's path, so a copy of the directory used by another pod or
    at another path is another replica."""
    path = data_dir / REPLICA_ID_FILE
    try:
        kept = uuid.UUID(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        kept = uuid.uuid4()
        fresh = path.with_suffix(".tmp")
        fresh.write_text(f"{kept}\n")
        os.replace(fresh, path)
    place = f"{socket.gethostname()}|{data_dir.resolve()}"
    return uuid.uuid5(kept, place).hex
