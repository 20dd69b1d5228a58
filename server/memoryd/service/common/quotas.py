"""Stored-data quotas per partition (memories, keys) and per session (messages).

Exceeding one is RESOURCE_EXHAUSTED naming the quota. Memory counts are cached per
partition and bumped on every admitted write, so a write far below its quota does not
count the store; close to the quota (or when the cache is stale) the store is counted
exactly. Deletes only make the cached number too high, which errs towards counting.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from memoryd.domain.errors import ResourceExhausted, Unavailable
from memoryd.domain.models import MemoryFilter, Partition
from memoryd.security.settings import QuotaSettings
from memoryd.storage.base import Store

T = TypeVar("T")
#: Cached counts are trusted up to this fraction of the quota.
_TRUST_FRACTION = 0.9
_STALE_AFTER_S = 30.0
_CACHE_MAX = 10_000
_EVERYTHING = MemoryFilter(include_archived=True)


@dataclass(slots=True)
class _Count:
    value: int
    at: float
    #: The tenure of the partition's lease it was counted under (a shared store).
    tenure: int | None = None


class Quotas:
    def __init__(self, settings: QuotaSettings, store: Store) -> None:
        self._settings = settings
        self._store = store
        self._counts: dict[Partition, _Count] = {}
        self._in_flight: dict[Partition, int] = {}

    async def admit_memories(
        self,
        partition: Partition,
        adding: int,
        write: Callable[[], Awaitable[T]],
        *,
        tenure: int | None = None,
    ) -> T:
        """Run ``write`` (which stores ``adding`` new memories) if the quota allows it.
        ``tenure``: the partition's lease is held (service/common/leases.py, a shared
        store) in that tenure, so a count taken in it stays exact through it."""
        limit = self._settings.for_tenant(partition.tenant_id).max_memories_per_partition or 0
        if limit:
            await self._check(partition, adding, limit, tenure)
        self._in_flight[partition] = self._in_flight.get(partition, 0) + adding
        try:
            result = await write()
        finally:
            # Another write of the partition may have ended meanwhile and, with
            # nothing left in flight, dropped the entry (writes that add 0 overlap).
            left = self._in_flight.get(partition, 0) - adding
            if left > 0:
                self._in_flight[partition] = left
            else:
                self._in_flight.pop(partition, None)
        cached = self._counts.get(partition)
        if cached is not None:
            cached.value += adding
        return result

    async def _check(
        self, partition: Partition, adding: int, limit: int, tenure: int | None
    ) -> None:
        cached = self._counts.get(partition)
        now = time.monotonic()
        pending = self._in_flight.get(partition, 0)
        if (
            cached is None
            # Other replicas add memories too: count the store again unless this
            # count was taken under the lease this write holds (no other replica
            # has added one since; the count is exact).
            or (self._store.capabilities.shared and (tenure is None or cached.tenure != tenure))
            or now - cached.at > _STALE_AFTER_S
            or cached.value + pending + adding > limit * _TRUST_FRACTION
        ):
            try:
                exact = await self._store.count(partition, _EVERYTHING)
            except Unavailable:
                # The store cannot count (an outage: the write goes to the log). The
                # last count, however old, still bounds the partition; without one
                # the write is let through rather than refused for the outage.
                if cached is None:
                    return
            else:
                if len(self._counts) >= _CACHE_MAX:
                    self._counts.clear()
                cached = self._counts[partition] = _Count(exact, now, tenure)
            pending = self._in_flight.get(partition, 0)
        if cached.value + pending + adding > limit:
            raise ResourceExhausted(
                # No stored count in the message: it would include memories above the
                # caller's clearance.
                f"quota quotas.max_memories_per_partition ({limit}) reached for this agent"
            )

    def keys_limit(self, tenant_id: str) -> int:
        """quotas.max_keys_per_partition for the tenant; 0: no limit."""
        return self._settings.for_tenant(tenant_id).max_keys_per_partition or 0

    def check_keys(self, tenant_id: str, current: int, adding: int) -> None:
        """For the keyed-memory service: raise when a partition would hold too many keys."""
        limit = self._settings.for_tenant(tenant_id).max_keys_per_partition or 0
        if limit and current + adding > limit:
            raise ResourceExhausted(
                # No stored count in the message: it would include keys above the
                # caller's clearance.
                f"quota quotas.max_keys_per_partition ({limit}) reached for this agent"
            )

    def check_session_messages(self, tenant_id: str, current: int, adding: int) -> None:
        """For the session service: raise when a session would hold too many messages."""
        limit = self._settings.for_tenant(tenant_id).max_session_messages or 0
        if limit and current + adding > limit:
            raise ResourceExhausted(
                f"quota quotas.max_session_messages ({limit}) reached: the session holds "
                f"{current} messages and this request adds {adding}"
            )
