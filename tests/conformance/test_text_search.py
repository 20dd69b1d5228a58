"""Full-text search (BM25) and exact-content lookup, on every backend."""

from __future__ import annotations

import uuid

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.storage.base import Nearest, Store
from memoryd.text import content_hash

from .support import NASTY, make_memory, reference_match, unit_vector
from .test_filters import _filters, _memory_fields

P = Partition("tenant", "agent")
ALL = MemoryFilter()


async def ids(store: Store, query: str, flt: MemoryFilter = ALL, limit: int = 100) -> list[str]:
    return [h.memory.id for h in await store.text_search(P, query, flt, limit)]


async def seed(store: Store, partition: Partition = P, **contents: str) -> None:
    await store.upsert(
        partition, [make_memory(partition, id=i, content=c) for i, c in contents.items()]
    )


async def test_matches_records_sharing_a_term(store: Store) -> None:
    await seed(
        store,
        cat="The cat sat on the mat",
        dog="A dog barks at the mailman",
        both="Cats and dogs play together",
    )
    assert set(await ids(store, "cat")) == {"cat", "both"}  # stemmed: cats -> cat
    assert set(await ids(store, "DOGS?")) == {"dog", "both"}
    assert await ids(store, "giraffe") == []


async def test_queries_without_terms_match_nothing(store: Store) -> None:
    await seed(store, a="the and of it", b="something real")
    for query in ("", "   ", "the of and", "?!", "..."):
        assert await ids(store, query) == [], query


async def test_best_first_positive_scores_and_limit(store: Store) -> None:
    await seed(
        store,
        **{f"m{i}": "apple " * (i % 3 + 1) + f"filler words number {i}" for i in range(12)},
    )
    hits = await store.text_search(P, "apple", ALL, 5)
    assert len(hits) == 5
    scores = [h.score for h in hits]
    assert all(s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    # With their vectors: hybrid recall computes every match's cosine from them.
    stored = {m.id: m for m in await store.get(P, [h.memory.id for h in hits], with_vectors=True)}
    for h in hits:
        assert h.memory.vector is not None and h.memory.vector.dtype == np.float32
        np.testing.assert_array_equal(h.memory.vector, stored[h.memory.id].vector)
    assert await store.text_search(P, "apple", ALL, 0) == []


async def test_term_frequency_and_rarity_rank_higher(store: Store) -> None:
    await seed(
        store,
        twice="alpha alpha beta",
        once="alpha gamma delta",
        rare="zeta one two",
        **{f"c{i}": f"common filler {i}" for i in range(6)},
    )
    assert (await ids(store, "alpha"))[:2] == ["twice", "once"]
    # "zeta" is in one record, "common" in six: the rare match outranks the common one.
    assert (await ids(store, "common zeta"))[0] == "rare"


async def test_exact_codes_and_their_parts(store: Store) -> None:
    await seed(
        store,
        code="Order XJ-4471 shipped to Berlin",
        other="Order XJ-9000 shipped to Paris",
        unrelated="Nothing about orders here",
    )
    assert (await ids(store, "xj-4471"))[0] == "code"
    assert (await ids(store, "What happened to XJ-4471?"))[0] == "code"
    assert await ids(store, "4471") == ["code"]


async def test_chinese_text(store: Store) -> None:
    await seed(
        store,
        forum="金融科技精英论坛的地点是北京。",
        fair="银行柜员招聘会的主要内容是招聘会",
        english="The forum is in Beijing",
        cat="我的猫很可爱",
    )
    assert (await ids(store, "金融科技论坛在哪里\uff1f"))[0] == "forum"  # full-width ?
    assert (await ids(store, "招聘会"))[0] == "fair"
    assert await ids(store, "猫") == ["cat"]  # a one-character word
    assert await ids(store, "狗") == []


async def test_rewrites_and_deletes_apply_at_once(store: Store) -> None:
    await seed(store, m="original wording", n="unrelated")
    assert await ids(store, "original") == ["m"]
    await seed(store, m="replacement text")
    assert await ids(store, "original") == []
    assert await ids(store, "replacement") == ["m"]
    assert await store.delete(P, ["m"]) == ["m"]
    assert await ids(store, "replacement") == []


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.lists(_memory_fields, min_size=0, max_size=20),
    filters=st.lists(_filters, min_size=1, max_size=4),
)
async def test_filters_apply_inside_the_search(
    store: Store, fields: list[dict[str, object]], filters: list[MemoryFilter]
) -> None:
    p = Partition(f"hyp-{uuid.uuid4()}", "agent")
    memories = [
        make_memory(p, id=f"r{i:02d}", content=f"shared word {i}", **f)
        for i, f in enumerate(fields)
    ]
    if memories:
        await store.upsert(p, memories)
    for flt in filters:
        expected = {m.id for m in memories if reference_match(m, flt)}
        hits = await store.text_search(p, "shared", flt, 1000)
        assert {h.memory.id for h in hits} == expected
        assert len(hits) == len(expected)
        # A small limit still returns only matching records, never fewer than exist.
        few = await store.text_search(p, "shared", flt, 2)
        assert len(few) == min(2, len(expected))
        assert {h.memory.id for h in few} <= expected


