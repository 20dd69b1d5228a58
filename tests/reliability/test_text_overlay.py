"""Full-text search lays the log's pending writes over the store's answer instead of
waiting for their apply (issue 20, finding 9): a hybrid Recall under mixed load waited
for the apply lock and the table's commits queued behind other agents' writes (p99
6.6-11.5 s against 0.5 s reading alone). A pending memory is scored with the store's
own term weights, recovered from its hits (durability/text_overlay.py); these tests
compare that with the exact scores the store gives once the write is applied."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from memoryd.domain.models import Memory, MemoryFilter, Partition
from memoryd.durability.facades import DurableStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.reliability.support import open_core, until
from tests.reliability.test_apply_behind import DIM, HeldStore, _memory

P = Partition("t", "a")
EVERYTHING = MemoryFilter()
WORDS = [
    "coffee",
    "tea",
    "meeting",
    "project",
    "deadline",
    "report",
    "dentist",
    "marathon",
    "lisbon",
    "berlin",
    "garden",
    "guitar",
    "piano",
    "recipe",
    "pasta",
    "budget",
    "invoice",
    "laptop",
    "python",
    "release",
    "sprint",
    "review",
    "weekend",
    "hiking",
    "camera",
    "birthday",
    "gift",
    "train",
    "flight",
    "hotel",
    "museum",
    "painting",
]
STORED = 400
PENDING = {
    "p1": "the zebracorn ticket ZX-4471 is blocked",  # a term no stored memory holds
    "p2": "coffee with the team after the sprint review",  # common-ish words
    "p3": "marathon training plan for lisbon in march",
}
QUERIES = [
    "zebracorn ticket",
    "sprint review coffee",
    "lisbon marathon",
    "coffee",
    "hotel flight berlin",
    "what about the zebracorn and the marathon",
]


def _corpus() -> list[Memory]:
    rng = random.Random(20)
    return [
        _memory(i, " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))))
        for i in range(100, 100 + STORED)
    ]


async def _setup(tmp: Path) -> tuple[HeldStore, DurableStore, list[Memory]]:
    inner = InMemoryStore(DIM)
    await inner.open()
    held = HeldStore(inner)
    await inner.upsert(P, _corpus())
    core = await open_core(tmp, held, InMemoryRecordStore(), apply_behind=64)
    store = DurableStore(core, dimension=DIM)
    pending = [_memory(i + 1, text) for i, text in enumerate(PENDING.values())]
    held.hold()  # answered from the log, not applied
    for m in pending:
        await store.upsert(P, [m])
    return held, store, pending


@pytest.mark.parametrize("query", QUERIES)
async def test_pending_memories_rank_as_they_will_once_applied(tmp_path: Path, query: str) -> None:
    held, store, _ = await _setup(tmp_path)
    async with asyncio.timeout(30):  # no waiting for the held apply
        overlaid = await store.text_search(P, query, EVERYTHING, 10)
    held.release()
    await until(lambda: not store.core.pending)
    exact = await held.inner.text_search(P, query, EVERYTHING, 10)
    assert [h.memory.id for h in overlaid] == [h.memory.id for h in exact]
    scores = {h.memory.id: h.score for h in exact}
    for hit in overlaid:
        assert hit.score == pytest.approx(scores[hit.memory.id], rel=0.05), hit.memory.id
        assert hit.informative == next(h.informative for h in exact if h.memory.id == hit.memory.id)
    await store.core.close()


async def test_a_rewrite_or_delete_in_the_log_is_laid_over_the_hits(tmp_path: Path) -> None:
    held, store, _ = await _setup(tmp_path)
    stored = await held.inner.text_search(P, "museum painting", EVERYTHING, 3)
    first, second = stored[0].memory.id, stored[1].memory.id
    rewritten = _memory(int(first[1:]), "nothing about art any more")
    await store.upsert(P, [rewritten])
    await store.delete(P, [second])
    hits = await store.text_search(P, "museum painting", EVERYTHING, 10)
    assert first not in [h.memory.id for h in hits] and second not in [h.memory.id for h in hits]
    art = await store.text_search(P, "art", EVERYTHING, 10)
    assert [h.memory.id for h in art] == [first]
    held.release()
    await store.core.close()
