"""Fixed instants for tests that depend on "now", a clock that steps from one, and a CPU
clock that counts its reads.

Relative dates in a query ("on friday", "last week"), expiry and recency decay all
read the service's clock. Tests inject :class:`SteppingClock` instead of reading the
machine's, and the time-sensitive ones run at every instant of :data:`INSTANTS`, so
the suite passes on any weekday, at any hour, in any timezone.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

#: A Saturday a moment before midnight, a Friday that starts a year, a leap day.
INSTANTS = (
    datetime(2026, 11, 28, 23, 59, 30, tzinfo=UTC),
    datetime(2027, 1, 1, 0, 0, 10, tzinfo=UTC),
    datetime(2024, 2, 29, 12, 0, tzinfo=UTC),
)


class SteppingClock:
    """A clock that starts at ``start`` and moves one microsecond per reading:
    deterministic, and strictly increasing like the real one."""

    def __init__(self, start: datetime) -> None:
        self._now = start

    def __call__(self) -> datetime:
        self._now += timedelta(microseconds=1)
        return self._now

    def advance(self, delta: timedelta) -> None:
        """Let ``delta`` pass (an expiry, a decay) without sleeping."""
        self._now += delta


class CountingCpu:
    """A CPU clock for schema evaluations in threads (ThreadEvaluator): each read is
    ``per_read_s`` of CPU, and a budget look reads it once per 64 Python calls, so an
    evaluation costs the work it does. The thread's real CPU time would also charge it
    for a garbage collection of the whole test process run in that thread (a trivial
    schema was refused after 339 ms of it in the suite)."""

    def __init__(self, per_read_s: float = 0.0001) -> None:
        self._reads = itertools.count()
        self._per_read_s = per_read_s

    def __call__(self) -> float:
        return next(self._reads) * self._per_read_s