async def test_other_partitions_are_invisible(store: Store) -> None:
    await seed(store, shared="secret launch codename bluebird", mine="bluebird")
    for other in [*(Partition(s, "agent") for s in NASTY), Partition("tenant", "agent2")]:
        await seed(store, other, shared="bluebird bluebird")
        got = await store.text_search(other, "bluebird codename", ALL, 100)
        assert [h.memory.id for h in got] == ["shared"]
        assert got[0].memory.tenant_id == other.tenant_id
        assert got[0].memory.content == "bluebird bluebird"
    assert set(await ids(store, "bluebird")) == {"shared", "mine"}


async def test_hidden_records_do_not_change_the_visible_ranking(store: Store) -> None:
    """Records above the ceiling or in another partition that contain the query's
    terms change neither which records match nor their order."""
    ceiling = MemoryFilter(max_security_level=SecurityLevel.INTERNAL)
    await seed(
        store,
        a="merger talks merger lunch",
        b="lunch with the team about lunch",
        c="merger",
        d="quarterly lunch merger plans and more words here",
    )
    before = await store.text_search(P, "merger lunch", ceiling, 10)
    secret = [
        make_memory(P, id=f"s{i}", content="merger " * 5, security_level=SecurityLevel.RESTRICTED)
        for i in range(30)
    ]
    await store.upsert(P, secret)
    other = Partition("tenant", "someone-else")
    await seed(store, other, **{f"o{i}": "merger merger" for i in range(30)})
    after = await store.text_search(P, "merger lunch", ceiling, 10)
    assert [h.memory.id for h in after] == [h.memory.id for h in before]
    assert len(before) == 4


# -- exact-content lookup --------------------------------------------------------------


def full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) for c in text)


def _hashes(*texts: str) -> list[str]:
    return [content_hash(t) for t in texts]


async def test_find_by_content_matches_normalised_content(store: Store) -> None:
    await seed(
        store,
        a="Hello   World",
        b="hello world",
        c=f"{full_width('Hello')}\u3000{full_width('WORLD')}",  # and an ideographic space
        d="Hello, World",
    )
    found = await store.find_by_content(P, _hashes("HELLO world "), ALL)
    assert {m.id for m in found} == {"a", "b", "c"}
    assert all(m.vector is None for m in found)
    assert await store.find_by_content(P, _hashes("nothing like it"), ALL) == []
    assert await store.find_by_content(P, [], ALL) == []
    both = await store.find_by_content(P, _hashes("hello, world", "hello world"), ALL)
    assert {m.id for m in both} == {"a", "b", "c", "d"}


async def test_find_by_content_applies_filter_and_partition(store: Store) -> None:
    content = "the same words"
    memories: list[Memory] = [
        make_memory(P, id="ns-a", content=content, namespace="a"),
        make_memory(P, id="ns-b", content=content, namespace="b"),
        make_memory(P, id="secret", content=content, security_level=SecurityLevel.RESTRICTED),
        make_memory(P, id="old", content=content, archived=True),
    ]
    await store.upsert(P, memories)
    other = Partition("tenant", "other")
    await seed(store, other, theirs=content)
    [h] = _hashes(content)
    assert {m.id for m in await store.find_by_content(P, [h], ALL)} == {"ns-a", "ns-b", "secret"}
    flt = MemoryFilter(namespace="a")
    assert [m.id for m in await store.find_by_content(P, [h], flt)] == ["ns-a"]
    flt = MemoryFilter(max_security_level=SecurityLevel.CONFIDENTIAL, include_archived=True)
    assert {m.id for m in await store.find_by_content(P, [h], flt)} == {"ns-a", "ns-b", "old"}
    assert [m.id for m in await store.find_by_content(other, [h], ALL)] == ["theirs"]
    assert await store.find_by_content(Partition("nobody", "x"), [h], ALL) == []


