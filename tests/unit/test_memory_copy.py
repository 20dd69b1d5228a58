"""``Memory.copy`` spells out its fields for speed: it must copy every one of them, and
a copy must be independent of the original for the fields callers set."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np

from memoryd.domain.models import Memory, MemoryType, Provenance, ProvenanceKind, SecurityLevel


def _distinct() -> Memory:
    """Every field set to a value unlike its default, so a field the copy skips shows."""
    t0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return Memory(
        id="id-1",
        tenant_id="tenant-1",
        agent_id="agent-1",
        content="content",
        created_at=t0,
        updated_at=t0 + timedelta(seconds=1),
        namespace="ns",
        memory_type=MemoryType.EPISODE,
        tags=("a", "b"),
        security_level=SecurityLevel.RESTRICTED,
        importance=0.9,
        confidence=0.4,
        source=Provenance(kind=ProvenanceKind.TOOL, name="tool"),
        metadata={"k": [1, 2]},
        accessed_at=t0 + timedelta(seconds=2),
        access_count=7,
        version=3,
        archived=True,
        expires_at=t0 + timedelta(days=1),
        key="key-1",
        embedding_model="model",
        embedding_dimension=4,
        supersedes="id-0",
        occurred_at=t0 - timedelta(days=3),
        vector=np.ones(4, dtype=np.float32),
        metadata_json='{"k":[1,2]}',
    )


def test_copy_carries_every_field() -> None:
    original = _distinct()
    copied = original.copy()
    defaults = Memory(
        id="", tenant_id="", agent_id="", content="", created_at=original.created_at,
        updated_at=original.created_at,
    )  # fmt: skip
    for f in dataclasses.fields(Memory):
        value = getattr(original, f.name)
        if f.name not in ("created_at",):
            # The fixture really exercises the field (else a skipped field could pass).
            assert not _same(value, getattr(defaults, f.name)), f.name
        assert getattr(copied, f.name) is value, f.name


def test_copy_is_a_new_object() -> None:
    original = _distinct()
    copied = original.copy()
    assert copied is not original
    copied.vector = None
    copied.access_count += 1
    assert original.vector is not None
    assert original.access_count == 7


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a == b
