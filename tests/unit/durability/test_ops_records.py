"""The write-ahead log carries a record's document as its JSON text: integers past
64 bits (which msgpack cannot hold) are logged as every store keeps them, and entries
of older daemons (the document as a msgpack map) still decode."""

from __future__ import annotations

from datetime import UTC, datetime

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest

from memoryd.domain.models import Memory, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.durability.ops import Op, decode, encode

P = Partition("t", "a")
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
DOC = {"big": 2**64 + 1, "neg": -(2**70), "f": 0.1, "u": "漢字", "n": None}


def _put(doc: dict[str, object]) -> Op:
    return Op("put_records", P, records=(Record(RecordKind.KEY, "/k", doc, 3, T0),))


def test_a_document_with_integers_past_64_bits_round_trips() -> None:
    (op,) = decode(encode([_put(DOC)]))
    [record] = op.records
    assert record.doc == DOC and record.version == 3 and record.updated_at == T0


def test_the_document_is_logged_as_json_text() -> None:
    [item] = msgpack.unpackb(encode([_put({"a": [1, 2]})]), raw=False)
    assert item["r"][0][2] == '{"a":[1,2]}'


def test_an_entry_of_an_older_daemon_decodes() -> None:
    old = [{"o": "put_records", "p": ["t", "a"], "r": [["key", "/k", {"a": 1}, 3, 0, None]]}]
    (op,) = decode(msgpack.packb(old, use_bin_type=True))
    assert op.records[0].doc == {"a": 1}


def test_a_number_the_log_cannot_hold_is_a_value_error() -> None:
    m = Memory(
        id="m",
        tenant_id="t",
        agent_id="a",
        content="x",
        created_at=T0,
        updated_at=T0,
        metadata={"huge": 2**70},
        vector=np.ones(4, dtype=np.float32) / 2,
    )
    with pytest.raises(ValueError, match="cannot be logged"):
        encode([Op("upsert", P, memories=(m,))])