# -- batched vector search (deduplication looks up a whole batch at once) -------------


async def test_search_many_equals_one_search_per_vector(store: Store) -> None:
    rng = np.random.default_rng(3)
    memories = [
        make_memory(P, id=f"v{i:02d}", rng=rng, namespace="a" if i % 3 else "b") for i in range(30)
    ]
    await store.upsert(P, memories)
    queries = [unit_vector(rng) for _ in range(5)]
    for flt in (ALL, MemoryFilter(namespace="a")):
        batched = await store.search_many(P, queries, flt, Nearest(4))
        assert len(batched) == len(queries)
        for query, hits in zip(queries, batched, strict=True):
            single = await store.search(P, query, flt, 4)
            assert [h.memory.id for h in hits] == [h.memory.id for h in single]
            for a, b in zip(hits, single, strict=True):
                assert abs(a.similarity - b.similarity) < 1e-5
    assert await store.search_many(P, [], ALL, Nearest(4)) == []
    assert await store.search_many(P, queries[:2], ALL, Nearest(0)) == [[], []]
    other = await store.search_many(Partition("tenant", "nobody"), queries, ALL, Nearest(4))
    assert other == [[] for _ in queries]


async def test_search_many_answers_in_order_past_one_request(store: Store) -> None:
    """More vectors than one batched request takes (Qdrant: 64, sent side by side):
    each answer is still its own vector's, in the order asked."""
    rng = np.random.default_rng(5)
    memories = [make_memory(P, id=f"o{i:03d}", rng=rng) for i in range(150)]
    await store.upsert(P, memories)
    order = list(rng.permutation(len(memories)))
    queries = [memories[i].vector for i in order]
    found = await store.search_many(P, queries, ALL, Nearest(1, min_similarity=0.99))
    assert [[h.memory.id for h in hits] for hits in found] == [[memories[i].id] for i in order]


async def test_search_many_min_similarity_keeps_only_near_duplicates(store: Store) -> None:
    """Deduplication asks for hits at or above a similarity: the best ``limit`` of
    those, exactly what an unbounded search cut at the threshold would give."""
    rng = np.random.default_rng(11)
    memories = [
        make_memory(P, id=f"n{i:02d}", rng=rng, namespace="a" if i % 4 else "b") for i in range(40)
    ]
    await store.upsert(P, memories)
    stored = [np.asarray(m.vector, dtype=np.float32) for m in memories]

    def near(v: np.ndarray, noise: float) -> np.ndarray:
        w = v + noise * np.asarray(unit_vector(rng))
        return (w / np.linalg.norm(w)).astype(np.float32)

    # Close to one stored vector, a little further from it, and near nothing.
    queries = [near(stored[1], 0.05), near(stored[2], 0.4), unit_vector(rng), stored[4]]
    for flt in (ALL, MemoryFilter(namespace="a")):
        for threshold in (0.9, 0.5, -1.0):
            cut = await store.search_many(P, queries, flt, Nearest(3, threshold))
            full = await store.search_many(P, queries, flt, Nearest(3))
            assert len(cut) == len(queries)
            for got, every in zip(cut, full, strict=True):
                assert all(h.similarity >= threshold - 1e-6 for h in got)
                want = [h.memory.id for h in every if h.similarity >= threshold]
                # Hits within float noise of the threshold may fall either side.
                borderline = {h.memory.id for h in every if abs(h.similarity - threshold) < 1e-5}
                assert set(h.memory.id for h in got) ^ set(want) <= borderline
    top = await store.search_many(P, queries, ALL, Nearest(3, min_similarity=0.9))
    assert [h.memory.id for h in top[0]] == ["n01"]
    assert [h.memory.id for h in top[3]] == ["n04"]
    assert top[2] == []
    other = await store.search_many(
        Partition("tenant", "nobody"), queries, ALL, Nearest(3, min_similarity=0.0)
    )
    assert other == [[] for _ in queries]
