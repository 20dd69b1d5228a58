"""A circuit breaker: closed -> open after consecutive failures -> half-open probe.

Closed: calls go through. After ``failure_threshold`` consecutive failures it opens:
callers take their fallback at once instead of waiting for a timeout. After
``reset_after_s`` one caller is let through as the probe (half-open); its success
closes the breaker, its failure opens it again for another (doubled, capped) wait.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable


class BreakerState(enum.StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        *,
        failure_threshold: int = 3,
        reset_after_s: float = 2.0,
        max_reset_after_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[BreakerState], None] | None = None,
    ) -> None:
        self.name = name
        self.failure_threshold = failure_threshold
        self.base_reset_s = reset_after_s
        self.max_reset_s = max_reset_after_s
        self._reset_s = reset_after_s
        self._clock = clock
        self._on_change = on_change
        self.state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self.last_error = ""

    def _to(self, state: BreakerState) -> None:
        if state is not self.state:
            self.state = state
            if self._on_change is not None:
                self._on_change(state)

    def allow(self) -> bool:
        """Whether a call may go to the dependency now (claims the probe when due)."""
        if self.state is BreakerState.CLOSED:
            return True
        if self.state is BreakerState.OPEN and self.probe_due():
            self._to(BreakerState.HALF_OPEN)
            return True
        return False

    @property
    def wait_s(self) -> float:
        """How long an open breaker waits before its next probe."""
        return self._reset_s

    def probe_due(self) -> bool:
        return self.state is BreakerState.OPEN and (
            self._clock() - self._opened_at >= self._reset_s
        )

    def success(self) -> None:
        self._failures = 0
        self._reset_s = self.base_reset_s
        self.last_error = ""
        self._to(BreakerState.CLOSED)

    def failure(self, error: str) -> None:
        self.last_error = error
        self._failures += 1
        if self.state is BreakerState.HALF_OPEN:
            self._reset_s = min(self._reset_s * 2, self.max_reset_s)
            self._open()
        elif self._failures >= self.failure_threshold:
            self._open()

    def _open(self) -> None:
        self._opened_at = self._clock()
        self._to(BreakerState.OPEN)
