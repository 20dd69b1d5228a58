"""What the keyed service tells of its writes: the default-read index and the file
mirror derive their state from a partition's keys through this protocol."""

from __future__ import annotations

from typing import Protocol

from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Partition


class KeyObserver(Protocol):
    """Keeps something derived from a partition's keys (an index, a file mirror).

    Called under the partition's write lock, after the store commit: writes arrive
    in version order. A failure is logged and does not fail the write: an observer
    must be able to rebuild itself from the store.
    """

    async def key_written(self, partition: Partition, entry: KeyEntry) -> None:
        """One committed write (a value or a tombstone)."""

    async def keys_rewritten(self, partition: Partition) -> None:
        """Lifecycle operations rewrote the partition's key records (import, reset,
        compaction): rebuild from the store."""
