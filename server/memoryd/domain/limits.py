"""The ranges every stored number and id must stay in, and checked arithmetic on them.

Stores hold versions and counters as int64 and timestamps as microseconds, but a value
is bounded far below that here: versions and counters stay exact in a double (the
TypeScript client and JSON readers see int64 as a JavaScript number), and an imported
version leaves room for more writes than any record will ever get. Ids that name a
tenant or an agent become path segments (key-history archives) and log fields, so they
are a plain alphabet, matched in full, and never only dots.
"""

from __future__ import annotations

import re
from datetime import timedelta

from memoryd.domain.errors import FailedPrecondition

#: Highest version (and counter) a record may hold: 2^53 - 1.
MAX_VERSION = 2**53 - 1
#: Highest version an Import accepts: leaves 2^53 - 2^52 (> 4.5e15) writes of room.
MAX_IMPORTED_VERSION = 2**52
#: Highest value of a statistics counter (access counts, message counts).
MAX_COUNT = 2**53 - 1
#: protobuf Duration's valid range: +-10,000 years.
MAX_DURATION_SECONDS = 315_576_000_000
#: Longest TTL a record may carry (keeps expiry instants far from datetime's end).
MAX_TTL = timedelta(days=36_500)

#: Tenant and agent ids: 1..128 letters, digits, "_", ".", ":", "@" or "-".
ID_PATTERN = re.compile(r"[\w.:@-]{1,128}")
ID_RULE = "must be 1-128 characters of letters, digits, '.', ':', '@', '_' or '-', not only dots"


def id_problem(value: str) -> str | None:
    """Why ``value`` is not a valid tenant or agent id (None when it is)."""
    if not value:
        return "must not be empty"
    if ID_PATTERN.fullmatch(value) is None or not value.strip("."):
        return ID_RULE
    return None


def next_version(current: int) -> int:
    """The version after ``current``; FAILED_PRECONDITION past MAX_VERSION (the record
    cannot be written again, rather than overflowing what the store holds)."""
    if current >= MAX_VERSION:
        raise FailedPrecondition(
            f"the record is at version {current}, the highest a record may reach "
            f"({MAX_VERSION}); it cannot be written again"
        )
    return max(current, 0) + 1
