"""Which partitions the store behind the hot cache holds: a partition it never held
and nobody wrote since is empty, so the cache loads it without a scan (a new agent's
first write then reads nothing from the store: issue 31)."""

from __future__ import annotations

import structlog

from memoryd.domain.models import Partition
from memoryd.storage.base import Store

log = structlog.get_logger(__name__)


class StoredPartitions:
    """The partitions listed once at open, and every one written since (marked before
    the write reaches the store, so a load never misses one in flight)."""

    def __init__(self) -> None:
        #: None until the listing is done: until then nothing is known empty.
        self._listed: set[Partition] | None = None
        self._written: set[Partition] = set()

    async def list(self, store: Store) -> None:
        try:
            self._listed = set(await store.list_partitions())
        except Exception:
            log.warning("hot cache: partitions not listed; every load scans", exc_info=True)

    def wrote(self, partition: Partition) -> None:
        self._written.add(partition)

    def known_empty(self, partition: Partition) -> bool:
        return (
            self._listed is not None
            and partition not in self._listed
            and partition not in self._written
        )
