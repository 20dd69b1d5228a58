"""Coalesces concurrent writes into few store commits (LanceDB commits are slow).

Callers await ``submit``; a single background task takes everything queued, groups it
by partition and writes each group with one ``Store.upsert``, the groups side by side
(behind the write-ahead log they share one group fsync). While one commit runs, new
writes accumulate for the next: throughput grows with concurrency and a lone write
pays for one commit only. Each caller's audit admission goes with its memories
(security/admission.py): the log entry of its group carries it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.errors import StoreError, Unavailable
from memoryd.domain.models import Memory, Partition
from memoryd.observability.tracing import NO_TRACING, WRITE_BATCH, Tracing
from memoryd.security.admission import Admission, riding, uncarried
from memoryd.storage.base import Store

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _Pending:
    partition: Partition
    memories: Sequence[Memory]
    #: The caller's trace context (tracing on): a batch of its writes alone continues
    #: it, a batch of several calls' writes links to it.
    trace: object | None = None
    #: The caller's audit admissions, for the log entry that carries its memories.
    admissions: list[Admission] = field(default_factory=list)
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class WriteBatcher:
    def __init__(self, store: Store, *, max_batch: int, tracing: Tracing = NO_TRACING) -> None:
        self._store = store
        self._tracing = tracing
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="write-batcher")

    async def submit(self, partition: Partition, memories: Sequence[Memory]) -> None:
        """Returns once the memories are committed to the store."""
        if self._closing or self._task is None:
            raise Unavailable("the server is shutting down; write not accepted")
        pending = _Pending(partition, memories, self._tracing.capture(), uncarried())
        self._queue.put_nowait(pending)
        await asyncio.shield(pending.done)

    async def close(self) -> None:
        """Commit everything already accepted, then stop."""
        self._closing = True
        if self._task is None:
            return
        await self._queue.join()
        await cancel_and_wait(self._task)
        self._task = None

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            size = len(batch[0].memories)
            while size < self._max_batch and not self._queue.empty():
                item = self._queue.get_nowait()
                batch.append(item)
                size += len(item.memories)
            try:
                with self._traced(batch):
                    await self._commit(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _traced(self, batch: list[_Pending]) -> AbstractContextManager[Any]:
        """One call's writes: its trace continues (the log's fsync shows under it);
        several calls': a span of the batch's own, linked to each call."""
        if len(batch) == 1:
            return self._tracing.resumed(batch[0].trace)
        contexts = [p.trace for p in batch if p.trace is not None]
        return self._tracing.span(WRITE_BATCH, {"memoryd.write.calls": len(batch)}, links=contexts)

    async def _commit(self, batch: list[_Pending]) -> None:
        groups: dict[Partition, list[_Pending]] = {}
        for item in batch:
            groups.setdefault(item.partition, []).append(item)
        await asyncio.gather(*(self._commit_group(p, items) for p, items in groups.items()))

    async def _commit_group(self, partition: Partition, items: list[_Pending]) -> None:
        memories = [m for item in items for m in item.memories]
        error: BaseException | None = None
        try:
            with riding([a for item in items for a in item.admissions]):
                await self._store.upsert(partition, memories)
        except (StoreError, Unavailable) as exc:  # e.g. the write-ahead log's disk is full
            error = exc
        except Exception as exc:
            log.exception("store upsert failed", records=len(memories))
            error = StoreError(f"store write failed: {type(exc).__name__}")
        for item in items:
            if item.done.done():
                continue
            if error is None:
                item.done.set_result(None)
            else:
                item.done.set_exception(error)
