"""Per-key asyncio locks for read-modify-write of one record in this process.

A replicated deployment needs conditional writes in the store instead (DESIGN §9);
within one daemon these locks keep concurrent merges, appends and etag checks of the
same record from losing each other's updates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager


class KeyedLocks:
    """One lock per key, forgotten as soon as nobody holds or awaits it."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._users: dict[Hashable, int] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key]
                del self._locks[key]

    def users(self, key: Hashable) -> int:
        """Tasks holding or awaiting the lock of ``key``."""
        return self._users.get(key, 0)

    def busy(self, key: Hashable) -> bool:
        return key in self._users

    def __len__(self) -> int:
        return len(self._locks)
