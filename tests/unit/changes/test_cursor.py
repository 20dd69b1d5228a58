"""Watch cursors: a round trip keeps the position; a cursor of another tenant, agent,
scope or log, a tampered one and garbage are all INVALID_ARGUMENT on ``cursor`` with
one message; the payload (the log's sequence, which counts every tenant's writes)
cannot be read from the cursor."""

from __future__ import annotations

import base64

import pytest

from memoryd.domain.errors import InvalidArgument
from memoryd.service.changes.cursor import INVALID, Binding, CursorCodec, Position
from memoryd.service.common.pagination import PageTokenCodec

MINE = Binding("log-1", "tenant-a", "agent-1")
CODEC = CursorCodec(PageTokenCodec(b"s" * 32))


@pytest.mark.parametrize("position", [Position(0), Position(41), Position(7, 2)])
def test_a_cursor_names_its_position(position: Position) -> None:
    assert CODEC.decode(CODEC.encode(position, MINE), MINE) == position


@pytest.mark.parametrize(
    "other",
    [
        Binding("log-1", "tenant-b", "agent-1"),
        Binding("log-1", "tenant-a", "agent-2"),
        Binding("log-1", "tenant-a", ""),
        Binding("log-2", "tenant-a", "agent-1"),
    ],
    ids=["tenant", "agent", "tenant-wide", "log"],
)
def test_a_cursor_is_valid_only_where_it_was_issued(other: Binding) -> None:
    cursor = CODEC.encode(Position(5), other)
    with pytest.raises(InvalidArgument) as err:
        CODEC.decode(cursor, MINE)
    assert [(v.field, v.description) for v in err.value.violations] == [("cursor", INVALID)]


def test_tampered_garbage_and_other_secrets_are_refused() -> None:
    cursor = CODEC.encode(Position(5), MINE)
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[20] ^= 1
    flipped = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    other_secret = CursorCodec(PageTokenCodec(b"t" * 32)).encode(Position(5), MINE)
    for bad in (flipped, other_secret, "", "garbage", "!!!", cursor[:10]):
        with pytest.raises(InvalidArgument):
            CODEC.decode(bad, MINE)


def test_the_payload_cannot_be_read() -> None:
    cursor = CODEC.encode(Position(123456789), MINE)
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert b"123456789" not in raw and b"tenant-a" not in raw
    # Two cursors of the same position differ (a fresh nonce each).
    assert CODEC.encode(Position(1), MINE) != CODEC.encode(Position(1), MINE)
