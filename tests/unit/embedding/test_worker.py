"""The model's one thread: a query goes before the documents queued for writes
(issue 20: under mixed load a Recall's query waited behind every write batch), and
writes are not starved."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.urgency import awaited_by_a_read
from memoryd.embedding.worker import URGENT_STREAK, InferenceThread


async def _busy_worker() -> tuple[
    InferenceThread, threading.Event, list[str], Callable[[str], str], asyncio.Future[str]
]:
    """A worker busy with a "blocker" job until ``gate`` is set; ``job`` records the
    order jobs run in ``order``."""
    worker = InferenceThread("test-embed", what="the test model")
    gate = threading.Event()
    order: list[str] = []

    def job(name: str) -> str:
        if name == "blocker":
            gate.wait(30)
        order.append(name)
        return name

    blocker = asyncio.ensure_future(worker.run(job, "blocker"))
    await asyncio.sleep(0.05)  # the thread is busy with it
    return worker, gate, order, job, blocker


async def test_urgent_jobs_go_first_without_starving_the_others() -> None:
    worker, gate, order, job, blocker = await _busy_worker()
    calls = [asyncio.ensure_future(worker.run(job, f"doc{i}")) for i in range(3)]
    await asyncio.sleep(0)
    calls += [
        asyncio.ensure_future(worker.run(job, f"query{i}", urgent=True))
        for i in range(URGENT_STREAK + 2)
    ]
    await asyncio.sleep(0.05)  # every job queued
    gate.set()
    assert await asyncio.gather(blocker, *calls)
    queries = [f"query{i}" for i in range(URGENT_STREAK + 2)]
    assert (
        order
        == [
            "blocker",
            *queries[:URGENT_STREAK],
            "doc0",  # a streak of urgent jobs lets one waiting document through
            *queries[URGENT_STREAK:],
            "doc1",
            "doc2",
        ]
    )
    await worker.close()


async def test_a_job_a_read_waits_for_goes_before_the_queued_documents() -> None:
    """A key's mirror embedded behind the answer, once a read waits for it
    (embedding/urgency.py), is as urgent as a query."""
    worker, gate, order, job, blocker = await _busy_worker()
    documents = [asyncio.ensure_future(worker.run(job, f"doc{i}")) for i in range(3)]
    with awaited_by_a_read():
        mirror = asyncio.ensure_future(worker.run(job, "mirror"))
    await asyncio.sleep(0.05)  # every job queued
    gate.set()
    await asyncio.gather(blocker, mirror, *documents)
    assert order == ["blocker", "mirror", "doc0", "doc1", "doc2"]
    await worker.close()


async def test_close_waits_for_the_running_job_and_fails_the_queued() -> None:
    worker = InferenceThread("test-embed", what="the test model")
    gate = threading.Event()
    running = asyncio.ensure_future(worker.run(lambda _: gate.wait(30), None))
    await asyncio.sleep(0.05)
    queued = asyncio.ensure_future(worker.run(lambda x: x, 1))
    await asyncio.sleep(0.05)
    closing = asyncio.ensure_future(worker.close())
    await asyncio.sleep(0.05)
    assert not closing.done()  # the running job finishes first
    gate.set()
    await closing
    assert await running is True
    with pytest.raises(EmbeddingError, match="the test model is closed"):
        await queued
    with pytest.raises(EmbeddingError, match="closed"):
        await worker.run(lambda x: x, 2)
    await worker.close()  # idempotent
