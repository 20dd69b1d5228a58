"""Keyset pages in (value, tie) order over Qdrant, which orders by one payload field.

Qdrant's ``order_by`` sorts by a single numeric payload field (created_at for
memories, a key prefix for records) and leaves equal values in no defined order.
A page therefore takes ``limit`` rows by value, keeps the value groups it saw
completely, and reads the one group that may have been cut (every row with the
last value) in full to order it by the tie-breaker (memory id, full key). The
cursor's own group is read the same way. Each page costs one ordered scroll plus at
most two group reads; only groups of equal values are ever sorted here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from qdrant_client import models


@dataclass(frozen=True, slots=True)
class Row:
    value: int
    tie: str
    record: models.Record


#: (strictly beyond this value or None, at most n) -> rows in order by value.
Scan = Callable[[int | None, int], Awaitable[list[Row]]]
#: value -> every row with exactly that value (any order).
Group = Callable[[int], Awaitable[list[Row]]]


async def keyset_page(
    *,
    descending: bool,
    after: tuple[int, str] | None,
    limit: int,
    scan: Scan,
    group: Group,
) -> list[Row]:
    """Up to ``limit`` rows strictly after ``after`` in (value, tie) order."""
    if limit <= 0:
        return []

    def key(r: Row) -> tuple[int, str]:
        return (r.value, r.tie)

    out: list[Row] = []
    beyond: int | None = None
    if after is not None:
        value, tie = after
        same = await group(value)
        rest = [r for r in same if (r.tie < tie if descending else r.tie > tie)]
        out.extend(sorted(rest, key=key, reverse=descending)[:limit])
        beyond = value
    need = limit - len(out)
    if need <= 0:
        return out
    rows = await scan(beyond, need)
    if len(rows) < need:
        # Everything that is left: every group in it is complete.
        out.extend(sorted(rows, key=key, reverse=descending))
        return out
    last = rows[-1].value
    out.extend(sorted((r for r in rows if r.value != last), key=key, reverse=descending))
    tail = sorted(await group(last), key=key, reverse=descending)
    out.extend(tail[: limit - len(out)])
    return out
