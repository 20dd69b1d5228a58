"""Every MemoryFilter field, applied by count, list and search alike."""

from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    TagMatch,
    TrustFilter,
)
from memoryd.storage.base import ListPage, Store

from .support import BASE, assert_filter, make_memory, reference_match, unit_vector

P = Partition("tenant", "agent")


async def seed(store: Store, *memories: Memory) -> None:
    await store.upsert(P, list(memories))


async def test_namespace_exact_and_empty_vs_none(store: Store) -> None:
    await seed(
        store,
        make_memory(P, id="root", namespace=""),
        make_memory(P, id="a", namespace="a"),
        make_memory(P, id="ab", namespace="a/b"),
        make_memory(P, id="pct", namespace="%"),
    )
    await assert_filter(store, P, MemoryFilter(), {"root", "a", "ab", "pct"})
    await assert_filter(store, P, MemoryFilter(namespace=""), {"root"})
    await assert_filter(store, P, MemoryFilter(namespace="a"), {"a"})
    await assert_filter(store, P, MemoryFilter(namespace="%"), {"pct"})
    await assert_filter(store, P, MemoryFilter(namespace="missing"), set())


async def test_tags_any_and_all(store: Store) -> None:
    await seed(
        store,
        make_memory(P, id="none", tags=()),
        make_memory(P, id="x", tags=("x",)),
        make_memory(P, id="xy", tags=("x", "y")),
        make_memory(P, id="yz", tags=("y", "z")),
        make_memory(P, id="quote", tags=("it's", "x,y")),
    )
    any_of = TagMatch.ANY
    all_of = TagMatch.ALL
    await assert_filter(store, P, MemoryFilter(tags=("x",)), {"x", "xy"})
    await assert_filter(
        store, P, MemoryFilter(tags=("x", "z"), tag_match=any_of), {"x", "xy", "yz"}
    )
    await assert_filter(store, P, MemoryFilter(tags=("x", "y"), tag_match=all_of), {"xy"})
    await assert_filter(store, P, MemoryFilter(tags=("y",), tag_match=all_of), {"xy", "yz"})
    await assert_filter(store, P, MemoryFilter(tags=("it's",)), {"quote"})
    await assert_filter(store, P, MemoryFilter(tags=("x,y",), tag_match=all_of), {"quote"})
    await assert_filter(store, P, MemoryFilter(tags=("nope",)), set())
    everything = {"none", "x", "xy", "yz", "quote"}
    await assert_filter(store, P, MemoryFilter(tags=(), tag_match=all_of), everything)


async def test_memory_types(store: Store) -> None:
    await seed(store, *(make_memory(P, id=t.value, memory_type=t) for t in MemoryType))
    await assert_filter(store, P, MemoryFilter(memory_types=(MemoryType.FACT,)), {"fact"})
    both = (MemoryType.SKILL, MemoryType.EPISODE)
    await assert_filter(store, P, MemoryFilter(memory_types=both), {"skill", "episode"})
    await assert_filter(store, P, MemoryFilter(), {t.value for t in MemoryType})


def _source(kind: ProvenanceKind) -> Provenance:
    # Quotes in the strings: nothing of the source reaches a query unescaped.
    return Provenance(kind, name=f"{kind.value} 'source'", locator="x' OR '1'='1")


async def test_trust_admits_provenance_kinds(store: Store) -> None:
    """The trust filter selects by provenance kind inside the query; a memory without
    provenance passes only when the filter says unattributed ones do."""
    await seed(
        store,
        *(make_memory(P, id=k.value, source=_source(k)) for k in ProvenanceKind),
        make_memory(P, id="none", source=None),
    )
    user = TrustFilter((ProvenanceKind.USER,))
    await assert_filter(store, P, MemoryFilter(trust=user), {"user"})
    stated = (ProvenanceKind.USER, ProvenanceKind.AGENT, ProvenanceKind.SYSTEM)
    await assert_filter(
        store,
        P,
        MemoryFilter(trust=TrustFilter(stated, unattributed=True)),
        {"user", "agent", "system", "none"},
    )
    only_none = TrustFilter((), unattributed=True)
    await assert_filter(store, P, MemoryFilter(trust=only_none), {"none"})
    await assert_filter(store, P, MemoryFilter(trust=TrustFilter(())), set())
    everything = {k.value for k in ProvenanceKind} | {"none"}
    await assert_filter(store, P, MemoryFilter(), everything)


async def test_trust_fills_top_k_from_admitted(store: Store) -> None:
    """A search under a trust filter returns k admitted memories even when the nearest
    ones are all of other kinds (filtered in the query, not after it)."""
    rng = np.random.default_rng(35)
    query = unit_vector(rng)
    near = [
        make_memory(P, id=f"web{i}", vector=query, source=_source(ProvenanceKind.WEB))
        for i in range(8)
    ]
    far = [make_memory(P, id=f"user{i}", source=_source(ProvenanceKind.USER)) for i in range(3)]
    await seed(store, *near, *far)
    user = MemoryFilter(trust=TrustFilter((ProvenanceKind.USER,)))
    hits = await store.search(P, query, user, limit=3)
    assert {h.memory.id for h in hits} == {"user0", "user1", "user2"}
    listed = await store.list(P, user, ListPage(limit=2))
    assert [m.id for m in listed] == ["user2", "user1"]


