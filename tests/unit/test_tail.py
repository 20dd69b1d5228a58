"""lines_backwards: the last lines of a file first, whatever the chunk size."""

from __future__ import annotations

import io

import pytest

from memoryd.tail import lines_backwards


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
@pytest.mark.parametrize(
    "data",
    [b"", b"a", b"a\n", b"one\ntwo\n", b"one\ntwo\nthr", b"\n\n", b"long line\nx\n\nyz"],
)
def test_lines_backwards_is_split_reversed(data: bytes, chunk: int) -> None:
    expected = list(reversed(data.split(b"\n"))) if data else []
    assert list(lines_backwards(io.BytesIO(data), len(data), chunk)) == expected


def test_lines_backwards_stops_at_end() -> None:
    """Bytes past ``end`` (appended after the caller measured the file) are not read."""
    f = io.BytesIO(b"one\ntwo\nappended")
    assert list(lines_backwards(f, 8, 3)) == [b"", b"two", b"one"]
