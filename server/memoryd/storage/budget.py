"""The hot cache's default memory budget, from the container's memory limit.

A fixed 1 GB default does not fit a pod limited to 1 GiB: the process itself (Python,
LanceDB, the model) takes ~200-400 MB before any cache, and the kernel kills a pod
that crosses its limit. Like a JVM sizing its heap from the cgroup, the default is a
third of the memory limit when there is one, 1 GB when there is none; an explicit
``storage.hot_cache.memory_budget_mb`` always wins.
"""

from __future__ import annotations

from pathlib import Path

#: Without a memory limit.
UNLIMITED_DEFAULT_MB = 1024
#: The budget's share of a memory limit (the rest: the process, LanceDB's own memory).
LIMIT_SHARE = 3
MIN_BUDGET_MB = 32
#: cgroup v1 reports "no limit" as a huge number (2^63 rounded to the page size).
_NO_LIMIT_ABOVE = 2**60

_V2 = "memory.max"
_V1 = "memory/memory.limit_in_bytes"


def cgroup_memory_limit(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """This process's cgroup memory limit in bytes (v2, else v1); None when unlimited
    or unknown."""
    for name in (_V2, _V1):
        try:
            text = (root / name).read_text().strip()
        except OSError:
            continue
        if text == "max":
            return None
        try:
            value = int(text)
        except ValueError:
            continue
        return value if 0 < value < _NO_LIMIT_ABOVE else None
    return None


def default_budget_mb(limit_bytes: int | None) -> int:
    if limit_bytes is None:
        return UNLIMITED_DEFAULT_MB
    return max(MIN_BUDGET_MB, limit_bytes // LIMIT_SHARE // 2**20)
