"""A store whose reads and changes of a partition wait for a fence first.

Where key mirrors are embedded behind the key write's answer
(service/keyed/pending.py), a partition's memories lag its key writes until the mirror
pass catches up. Every service that reads or changes memories (Recall, Get, List,
Update, Forget, snapshots, lifecycle reads and rewrites, deduplication) is given its
store through this layer, so a written key is read as it was written on every path,
present and future, rather than on the paths that remembered to wait. Blind writes
(``upsert``: Remember's new memories) and access statistics do not wait: they read
nothing. The mirror pass and the keyed service that owns it hold the store beneath,
or the pass would wait for itself.

A block that has settled a partition and holds what keeps it settled (the keyed
service's write lock: :meth:`KeyedMemoryService.exclusive`) marks it
:func:`settled_here`; its calls pass the fence, which would otherwise wait for a pass
that needs that very lock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from memoryd.context_vars import bound
from memoryd.domain.models import Partition
from memoryd.storage.base import Store
from memoryd.storage.delegating import DelegatingStore

T = TypeVar("T")

#: Waits until a partition's memories hold every write answered before it was called.
Fence = Callable[[Partition], Awaitable[None]]

#: The store operations that read or change what a partition holds.
FENCED = frozenset(
    {
        "get",
        "list",
        "count",
        "search",
        "search_many",
        "text_search",
        "text_statistics",
        "find_by_content",
        "delete",
        "upsert_if",
    }
)

_settled: ContextVar[frozenset[Partition]] = ContextVar("fence_settled", default=frozenset())


@contextmanager
def settled_here(partition: Partition) -> Iterator[None]:
    """Within the block (and the tasks it starts), ``partition``'s calls pass the
    fence: the caller has settled it and holds what keeps it so."""
    with bound(_settled, _settled.get() | {partition}):
        yield


class FencedStore(DelegatingStore):
    """``inner`` with every read or change of one partition awaiting ``fence`` first."""

    def __init__(self, inner: Store, fence: Fence) -> None:
        super().__init__(inner)
        self._fence = fence

    async def through(
        self, operation: str, call: Awaitable[T], partition: Partition | None = None
    ) -> T:
        if partition is not None and operation in FENCED and partition not in _settled.get():
            try:
                await self._fence(partition)
            except BaseException:
                if isinstance(call, Coroutine):  # never started: not "never awaited"
                    call.close()
                raise
        return await call


def fenced(store: Store, fence: Fence | None) -> Store:
    """``store`` behind ``fence`` (``store`` itself where there is none)."""
    return store if fence is None else FencedStore(store, fence)
