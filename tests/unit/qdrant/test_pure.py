"""The Qdrant backend's pure parts: point ids, key order, instants, sparse vectors,
filter building and the keyset pager (checked against a brute-force reference)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from qdrant_client import models

from memoryd.domain.models import MemoryFilter, MemoryType, Partition, SecurityLevel, TagMatch
from memoryd.domain.records import RecordKind
from memoryd.storage.instants import from_micros, to_micros
from memoryd.storage.qdrant import sparse
from memoryd.storage.qdrant.filters import memory_conditions, scoped
from memoryd.storage.qdrant.paging import Group, Row, Scan, keyset_page
from memoryd.storage.qdrant.schema import (
    key_order,
    memory_collection,
    memory_point_id,
    record_collection,
    record_point_id,
)

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


@given(a=st.tuples(_text, _text, _text), b=st.tuples(_text, _text, _text))
def test_point_ids_differ_whenever_partition_or_id_differs(
    a: tuple[str, str, str], b: tuple[str, str, str]
) -> None:
    same = memory_point_id(Partition(a[0], a[1]), a[2]) == memory_point_id(
        Partition(b[0], b[1]), b[2]
    )
    assert same == (a == b)


def test_point_ids_resist_concatenation_collisions() -> None:
    ids = {
        memory_point_id(Partition("ab", "c"), "d"),
        memory_point_id(Partition("a", "bc"), "d"),
        memory_point_id(Partition("a", "b"), "cd"),
        record_point_id(Partition("a", "b"), RecordKind.KEY, "cd"),
        record_point_id(Partition("a", "b"), RecordKind.SESSION, "cd"),
    }
    assert len(ids) == 5


@given(a=_text, b=_text)
def test_key_order_is_monotone_in_utf8_byte_order(a: str, b: str) -> None:
    if a.encode() < b.encode():
        assert key_order(a) <= key_order(b)
    # Exact as a double: Qdrant carries range bounds as f64.
    assert float(key_order(a)) == key_order(a)


@given(
    st.datetimes(
        min_value=datetime(1900, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30))]),
    )
)
def test_micros_round_trip_to_the_same_instant_in_utc(t: datetime) -> None:
    back = from_micros(to_micros(t))
    assert back == t and back.utcoffset() == timedelta(0)
    assert float(to_micros(t)) == to_micros(t)


def test_collections_follow_the_multitenancy_guide() -> None:
    spec = memory_collection("p_", 384)
    assert (spec.name, spec.dense_size, spec.sparse) == ("p_memories", 384, ("text",))
    assert (spec.hnsw.m, spec.hnsw.payload_m) == (0, 16)
    tenant = spec.indexes["tenant_id"]
    assert isinstance(tenant, models.KeywordIndexParams) and tenant.is_tenant
    others = [v for k, v in spec.indexes.items() if k != "tenant_id"]
    assert others and all(getattr(v, "enable_hnsw", None) is False for v in others)
    names = {record_collection("p_", kind).name for kind in RecordKind}
    assert len(names) == len(RecordKind) and "p_records_session" in names


def test_sparse_vectors_use_the_shared_tokenizer() -> None:
    doc = sparse.document_vector("Cats and cats and dogs")
    assert doc is not None
    weights = dict(zip(doc.indices, doc.values, strict=True))
    cat, dog = sparse.term_index("cat"), sparse.term_index("dog")
    assert set(weights) == {cat, dog}  # stemmed, stop words dropped
    assert weights[cat] > weights[dog] > 0  # term frequency, saturating
    assert weights[cat] < 2 * weights[dog]
    query = sparse.query_vector("cat CATS dog")
    assert query is not None and sorted(query.indices) == sorted([cat, dog])
    assert query.values == [1.0, 1.0]
    assert sparse.query_vector("the of and ?!") is None
    assert sparse.document_vector("") is None


def test_longer_documents_weigh_a_term_less() -> None:
    short = sparse.document_vector("apple pie")
    long = sparse.document_vector("apple " + " ".join(f"word{i}" for i in range(60)))
    assert short is not None and long is not None
    idx = sparse.term_index("appl")
    w_short = dict(zip(short.indices, short.values, strict=True))[idx]
    w_long = dict(zip(long.indices, long.values, strict=True))[idx]
    assert w_short > w_long


def _must(flt: models.Filter) -> list[object]:
    assert isinstance(flt.must, list)
    return flt.must


def test_every_filter_starts_with_the_partition() -> None:
    p = Partition("t' OR 1=1", "")
    must = _must(scoped(p, *memory_conditions(MemoryFilter())))
    assert must[:2] == [
        models.FieldCondition(key="tenant_id", match=models.MatchValue(value="t' OR 1=1")),
        models.FieldCondition(key="agent_id", match=models.MatchValue(value="")),
    ]


def test_filter_translation() -> None:
    now = datetime(2024, 1, 1, tzinfo=UTC)
    flt = MemoryFilter(
        namespace="ns",
        tags=("a", "b", "a"),
        tag_match=TagMatch.ALL,
        memory_types=(MemoryType.FACT,),
        max_security_level=SecurityLevel.INTERNAL,
        created_after=now,
        include_archived=True,
        not_expired_at=now,
    )
    conds = memory_conditions(flt)
    tags = [c for c in conds if isinstance(c, models.FieldCondition) and c.key == "tags"]
    assert [c.match for c in tags] == [models.MatchValue(value="a"), models.MatchValue(value="b")]
    ceiling = next(
        c for c in conds if isinstance(c, models.FieldCondition) and c.key == "security_level"
    )
    assert ceiling.range == models.Range(lte=2)
    assert not any(isinstance(c, models.FieldCondition) and c.key == "archived" for c in conds)
    expiry = next(c for c in conds if isinstance(c, models.Filter))
    assert expiry.should is not None and len(expiry.should) == 2
    anyof = memory_conditions(MemoryFilter(tags=("a", "b")))
    assert models.FieldCondition(key="tags", match=models.MatchAny(any=["a", "b"])) in anyof
    assert models.FieldCondition(key="archived", match=models.MatchValue(value=0)) in anyof


# -- the keyset pager against a sorted list ----------------------------------------------

_rows = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(["a", "b", "c", "ä", "\x00", "b\x00", "z"])),
    unique=True,
    max_size=25,
)


def _fake(rows: list[tuple[int, str]], descending: bool) -> tuple[Scan, Group]:
    """scan/group as an engine would answer them: by value only, ties in random order."""
    rng = random.Random(len(rows))
    data = [Row(v, t, models.Record(id=str(i))) for i, (v, t) in enumerate(rows)]

    async def scan(beyond: int | None, n: int) -> list[Row]:
        left = [
            r
            for r in data
            if beyond is None or (r.value < beyond if descending else r.value > beyond)
        ]
        rng.shuffle(left)
        left.sort(key=lambda r: r.value, reverse=descending)  # stable: ties stay shuffled
        return left[:n]

    async def group(value: int) -> list[Row]:
        same = [r for r in data if r.value == value]
        rng.shuffle(same)
        return same

    return scan, group


@given(rows=_rows, page=st.integers(1, 8), descending=st.booleans())
async def test_pages_visit_every_row_once_in_order(
    rows: list[tuple[int, str]], page: int, descending: bool
) -> None:
    scan, group = _fake(rows, descending)
    seen: list[tuple[int, str]] = []
    after: tuple[int, str] | None = None
    for _ in range(len(rows) + 2):
        got = await keyset_page(
            descending=descending, after=after, limit=page, scan=scan, group=group
        )
        assert len(got) <= page
        if not got:
            break
        seen.extend((r.value, r.tie) for r in got)
        after = seen[-1]
    assert seen == sorted(rows, reverse=descending)


@pytest.mark.parametrize("descending", [False, True])
async def test_cursor_need_not_exist(descending: bool) -> None:
    rows = [(1, "a"), (1, "c"), (2, "b")]
    scan, group = _fake(rows, descending)
    got = await keyset_page(descending=descending, after=(1, "b"), limit=10, scan=scan, group=group)
    expected = [(1, "a")] if descending else [(1, "c"), (2, "b")]
    assert [(r.value, r.tie) for r in got] == expected
