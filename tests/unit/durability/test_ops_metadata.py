"""A write-ahead log entry carries a memory's metadata as its writer spelled it, so a
write replayed after a crash stores 1.50 as 1.50 (durability/ops.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgpack  # type: ignore[import-untyped]

from memoryd.domain import json_text
from memoryd.domain.models import Memory, Partition
from memoryd.durability.ops import Op, decode, encode

P = Partition("t", "a")
T0 = datetime(2026, 1, 2, tzinfo=UTC)


def test_metadata_text_survives_the_log() -> None:
    text = '{"price":1.50,"e":1e2,"z":-0}'
    m = Memory("m1", "t", "a", "c", T0, T0, metadata=json_text.parse(text), metadata_json=text)
    [op] = decode(encode([Op("upsert", P, memories=(m,))]))
    assert op.memories[0].metadata_json == text
    assert op.memories[0].metadata_text() == text


def test_an_entry_written_before_the_text_was_logged_still_decodes() -> None:
    m = Memory("m1", "t", "a", "c", T0, T0, metadata={"n": 1})
    payload = msgpack.unpackb(encode([Op("upsert", P, memories=(m,))]), raw=False)
    del payload[0]["m"][0]["mj"]
    [op] = decode(msgpack.packb(payload, use_bin_type=True))
    assert op.memories[0].metadata == {"n": 1} and op.memories[0].metadata_json == ""
