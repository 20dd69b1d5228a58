"""upsert / get / delete: every field survives, idempotency, replacement, missing ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from memoryd.domain import json_text
from memoryd.domain.errors import StoreError
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.storage.base import Store

from .support import DIM, assert_same, make_memory, unit_vector

P = Partition("tenant-1", "agent-1")
IST = timezone(timedelta(hours=5, minutes=30))


def full_memory() -> Memory:
    """Every field set to a non-default value."""
    return make_memory(
        P,
        id="full-1",
        content="Ünïcødé — 漢字 🙂 \"quotes\" 'single' back\\slash\nnewline\ttab",
        created_at=datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=UTC),
        # A non-UTC offset: must come back as the same instant, in UTC.
        updated_at=datetime(2024, 3, 1, 5, 30, 0, 654321, tzinfo=IST),
        namespace="projects/alpha",
        memory_type=MemoryType.PREFERENCE,
        tags=("likes:tea", "ünï", "with space", "quote'tag"),
        security_level=SecurityLevel.CONFIDENTIAL,
        importance=0.123456789012345,
        confidence=0.75,
        source=Provenance(
            kind=ProvenanceKind.WEB,
            name="search-tool",
            retrieved_at=datetime(2024, 2, 28, 1, 2, 3, 4, tzinfo=UTC),
            locator="https://example.com/a?b=c&d='e'",
        ),
        metadata={
            "nested": {"list": [1, 2.5, "three", None, True], "obj": {"k": "v"}},
            "unicode": "漢字",
            "empty": {},
            "big": 2**53,
        },
        accessed_at=datetime(2024, 3, 2, 0, 0, 0, 1, tzinfo=UTC),
        access_count=42,
        version=7,
        archived=True,
        expires_at=datetime(2099, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        key="user.favourite_drink",
        embedding_model="all-MiniLM-L6-v2",
        embedding_dimension=DIM,
        supersedes="older-id",
        # In another offset too: an event time comes back as the same instant, in UTC.
        occurred_at=datetime(2023, 12, 29, 21, 15, 0, 250000, tzinfo=IST),
    )


def minimal_memory() -> Memory:
    """Every optional field left at its default (None / empty)."""
    return make_memory(
        P,
        id="min-1",
        content="",
        created_at=datetime(1999, 1, 1, tzinfo=UTC),
        updated_at=datetime(1999, 1, 1, tzinfo=UTC),
    )


async def test_every_field_round_trips(store: Store) -> None:
    full, minimal = full_memory(), minimal_memory()
    assert minimal.source is None and minimal.accessed_at is None and minimal.expires_at is None
    await store.upsert(P, [full, minimal])
    got = {m.id: m for m in await store.get(P, ["full-1", "min-1"], with_vectors=True)}
    assert_same(got["full-1"], full, vector=True)
    assert_same(got["min-1"], minimal, vector=True)


async def test_metadata_keeps_its_writers_spelling(store: Store) -> None:
    text = '{"price":1.50,"e":1e2,"big":12345678901234567,"z":-0,"n":{"r":0.10,"l":[2E-3]}}'
    m = make_memory(P, metadata=json_text.parse(text), metadata_json=text)
    await store.upsert(P, [m])
    [got] = await store.get(P, [m.id], with_vectors=True)
    assert got.metadata_text() == text
    # The daemon adds to the metadata (a relation, a dedup record): what it left
    # alone keeps its spelling.
    got.metadata = {**got.metadata, "n": {**got.metadata["n"], "r": 0.2}, "memoryd:x": 1}
    await store.upsert(P, [got])
    [again] = await store.get(P, [m.id])
    assert again.metadata_text() == (
        '{"price":1.50,"e":1e2,"big":12345678901234567,"z":-0,"n":{"r":0.2,"l":[2E-3]},'
        '"memoryd:x":1}'
    )
    assert again.metadata["price"] == 1.5


async def test_provenance_without_optional_parts(store: Store) -> None:
    m = make_memory(P, source=Provenance(kind=ProvenanceKind.USER))
    await store.upsert(P, [m])
    [got] = await store.get(P, [m.id])
    assert got.source == Provenance(kind=ProvenanceKind.USER)


async def test_get_without_vectors_omits_them(store: Store) -> None:
    m = make_memory(P)
    await store.upsert(P, [m])
    [got] = await store.get(P, [m.id])
    assert_same(got, m, vector=False)


async def test_returned_records_are_copies(store: Store) -> None:
    m = make_memory(P, metadata={"a": [1]}, tags=("x",))
    await store.upsert(P, [m])
    m.metadata["a"].append(2)
    m.content = "changed by caller"
    [got] = await store.get(P, [m.id])
    assert got.metadata == {"a": [1]} and got.content != "changed by caller"
    got.metadata["a"].append(3)
    [again] = await store.get(P, [m.id])
    assert again.metadata == {"a": [1]}


async def test_upsert_is_idempotent(store: Store) -> None:
    m = make_memory(P)
    await store.upsert(P, [m])
    await store.upsert(P, [m])
    assert await store.count(P, MemoryFilter()) == 1
    assert [x.id for x in await store.get(P, [m.id])] == [m.id]


async def test_upsert_replaces_every_field(store: Store) -> None:
    old = make_memory(P, id="r", tags=("a",), metadata={"v": 1})
    await store.upsert(P, [old])
    new = full_memory()
    new.id = "r"
    new.vector = unit_vector(np.random.default_rng(99))
    await store.upsert(P, [new])
    [got] = await store.get(P, ["r"], with_vectors=True)
    assert_same(got, new, vector=True)
    assert await store.count(P, MemoryFilter(include_archived=True)) == 1


async def test_duplicate_ids_in_one_call_keep_the_last(store: Store) -> None:
    first = make_memory(P, id="dup", content="first")
    last = make_memory(P, id="dup", content="last")
    await store.upsert(P, [first, last])
    got = await store.get(P, ["dup"])
    assert [m.content for m in got] == ["last"]


async def test_upsert_of_nothing_is_a_no_op(store: Store) -> None:
    await store.upsert(P, [])
    assert await store.count(P, MemoryFilter()) == 0


async def test_get_omits_missing_ids_and_follows_request_order(store: Store) -> None:
    a, b, c = (make_memory(P, id=i) for i in ("a", "b", "c"))
    await store.upsert(P, [a, b, c])
    got = await store.get(P, ["c", "missing", "a", "a"])
    assert [m.id for m in got] == ["c", "a"]
    assert await store.get(P, []) == []
    assert await store.get(P, ["nope"]) == []


async def test_get_many_ids(store: Store) -> None:
    ms = [make_memory(P, id=f"bulk-{i:04d}") for i in range(1500)]
    await store.upsert(P, ms)
    ids = [m.id for m in ms]
    got = await store.get(P, [*ids, "missing"])
    assert [m.id for m in got] == ids


async def test_delete_returns_only_existing_ids(store: Store) -> None:
    a, b = make_memory(P, id="a"), make_memory(P, id="b")
    await store.upsert(P, [a, b])
    assert await store.delete(P, ["a", "missing", "a"]) == ["a"]
    assert [m.id for m in await store.get(P, ["a", "b"])] == ["b"]
    assert await store.delete(P, ["a"]) == []
    assert await store.delete(P, []) == []
    assert await store.count(P, MemoryFilter()) == 1


async def test_deleted_id_can_be_written_again(store: Store) -> None:
    m = make_memory(P, id="again")
    await store.upsert(P, [m])
    await store.delete(P, ["again"])
    await store.upsert(P, [m])
    assert [x.id for x in await store.get(P, ["again"])] == ["again"]


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda m: setattr(m, "tenant_id", "other"), id="other-tenant"),
        pytest.param(lambda m: setattr(m, "agent_id", "other"), id="other-agent"),
        pytest.param(lambda m: setattr(m, "vector", None), id="no-vector"),
        pytest.param(lambda m: setattr(m, "vector", np.ones(DIM + 1, np.float32)), id="dim"),
        pytest.param(
            lambda m: setattr(m, "vector", np.full(DIM, np.nan, np.float32)), id="nan-vector"
        ),
        pytest.param(lambda m: setattr(m, "vector", np.zeros(DIM, np.float32)), id="zero-vector"),
    ],
)
async def test_upsert_rejects_invalid_records(store: Store, mutate: object) -> None:
    good, bad = make_memory(P), make_memory(P)
    assert callable(mutate)
    mutate(bad)
    with pytest.raises(ValueError):
        await store.upsert(P, [good, bad])
    assert await store.count(P, MemoryFilter()) == 0


async def test_closed_store_raises_store_error(store: Store) -> None:
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError):
        await store.get(P, ["x"])
    with pytest.raises(StoreError):
        await store.upsert(P, [make_memory(P)])
