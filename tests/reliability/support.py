"""Shared by the durability tests: a log-backed core over given stores, and polling."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from memoryd.durability.durable_store import Durability
from memoryd.durability.wal import WriteAheadLog
from memoryd.resilience.degradation import ComponentStates


async def open_core(
    tmp: Path,
    store: Any,
    records: Any,
    *,
    apply_behind: int = 0,
    apply_delay_s: float = 0.0,
    reopen: Any = None,
) -> Durability:
    """A Durability on a log in ``tmp`` with fast checkpoints and retries, opened
    (the log replayed into ``store`` and ``records``; with ``reopen``, the stores are
    not open yet and that opens them)."""
    core = Durability(
        WriteAheadLog(tmp / "wal"),
        store,
        records,
        states=ComponentStates(),
        store_dir=tmp,
        checkpoint_interval_s=0.05,
        retry_max_s=0.2,
        apply_behind=apply_behind,
        apply_delay_s=apply_delay_s,
        reopen=reopen,
    )
    await core.open(store_open=reopen is None)
    return core


async def until(cond: Any) -> None:
    async with asyncio.timeout(30):
        while not cond():  # noqa: ASYNC110 - polling with a deadline, state has no event
            await asyncio.sleep(0.01)
