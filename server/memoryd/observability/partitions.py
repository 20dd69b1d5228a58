"""The opt-in memories-per-partition gauge: a background task counts every partition's
live memories every ``interval_s`` and hands the counts to :class:`PartitionGauge`,
which keeps only the largest partitions as series (the rest summed).

Counting runs on the event loop through the store, never in the scrape thread, so a
scrape only reads the last snapshot. It costs one ``count`` per partition per
interval, which is why it is off by default (``metrics.per_partition``).
"""

from __future__ import annotations

from memoryd.aio import Repeating
from memoryd.domain.models import MemoryFilter, Partition
from memoryd.observability.metrics import PartitionGauge
from memoryd.storage.base import Store

_LIVE = MemoryFilter()


class PartitionCounter:
    def __init__(
        self, store: Store, gauge: PartitionGauge, *, interval_s: float, max_series: int
    ) -> None:
        self._store = store
        self._gauge = gauge
        self._max_series = max_series
        self._rounds = Repeating(
            self.refresh,
            interval_s,
            name="partition-counter",
            failed="counting memories per partition failed",
        )

    def start(self) -> None:
        self._rounds.start()

    async def refresh(self) -> None:
        counts: dict[Partition, int] = {}
        for partition in await self._store.list_partitions():
            counts[partition] = await self._store.count(partition, _LIVE)
        self._gauge.update(counts, self._max_series)

    async def close(self) -> None:
        await self._rounds.close()