async def test_security_ceiling(store: Store) -> None:
    await seed(store, *(make_memory(P, id=s.name, security_level=s) for s in SecurityLevel))
    for ceiling in SecurityLevel:
        expected = {s.name for s in SecurityLevel if s <= ceiling}
        await assert_filter(store, P, MemoryFilter(max_security_level=ceiling), expected)


async def test_created_range_is_exclusive(store: Store) -> None:
    t = [BASE + timedelta(microseconds=i) for i in range(4)]
    await seed(store, *(make_memory(P, id=f"t{i}", created_at=t[i]) for i in range(4)))
    await assert_filter(store, P, MemoryFilter(created_after=t[1]), {"t2", "t3"})
    await assert_filter(store, P, MemoryFilter(created_before=t[2]), {"t0", "t1"})
    await assert_filter(
        store, P, MemoryFilter(created_after=t[0], created_before=t[3]), {"t1", "t2"}
    )
    await assert_filter(store, P, MemoryFilter(created_after=t[3]), set())


async def test_archived_excluded_unless_asked(store: Store) -> None:
    await seed(store, make_memory(P, id="live"), make_memory(P, id="old", archived=True))
    await assert_filter(store, P, MemoryFilter(), {"live"})
    await assert_filter(store, P, MemoryFilter(include_archived=True), {"live", "old"})


async def test_not_expired_at(store: Store) -> None:
    now = BASE + timedelta(days=1)
    await seed(
        store,
        make_memory(P, id="never", expires_at=None),
        make_memory(P, id="past", expires_at=now - timedelta(microseconds=1)),
        make_memory(P, id="exactly", expires_at=now),
        make_memory(P, id="future", expires_at=now + timedelta(microseconds=1)),
    )
    await assert_filter(store, P, MemoryFilter(not_expired_at=now), {"never", "future"})
    await assert_filter(store, P, MemoryFilter(), {"never", "past", "exactly", "future"})


async def test_all_predicates_combine_with_and(store: Store) -> None:
    good = dict(namespace="n", tags=("a",), memory_type=MemoryType.SKILL)
    await seed(
        store,
        make_memory(P, id="match", **good),
        make_memory(P, id="wrong-ns", **{**good, "namespace": "m"}),
        make_memory(P, id="wrong-tag", **{**good, "tags": ("b",)}),
        make_memory(P, id="wrong-type", **{**good, "memory_type": MemoryType.FACT}),
        make_memory(P, id="archived", archived=True, **good),
    )
    flt = MemoryFilter(namespace="n", tags=("a",), memory_types=(MemoryType.SKILL,))
    await assert_filter(store, P, flt, {"match"})


# -- random memories x random filters vs the reference predicate ---------------------

_instants = st.integers(0, 5).map(lambda k: BASE + timedelta(seconds=k))
_tags = st.lists(st.sampled_from(["t1", "t2", "t'3"]), unique=True, max_size=3).map(tuple)

_memory_fields = st.fixed_dictionaries(
    {
        "namespace": st.sampled_from(["", "a", "b"]),
        "tags": _tags,
        "memory_type": st.sampled_from(list(MemoryType)),
        "security_level": st.sampled_from(list(SecurityLevel)),
        "created_at": _instants,
        "archived": st.booleans(),
        "expires_at": st.none() | _instants,
        "source": st.none() | st.sampled_from(list(ProvenanceKind)).map(_source),
    }
)
_trusts = st.builds(
    TrustFilter,
    kinds=st.frozensets(st.sampled_from(list(ProvenanceKind)), max_size=3).map(tuple),
    unattributed=st.booleans(),
)

_filters = st.builds(
    MemoryFilter,
    namespace=st.none() | st.sampled_from(["", "a", "b", "c"]),
    tags=_tags,
    tag_match=st.sampled_from(list(TagMatch)),
    memory_types=st.lists(st.sampled_from(list(MemoryType)), unique=True, max_size=3).map(tuple),
    max_security_level=st.sampled_from(list(SecurityLevel)),
    created_after=st.none() | _instants,
    created_before=st.none() | _instants,
    include_archived=st.booleans(),
    not_expired_at=st.none() | _instants,
    trust=st.none() | _trusts,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.lists(_memory_fields, min_size=0, max_size=25),
    filters=st.lists(_filters, min_size=1, max_size=4),
)
async def test_random_filters_match_reference(
    store: Store, fields: list[dict[str, object]], filters: list[MemoryFilter]
) -> None:
    # A fresh partition per example: examples share the store but never see each other.
    p = Partition(f"hyp-{uuid.uuid4()}", "agent")
    memories = [make_memory(p, id=f"r{i:02d}", **f) for i, f in enumerate(fields)]
    if memories:
        await store.upsert(p, memories)
    for flt in filters:
        expected = [m for m in memories if reference_match(m, flt)]
        await assert_filter(store, p, flt, {m.id for m in expected})
        listed = await store.list(p, flt, ListPage(limit=3))
        newest = sorted(expected, key=lambda m: (m.created_at, m.id), reverse=True)[:3]
        assert [m.id for m in listed] == [m.id for m in newest]
