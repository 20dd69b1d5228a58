"""Reading a line-per-record file from its end: the audit log's sequence numbers,
its torn last line, and a key's mirror log all want the last lines first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO


def lines_backwards(f: BinaryIO, end: int, chunk: int) -> Iterator[bytes]:
    """The lines of ``f`` before byte ``end``, last first, read ``chunk`` bytes at a
    time. The first is what follows the last newline: b"" when the file ends with
    one, else a line a crash left half-written."""
    rest = b""
    while end > 0:
        start = max(0, end - chunk)
        f.seek(start)
        lines = (f.read(end - start) + rest).split(b"\n")
        end = start
        rest = lines.pop(0) if start > 0 else b""
        yield from reversed(lines)
