"""Fixed instants for tests that depend on "now", and a clock that steps from one.

Relative dates in a query ("on friday", "last week"), expiry and recency decay all
read the service's clock. Tests inject :class:`SteppingClock` instead of reading the
machine's, and the time-sensitive ones run at every instant of :data:`INSTANTS`, so
the suite passes on any weekday, at any hour, in any timezone.
"""

from __future__ import annotations

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
