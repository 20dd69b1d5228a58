"""Which memories the log's conditional writes are checking, and what wrote them since.

``DurableStore.upsert_if`` compares the versions it reads (the log's pending writes
laid over the store) with the ones expected, then logs its write. Reading awaits the
store, so another write of the same memory can be logged meanwhile, after the read
and before the write. Every write through the log's faces says so here first
(synchronously, right before it is logged), and a check that sees its ids touched
reports them as moved: the caller reads again. From the end of the check to the log
append nothing awaits, so nothing gets in between there. No lock is held across the
log's fsync: concurrent writes of other memories are not held up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from memoryd.domain.models import Partition


@dataclass(eq=False, slots=True)
class Watch:
    """One check in progress: the ids written since it started."""

    touched: set[str] = field(default_factory=set)


class Watches:
    def __init__(self) -> None:
        self._by_id: dict[tuple[Partition, str], list[Watch]] = {}

    @contextmanager
    def watch(self, partition: Partition, ids: Sequence[str]) -> Iterator[Watch]:
        """Watch ``ids`` while the block runs (a check: read, compare)."""
        watch = Watch()
        keys = [(partition, i) for i in dict.fromkeys(ids)]
        for key in keys:
            self._by_id.setdefault(key, []).append(watch)
        try:
            yield watch
        finally:
            for key in keys:
                watchers = self._by_id[key]
                watchers.remove(watch)
                if not watchers:
                    del self._by_id[key]

    def wrote(self, partition: Partition, ids: Sequence[str]) -> None:
        """A write of ``ids`` is about to be logged: every check watching one of them
        is told."""
        if not self._by_id:
            return
        for memory_id in ids:
            for watch in self._by_id.get((partition, memory_id), ()):
                watch.touched.add(memory_id)
