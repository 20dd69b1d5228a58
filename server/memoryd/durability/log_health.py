"""Whether the write-ahead log takes writes (used by Durability, durable_store.py).

The log's component state (``wal``, critical: health is not serving without it), and,
while the log is unusable (a full disk, a read-only file system), a probe that tries
an empty entry now and then and reports the log usable again once one is durable.
"""

from __future__ import annotations

import asyncio

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.errors import Unavailable
from memoryd.durability.ops import encode
from memoryd.durability.wal import WalUnusable, WriteAheadLog
from memoryd.resilience.degradation import ComponentStates

log = structlog.get_logger(__name__)

WAL = "wal"
#: Seconds between the probe's tries: the first, and the most (doubling in between).
_FIRST_PROBE_S = 0.5
_MAX_PROBE_S = 5.0


class LogHealth:
    """The ``wal`` component's state, and the probe while the log is unusable."""

    def __init__(self, wal: WriteAheadLog, states: ComponentStates) -> None:
        self._wal = wal
        self._states = states
        self._probe: asyncio.Task[None] | None = None

    def usable(self) -> None:
        """A write was durable: the log takes writes."""
        self._states.set(WAL, ok=True, critical=True)

    def unusable(self, exc: OSError) -> Unavailable:
        """Report the log unusable (probing it until it takes writes again) and return
        what the write that found out raises: nothing was stored."""
        reason = f"write-ahead log unusable: {exc.strerror or exc}; nothing was stored"
        self._states.set(WAL, ok=False, reason=reason, critical=True)
        if self._probe is None or self._probe.done():
            self._probe = asyncio.create_task(self._probe_loop(), name="wal-probe")
        return Unavailable(reason)

    def check(self) -> None:
        """Try an empty entry now (a start in trouble: a full disk?), so that health
        says at once whether writes can be taken."""
        self._probe = asyncio.create_task(self._check(), name="wal-check")

    async def close(self) -> None:
        await cancel_and_wait(self._probe)

    async def _check(self) -> None:
        try:
            _, done = self._wal.submit(encode([]))
            await done
        except WalUnusable as exc:
            self._probe = None
            self.unusable(exc)

    async def _probe_loop(self) -> None:
        """While the log is unusable, try an empty entry now and then."""
        delay = _FIRST_PROBE_S
        while True:
            await asyncio.sleep(delay)
            try:
                _, done = self._wal.submit(encode([]))
                await done
            except WalUnusable:
                delay = min(delay * 2, _MAX_PROBE_S)
                continue
            self.usable()
            log.info("write-ahead log usable again")
            return
