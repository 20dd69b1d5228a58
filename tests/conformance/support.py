"""Builders, comparisons and an independent reference of the filter semantics."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    Partition,
    TagMatch,
    Vector,
)
from memoryd.storage.base import ListPage, Store

DIM = 16
BASE = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

#: Tenant / agent ids that would break naive SQL or filter-string building.
NASTY = [
    "x' OR '1'='1",
    "a'; DELETE FROM memories; --",
    "'",
    "''",
    "back\\slash\\",
    "\\'",
    "100%_",
    '"double"',
    "SELECT * FROM memories",
    "NULL",
    "ünïcødé 漢字 🙂",
    "new\nline\ttab",
    "",
]

_counter = itertools.count()
#: The seed stream of make_memory's default vectors ("mem").
_DEFAULT_STREAM = 0x6D656D


def unit_vector(rng: np.random.Generator, dim: int = DIM) -> Vector:
    v = rng.normal(size=dim).astype(np.float32)
    out: Vector = (v / np.linalg.norm(v)).astype(np.float32)
    return out


def make_memory(
    partition: Partition,
    *,
    rng: np.random.Generator | None = None,
    id: str | None = None,
    **fields: Any,
) -> Memory:
    """A valid record of ``partition``; ``fields`` override the defaults."""
    n = next(_counter)
    # Seeded apart from the tests' own default_rng(k) streams: with the bare counter as the
    # seed, the n-th memory's vector equalled a test's query seeded with n (an exact tie
    # that made a ranking depend on which tests ran before in the worker).
    rng = rng if rng is not None else np.random.default_rng((_DEFAULT_STREAM, n))
    fields.setdefault("content", f"memory {n}")
    fields.setdefault("created_at", BASE + timedelta(seconds=n))
    fields.setdefault("updated_at", fields["created_at"])
    fields.setdefault("vector", unit_vector(rng))
    return Memory(
        id=id if id is not None else f"m-{n:06d}",
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        **fields,
    )


def assert_same(actual: Memory, expected: Memory, *, vector: bool) -> None:
    """Field-by-field equality; vectors to float32 precision, or absent."""
    for name in (f.name for f in dataclasses.fields(Memory)):
        if name == "vector":
            continue
        if name == "metadata_json":  # a spelling: a store returns what it wrote
            assert actual.metadata_text() == expected.metadata_text()
            continue
        got, want = getattr(actual, name), getattr(expected, name)
        assert got == want, f"{name}: {got!r} != {want!r}"
        if isinstance(want, datetime):
            assert got.utcoffset() == timedelta(0), f"{name} is not returned in UTC"
    if vector:
        assert actual.vector is not None
        assert actual.vector.dtype == np.float32
        np.testing.assert_array_equal(actual.vector, np.asarray(expected.vector, np.float32))
    else:
        assert actual.vector is None


def reference_match(m: Memory, flt: MemoryFilter) -> bool:
    """The filter semantics, written independently of every backend."""
    checks = [
        flt.namespace is None or m.namespace == flt.namespace,
        not flt.tags
        or (
            set(flt.tags) <= set(m.tags)
            if flt.tag_match == TagMatch.ALL
            else bool(set(flt.tags) & set(m.tags))
        ),
        not flt.memory_types or m.memory_type in flt.memory_types,
        int(m.security_level) <= int(flt.max_security_level),
        flt.created_after is None or m.created_at > flt.created_after,
        flt.created_before is None or m.created_at < flt.created_before,
        flt.include_archived or not m.archived,
        flt.not_expired_at is None or m.expires_at is None or m.expires_at > flt.not_expired_at,
        flt.trust is None
        or (m.source.kind in flt.trust.kinds if m.source else flt.trust.unattributed),
    ]
    return all(checks)


async def assert_filter(
    store: Store, partition: Partition, flt: MemoryFilter, expected: set[str]
) -> None:
    """count, list and search all select exactly ``expected`` under ``flt``."""
    assert await store.count(partition, flt) == len(expected)
    listed = await store.list(partition, flt, ListPage(limit=10_000))
    assert {m.id for m in listed} == expected
    assert len(listed) == len(expected)
    query = unit_vector(np.random.default_rng(7))
    hits = await store.search(partition, query, flt, limit=10_000)
    assert {h.memory.id for h in hits} == expected
    assert len(hits) == len(expected)
