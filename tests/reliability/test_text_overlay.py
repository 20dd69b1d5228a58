"""Full-text search lays the log's pending writes over the store's answer instead of
waiting for their apply (issue 20, finding 9): a hybrid Recall under mixed load waited
for the apply lock and the table's commits queued behind other agents' writes (p99
6.6-11.5 s against 0.5 s reading alone). Where the store tells its BM25 statistics (the
in-process store, the hot cache's text index) a pending memory is scored exactly as
the store scores it once applied, the very float, so a read now and a read as of now
later rank near-ties alike (docs/as-of.md); where it cannot, the statistics are
estimated from its hits (durability/text_overlay.py). These tests compare both with
the scores the store gives once the writes are applied."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memoryd.domain.models import Memory, MemoryFilter, Partition, TextHit
from memoryd.durability.facades import DurableStore
from memoryd.storage.hot.cache import HotCacheStore
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


class Untelling:
    """A store that cannot tell its BM25 statistics (LanceDB's own full-text index):
    the overlay estimates them from its hits."""

    def __init__(self, inner: HeldStore) -> None:
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        if name == "text_statistics":
            raise AttributeError(name)
        return getattr(self.inner, name)


def _in_process(held: HeldStore) -> Any:
    return held


def _hot_cache(held: HeldStore) -> Any:
    return HotCacheStore(held, dimension=DIM, budget_bytes=64 * 2**20)


def _untelling(held: HeldStore) -> Any:
    return Untelling(held)


EXACT = {"in-process": _in_process, "hot-cache": _hot_cache}
ALL_STORES = {**EXACT, "estimated": _untelling}


async def _setup(
    tmp: Path, front: Callable[[HeldStore], Any] = _in_process
) -> tuple[HeldStore, DurableStore, list[Memory]]:
    """``front`` over a held in-process store of STORED memories, with PENDING
    written to the log and not applied."""
    inner = InMemoryStore(DIM)
    await inner.open()
    held = HeldStore(inner)
    await inner.upsert(P, _corpus())
    served = front(held)
    if isinstance(served, HotCacheStore):
        await served.open()
    core = await open_core(tmp, served, InMemoryRecordStore(), apply_behind=64)
    store = DurableStore(core, dimension=DIM)
    # The cache loads the partition and builds its text index before the hold.
    await store.text_search(P, "coffee", EVERYTHING, 1)
    pending = [_memory(i + 1, text) for i, text in enumerate(PENDING.values())]
    held.hold()  # answered from the log, not applied
    for m in pending:
        await store.upsert(P, [m])
    return held, store, pending


async def _applied(held: HeldStore, store: DurableStore) -> None:
    held.release()
    await until(lambda: not store.core.pending)


def _answer(hits: list[TextHit]) -> list[tuple[str, float, bool]]:
    return [(h.memory.id, h.score, h.informative) for h in hits]


@pytest.mark.parametrize("front", EXACT.values(), ids=EXACT.keys())
@pytest.mark.parametrize("query", QUERIES)
async def test_pending_memories_score_the_very_floats_they_will_once_applied(
    tmp_path: Path, query: str, front: Callable[[HeldStore], Any]
) -> None:
    held, store, _ = await _setup(tmp_path, front)
    async with asyncio.timeout(30):  # no waiting for the held apply
        overlaid = await store.text_search(P, query, EVERYTHING, 10)
    await _applied(held, store)
    assert _answer(overlaid) == _answer(await store.text_search(P, query, EVERYTHING, 10))
    assert _answer(overlaid) == _answer(await held.inner.text_search(P, query, EVERYTHING, 10))
    await store.core.close()


@pytest.mark.parametrize("query", QUERIES)
async def test_pending_memories_rank_as_they_will_once_applied_where_estimated(
    tmp_path: Path, query: str
) -> None:
    held, store, _ = await _setup(tmp_path, _untelling)
    async with asyncio.timeout(30):
        overlaid = await store.text_search(P, query, EVERYTHING, 10)
    await _applied(held, store)
    exact = await held.inner.text_search(P, query, EVERYTHING, 10)
    assert [h.memory.id for h in overlaid] == [h.memory.id for h in exact]
    scores = {h.memory.id: h.score for h in exact}
    for hit in overlaid:
        assert hit.score == pytest.approx(scores[hit.memory.id], rel=0.05), hit.memory.id
        assert hit.informative == next(h.informative for h in exact if h.memory.id == hit.memory.id)
    await store.core.close()


@pytest.mark.parametrize("front", EXACT.values(), ids=EXACT.keys())
async def test_pending_rewrites_and_deletes_of_stored_memories_score_exactly(
    tmp_path: Path, front: Callable[[HeldStore], Any]
) -> None:
    """A rewrite in the log replaces the stored version in the statistics (it is not
    counted twice), a delete takes it out, an archive leaves the default filter."""
    held, store, _ = await _setup(tmp_path, front)
    stored = await held.inner.text_search(P, "museum painting hotel", EVERYTHING, 6)
    ids = [h.memory.id for h in stored]
    await store.upsert(P, [_memory(int(ids[0][1:]), "a museum of modern painting in lisbon")])
    await store.upsert(P, [_memory(int(ids[1][1:]), "nothing about it any more")])
    await store.delete(P, [ids[2]])
    archived = _memory(int(ids[3][1:]), "museum hotel museum")
    archived.archived = True
    await store.upsert(P, [archived])
    queries = ["museum painting hotel", "lisbon museum", "museum", *QUERIES]
    async with asyncio.timeout(30):
        overlaid = [await store.text_search(P, q, EVERYTHING, 10) for q in queries]
    await _applied(held, store)
    for query, before in zip(queries, overlaid, strict=True):
        after = await store.text_search(P, query, EVERYTHING, 10)
        assert _answer(before) == _answer(after), query
    await store.core.close()


@pytest.mark.parametrize("front", ALL_STORES.values(), ids=ALL_STORES.keys())
async def test_a_rewrite_or_delete_in_the_log_is_laid_over_the_hits(
    tmp_path: Path, front: Callable[[HeldStore], Any]
) -> None:
    held, store, _ = await _setup(tmp_path, front)
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
