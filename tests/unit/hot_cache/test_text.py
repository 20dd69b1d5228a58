"""Full-text (BM25) search answered from the hot partition: coherent with every write,
statistics only from what the filter lets through, CJK, and the same ranking and
scores as a brute-force BM25 computed here."""

from __future__ import annotations

import asyncio
import math
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.storage.base import ListPage
from memoryd.storage.bm25 import query_terms
from memoryd.storage.checks import matches
from memoryd.storage.hot import cache as hot_cache
from memoryd.storage.hot import text as hot_text
from memoryd.storage.hot.ann import AnnParams
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.hot.partition import HotPartition
from memoryd.storage.hot.text import TextBase, TextIndex, build_text_base
from memoryd.text import tokenize

from .helpers import BASE, DIM, GatedStore, P, memory

ALL = MemoryFilter(include_archived=True)
DEFAULT = MemoryFilter()
PUBLIC = MemoryFilter(max_security_level=SecurityLevel.PUBLIC)


def brute_force_bm25(
    memories: Sequence[Memory], query: str, flt: MemoryFilter, limit: int
) -> list[tuple[str, float]]:
    """Okapi BM25 (k1 1.2, b 0.1: storage.memory.BM25_B) written out plainly: N,
    document frequencies and the average length over the memories ``flt`` lets
    through; best first, ties by id, only scores > 0."""
    k1, b = 1.2, 0.1
    docs = {m.id: tokenize(m.content) for m in memories if matches(m, flt)}
    if not docs:
        return []
    n = len(docs)
    avg_len = sum(len(d) for d in docs.values()) / n or 1.0
    terms = list(dict.fromkeys(tokenize(query)))
    scores: dict[str, float] = {}
    for memory_id, doc in docs.items():
        tf = Counter(doc)
        score = 0.0
        for term in terms:
            if tf[term]:
                df = sum(1 for d in docs.values() if term in d)
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = k1 * (1 - b + b * len(doc) / avg_len)
                score += idf * tf[term] * (k1 + 1) / (tf[term] + norm)
        if score > 0:
            scores[memory_id] = score
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


async def everything(store: GatedStore, partition: Partition = P) -> list[Memory]:
    return await store.list(partition, ALL, ListPage(limit=10**6))


async def assert_agrees(
    cached: HotCacheStore,
    inner: GatedStore,
    query: str,
    flt: MemoryFilter = DEFAULT,
    limit: int = 100,
) -> list[str]:
    """The cache's answer equals brute force over the store's records; returns ids."""
    got = await cached.text_search(P, query, flt, limit)
    want = brute_force_bm25(await everything(inner), query, flt, limit)
    assert [h.memory.id for h in got] == [i for i, _ in want]
    # The very floats: every scorer computes them alike (storage/bm25.py).
    assert [h.score for h in got] == [s for _, s in want]
    return [h.memory.id for h in got]


@pytest.fixture
async def inner() -> GatedStore:
    store = GatedStore()
    await store.open()
    return store


@pytest.fixture
async def cached(inner: GatedStore) -> AsyncIterator[HotCacheStore]:
    store = HotCacheStore(inner, dimension=DIM, budget_bytes=64 * 2**20)
    await store.open()
    yield store
    await store.close()


async def seed(store: HotCacheStore, **contents: str) -> None:
    await store.upsert(P, [memory(id=i, content=c) for i, c in contents.items()])


# -- answered in memory, kept coherent by writes ----------------------------------------


async def test_text_search_is_answered_in_memory(cached: HotCacheStore, inner: GatedStore) -> None:
    await seed(cached, a="apple pie recipe", b="banana bread", c="apple and banana smoothie")
    assert await assert_agrees(cached, inner, "apple") == ["a", "c"]
    assert await assert_agrees(cached, inner, "banana apple")
    assert inner.text_searches == 0
    assert cached.text_builds == 1 and cached.loads == 1
    [hit] = await cached.text_search(P, "pie", DEFAULT, 5)
    [stored] = await inner.get(P, ["a"], with_vectors=True)
    assert hit.memory.vector is not None
    np.testing.assert_array_equal(hit.memory.vector, stored.vector)  # exactly as stored
    hit.memory.content = "mutated"
    hit.memory.vector[0] = 9.0
    [again] = await cached.text_search(P, "pie", DEFAULT, 5)
    assert again.memory.content == "apple pie recipe" and again.memory.vector is not None
    assert again.memory.vector[0] != 9.0


