"""The write-ahead log carries a memory's event time, and reads entries logged before
event times existed (no "oa" key) as memories without one."""

from __future__ import annotations

from datetime import UTC, datetime

import msgpack  # type: ignore[import-untyped]
import numpy as np

from memoryd.domain.models import Memory, Partition
from memoryd.durability.ops import Op, decode, encode

P = Partition("t", "a")
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def _memory(occurred_at: datetime | None) -> Memory:
    return Memory(
        id="m1",
        tenant_id=P.tenant_id,
        agent_id=P.agent_id,
        content="Kate made pasta with ham and peas",
        created_at=T0,
        updated_at=T0,
        occurred_at=occurred_at,
        vector=np.ones(4, dtype=np.float32) / 2,
    )


def test_event_time_round_trips() -> None:
    when = datetime(2023, 12, 29, 19, 30, tzinfo=UTC)
    (op,) = decode(encode([Op("upsert", P, memories=(_memory(when),))]))
    assert op.memories[0].occurred_at == when
    (op,) = decode(encode([Op("upsert", P, memories=(_memory(None),))]))
    assert op.memories[0].occurred_at is None


def test_an_entry_logged_before_event_times_decodes() -> None:
    payload = encode([Op("upsert", P, memories=(_memory(T0),))])
    raw = msgpack.unpackb(payload, raw=False)
    docs = [d for d in _dicts(raw) if "oa" in d]
    assert docs, "the encoding no longer has the event time under 'oa'"
    for doc in docs:
        del doc["oa"]
    (op,) = decode(msgpack.packb(raw, use_bin_type=True))
    assert op.memories[0].occurred_at is None
    assert op.memories[0].content == "Kate made pasta with ham and peas"


def _dicts(value: object) -> list[dict[str, object]]:
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v))]
    if isinstance(value, list | tuple):
        return [d for v in value for d in _dicts(v)]
    return []