async def test_queries_without_terms_or_room_do_not_load(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    await seed(cached, a="apple")
    assert await cached.text_search(P, "the of and ?!", DEFAULT, 10) == []
    assert await cached.text_search(P, "apple", DEFAULT, 0) == []
    assert cached.partition_state(P) == "absent" and inner.text_searches == 0


async def test_writes_after_the_index_is_built(cached: HotCacheStore, inner: GatedStore) -> None:
    await seed(cached, a="original wording here", b="unrelated things", c="wording matters")
    assert await assert_agrees(cached, inner, "wording") == ["a", "c"]
    # Insert: found, and the other scores move with the new document frequency.
    await seed(cached, d="wording wording wording")
    assert (await assert_agrees(cached, inner, "wording"))[0] == "d"
    # Content update: the old postings go, the new ones count.
    await seed(cached, a="replacement text entirely")
    assert await assert_agrees(cached, inner, "original") == []
    assert await assert_agrees(cached, inner, "replacement") == ["a"]
    assert "a" not in await assert_agrees(cached, inner, "wording")
    # Remove.
    assert await cached.delete(P, ["d"]) == ["d"]
    assert await assert_agrees(cached, inner, "wording") == ["c"]
    # A deleted slot reused by a new memory carries only the new content.
    await seed(cached, e="fresh entry about gardening")
    assert await assert_agrees(cached, inner, "gardening") == ["e"]
    assert await assert_agrees(cached, inner, "wording") == ["c"]
    assert inner.text_searches == 0 and cached.text_builds == 1


async def test_archive_toggle_and_metadata_updates(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    await seed(cached, a="budget meeting notes", b="budget budget review", c="meeting room")
    await assert_agrees(cached, inner, "budget meeting")
    archived = memory(id="b", content="budget budget review", archived=True, tags=("old",))
    await cached.upsert(P, [archived])
    assert await assert_agrees(cached, inner, "budget") == ["a"]  # and df is 1 again
    assert set(await assert_agrees(cached, inner, "budget", ALL)) == {"a", "b"}
    await cached.upsert(P, [memory(id="b", content="budget budget review")])
    assert (await assert_agrees(cached, inner, "budget"))[0] == "b"
    assert inner.text_searches == 0


async def test_writes_during_the_build_are_replayed(
    inner: GatedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # text_build_wait=0: searches do not wait, so the build runs while writes land.
    cached = HotCacheStore(inner, dimension=DIM, budget_bytes=2**26, text_build_wait=0)
    await cached.open()
    await seed(cached, a="apple pie", b="banana split", c="cherry tart")
    started, release = threading.Event(), threading.Event()
    real = hot_cache.build_text_base

    def held(docs: Sequence[tuple[int, str]], keep_going: Callable[[], bool]) -> TextBase | None:
        started.set()
        release.wait(30)
        return real(docs, keep_going)

    monkeypatch.setattr(hot_cache, "build_text_base", held)
    try:
        # Answered by the store while the index is built.
        assert [h.memory.id for h in await cached.text_search(P, "apple", DEFAULT, 5)] == ["a"]
        assert inner.text_searches == 1
        assert await asyncio.to_thread(started.wait, 30)
        await seed(cached, d="apple crumble")  # insert
        await seed(cached, b="apple strudel")  # new content
        await cached.delete(P, ["a"])  # remove
        await cached.upsert(P, [memory(id="c", content="cherry tart", archived=True)])
    finally:
        release.set()
    assert await cached.wait_text_indexed(P)
    searched = inner.text_searches
    assert await assert_agrees(cached, inner, "apple") == ["b", "d"]
    assert await assert_agrees(cached, inner, "banana") == []
    assert await assert_agrees(cached, inner, "cherry") == []
    assert await assert_agrees(cached, inner, "cherry", ALL) == ["c"]
    assert inner.text_searches == searched
    await cached.close()


async def test_a_partition_dropped_during_the_build_is_not_used(
    cached: HotCacheStore, inner: GatedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(cached, a="apple pie")
    real = hot_cache.build_text_base
    failed_write: list[bool] = []

    async def fail_a_write() -> None:
        inner.fail_after_write = True
        with pytest.raises(RuntimeError):
            await cached.upsert(P, [memory(id="b", content="apple cake")])
        inner.fail_after_write = False
        failed_write.append(True)

    loop = asyncio.get_running_loop()

    def during(docs: Sequence[tuple[int, str]], keep_going: Callable[[], bool]) -> TextBase | None:
        asyncio.run_coroutine_threadsafe(fail_a_write(), loop).result(30)
        return real(docs, keep_going)

    monkeypatch.setattr(hot_cache, "build_text_base", during)
    hits = await cached.text_search(P, "apple", DEFAULT, 5)
    assert failed_write == [True]
    assert {h.memory.id for h in hits} == {"a", "b"}  # the store's answer, b committed
    assert inner.text_searches == 1
    assert cached.partition_state(P) == "absent"


async def test_a_failed_build_falls_back_to_the_store_and_is_retried(
    cached: HotCacheStore, inner: GatedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(cached, a="apple pie")
    real = hot_cache.build_text_base

    def broken(docs: Sequence[tuple[int, str]], keep_going: Callable[[], bool]) -> TextBase | None:
        raise MemoryError("simulated")

    monkeypatch.setattr(hot_cache, "build_text_base", broken)
    assert [h.memory.id for h in await cached.text_search(P, "apple", DEFAULT, 5)] == ["a"]
    assert inner.text_searches == 1 and cached.text_builds == 0
    monkeypatch.setattr(hot_cache, "build_text_base", real)
    await assert_agrees(cached, inner, "apple")
    assert inner.text_searches == 1 and cached.text_builds == 1


async def test_filtered_by_embedding_model_in_the_cache(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    """The embedding fallback filters searches by model (resilience/embedder.py); the
    cache answers them itself, as the store would."""
    await cached.upsert(
        P,
        [
            memory(id="a", content="apple pie", embedding_model="m1"),
            memory(id="b", content="apple tart", embedding_model="m2"),
        ],
    )
    [hit] = await cached.text_search(P, "apple", MemoryFilter(embedding_model="m1"), 5)
    assert hit.memory.id == "a"
    assert await cached.text_search(P, "apple", MemoryFilter(embedding_model="m3"), 5) == []
    spaced = MemoryFilter(exclude_embedding_model="m1")
    assert [h.memory.id for h in await cached.text_search(P, "apple", spaced, 5)] == ["b"]
    for flt in (MemoryFilter(embedding_model="m2"), spaced, MemoryFilter(embedding_model="m3")):
        await assert_agrees(cached, inner, "apple", flt)
    assert inner.text_searches == 0 and cached.partition_state(P) != "absent"


async def test_a_partition_larger_than_the_budget_is_text_searched_in_the_store(
    inner: GatedStore,
) -> None:
    tiny = HotCacheStore(inner, dimension=DIM, budget_bytes=1024)
    await tiny.open()
    await seed(tiny, a="apple pie", b="apple tart")
    assert len(await tiny.text_search(P, "apple", DEFAULT, 5)) == 2
    assert len(await tiny.text_search(P, "apple", DEFAULT, 5)) == 2
    assert inner.text_searches == 2 and tiny.loads == 1 and tiny.cached_partitions() == []
    await tiny.close()


async def test_the_index_counts_against_the_budget(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    await cached.upsert(P, [memory(content=f"note {i} about topic{i % 17}") for i in range(300)])
    await cached.search(P, np.ones(DIM, dtype=np.float32) / np.sqrt(DIM), ALL, 1)
    vectors_only = cached.cached_bytes()
    await cached.text_search(P, "topic3", DEFAULT, 5)
    [part] = [cached._entries[P].part]
    assert part is not None and part.text is not None
    assert cached.cached_bytes() == vectors_only + part.text.nbytes()
    assert part.text.nbytes() > 300 * 8  # at least its postings


async def test_concurrent_text_searches_share_one_build(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    await seed(cached, **{f"m{i}": f"shared word {i}" for i in range(20)})
    results = await asyncio.gather(*(cached.text_search(P, "shared", DEFAULT, 5) for _ in range(4)))
    assert all(len(r) == 5 for r in results)
    assert cached.text_builds == 1 and cached.loads == 1 and inner.text_searches == 0


# -- filter semantics: statistics only from what the caller may see ----------------------


async def test_a_term_only_in_a_restricted_memory_neither_matches_nor_scores(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    """Partition P holds the visible memories and restricted ones (some indexed by the
    build, some written after it); partition Q holds only the visible ones. A
    PUBLIC-ceiling query sees exactly the same hits and scores in both."""
    q = Partition("tenant", "visible-only")
    visible = {
        "a": "merger talks merger lunch",
        "b": "lunch with the team about lunch",
        "c": "merger",
        "d": "quarterly lunch merger plans and more words here",
    }

    def secrets(first: int) -> list[Memory]:
        return [
            memory(
                id=f"s{i:02d}",
                content="codename bluebird merger merger lunch",
                security_level=SecurityLevel.RESTRICTED,
            )
            for i in range(first, first + 15)
        ]

    for partition in (P, q):
        rows = [
            memory(partition, id=i, content=c, security_level=SecurityLevel.PUBLIC)
            for i, c in visible.items()
        ]
        await cached.upsert(partition, rows)
    await cached.upsert(P, secrets(0))  # in the index's base once it is built
    query = "merger lunch codename"
    want = [(h.memory.id, h.score) for h in await cached.text_search(q, query, PUBLIC, 10)]
    assert {i for i, _ in want} == set(visible)
    for _ in range(2):
        got = await cached.text_search(P, query, PUBLIC, 10)
        assert [(h.memory.id, h.score) for h in got] == want
        assert await cached.text_search(P, "bluebird codename", PUBLIC, 10) == []
        await cached.upsert(P, secrets(15))  # written after the build
    # With the clearance the same query sees them, and the statistics change.
    cleared = await assert_agrees(cached, inner, query, DEFAULT, 50)
    assert len(cleared) == 34 and cleared[0].startswith("s")
    assert inner.text_searches == 0 and cached.text_builds == 2


async def test_other_filters_shape_the_statistics(cached: HotCacheStore, inner: GatedStore) -> None:
    rows = [
        memory(id="n1", content="river boat trip", namespace="travel"),
        memory(id="n2", content="boat boat show", namespace="travel"),
        memory(id="n3", content="boat repair invoice", namespace="work", tags=("money",)),
        memory(id="n4", content="river walk", namespace="work", expires_at=BASE),
        memory(id="n5", content="boat", created_at=BASE - timedelta(days=3)),
    ]
    await cached.upsert(P, rows)
    for flt in (
        MemoryFilter(namespace="travel"),
        MemoryFilter(namespace="work", not_expired_at=BASE + timedelta(hours=1)),
        MemoryFilter(tags=("money",)),
        MemoryFilter(created_after=BASE - timedelta(days=1)),
        MemoryFilter(namespace="nowhere"),
        DEFAULT,
    ):
        await assert_agrees(cached, inner, "boat river", flt)


async def test_chinese_text(cached: HotCacheStore, inner: GatedStore) -> None:
    await seed(
        cached,
        forum="金融科技精英论坛的地点是北京。",
        fair="银行柜员招聘会的主要内容是招聘会",
        english="The forum is in Beijing",
        cat="我的猫很可爱",
        mixed="北京 forum 猫",
    )
    assert (await assert_agrees(cached, inner, "金融科技论坛在哪里\uff1f"))[0] == "forum"
    assert (await assert_agrees(cached, inner, "招聘会"))[0] == "fair"
    assert set(await assert_agrees(cached, inner, "猫")) == {"cat", "mixed"}
    assert await assert_agrees(cached, inner, "狗") == []
    await seed(cached, cat="我的狗很可爱")
    assert await assert_agrees(cached, inner, "狗") == ["cat"]
    assert await assert_agrees(cached, inner, "猫") == ["mixed"]


# -- the index on its own: merges, vocabulary compaction, builds asked to stop ----------


def test_merges_keep_the_index_equal_to_a_fresh_build() -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(60)]
    contents = {slot: " ".join(rng.choice(words, 6)) for slot in range(200)}
    base = build_text_base(list(contents.items()))
    assert base is not None
    with mock.patch.object(hot_text, "_MIN_MERGE", 16):
        index = TextIndex(base)
        for step in range(400):
            slot = int(rng.integers(0, 260))
            if step % 5 == 0:
                contents.pop(slot, None)
                index.set(slot, None)
            else:
                contents[slot] = " ".join(rng.choice(words, int(rng.integers(1, 9))))
                index.set(slot, contents[slot])
        # Words no memory holds any more: the vocabulary is renumbered without them.
        for slot in list(contents):
            contents[slot] = f"fresh{slot % 7} common"
            index.set(slot, contents[slot])
        index.merge()
    assert index.merges > 5
    fresh_base = build_text_base(sorted(contents.items()))
    assert fresh_base is not None
    fresh = TextIndex(fresh_base)
    assert not set(words) & set(index.vocab), "unused terms were dropped"
    mask = np.zeros(260, dtype=bool)
    mask[list(contents)] = True
    for query in ["fresh3 common", "w1 w2", "fresh0", "fresh5 fresh6"]:
        got_slots, got_scores, _ = index.candidates(query_terms(query), mask, 10)
        want_slots, want_scores, _ = fresh.candidates(query_terms(query), mask, 10)
        got = sorted(zip(got_slots.tolist(), got_scores.tolist(), strict=True))
        want = sorted(zip(want_slots.tolist(), want_scores.tolist(), strict=True))
        assert got == want
    assert index.nbytes() > 0


def test_a_build_asked_to_stop_returns_nothing() -> None:
    docs = [(i, f"document {i}") for i in range(3000)]
    assert build_text_base(docs, lambda: False) is None
    assert build_text_base([]) is not None


def test_ties_at_the_limit_are_broken_by_id() -> None:
    part = HotPartition(DIM, AnnParams())
    ids = ["e", "b", "d", "a", "c"]
    for memory_id in ids:
        part.put(memory(id=memory_id, content="apple words", vector=None), np.eye(DIM)[0])
    base = build_text_base(part.start_text_build())
    part.finish_text_build(base)
    hits = part.text_search(["word"], MemoryFilter(), 3)
    assert [h.memory.id for h in hits] == ["a", "b", "c"]
    assert len({h.score for h in hits}) == 1


# -- property: any history of writes, any filter, equal to brute force -------------------

WORDS = ["apple", "banana", "river", "boat", "the", "猫", "北京", "金融科技", "xj-4471", "run"]
contents = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
records = st.fixed_dictionaries(
    {
        "id": st.sampled_from([f"r{i}" for i in range(10)]),
        "content": contents,
        "namespace": st.sampled_from(["", "ns"]),
        "security_level": st.sampled_from(list(SecurityLevel)),
        "archived": st.booleans(),
    }
)
text_filters = st.builds(
    MemoryFilter,
    namespace=st.sampled_from([None, "ns"]),
    max_security_level=st.sampled_from(list(SecurityLevel)),
    include_archived=st.booleans(),
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(records, min_size=1, max_size=4)),
        st.tuples(st.just("delete"), st.lists(st.sampled_from([f"r{i}" for i in range(10)]))),
        st.tuples(
            st.just("search"),
            st.tuples(contents, text_filters, st.integers(1, 12)),
        ),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops)
def test_cached_text_search_equals_brute_force(ops: list[tuple[str, object]]) -> None:
    # Merging after a handful of postings exercises base, delta and merge paths alike.
    with mock.patch.object(hot_text, "_MIN_MERGE", 3):
        asyncio.run(_run(ops))


async def _run(ops: list[tuple[str, object]]) -> None:
    inner = GatedStore()
    cached = HotCacheStore(inner, dimension=DIM, budget_bytes=2**24)
    await cached.open()
    for op, arg in [*ops, ("search", ("apple river 猫", ALL, 12))]:
        if op == "upsert":
            assert isinstance(arg, list)
            await cached.upsert(P, [memory(**r) for r in arg])
        elif op == "delete":
            assert isinstance(arg, list)
            await cached.delete(P, arg)
        else:
            assert isinstance(arg, tuple)
            query, flt, limit = arg
            got = await cached.text_search(P, query, flt, limit)
            want = brute_force_bm25(await everything(inner), query, flt, limit)
            assert [h.memory.id for h in got] == [i for i, _ in want]
            # The very floats: every scorer computes them alike (storage/bm25.py).
            assert [h.score for h in got] == [s for _, s in want]
    assert inner.text_searches == 0
    await cached.close()
