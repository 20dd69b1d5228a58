"""memoryd.aio.Repeating: the background rounds of the partition counter and the
re-embedder."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from memoryd.aio import Repeating


async def test_a_failed_round_is_logged_and_the_next_one_runs() -> None:
    rounds: list[int] = []
    third = asyncio.Event()

    async def round_() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 1:
            raise OSError("store unreachable")
        if len(rounds) == 3:
            third.set()

    repeating = Repeating(round_, 0, name="test-rounds", failed="test round failed")
    with capture_logs() as logs:
        repeating.start()
        await third.wait()
        await repeating.close()
    assert rounds[:3] == [0, 1, 2]
    failures = [e for e in logs if e["event"] == "test round failed"]
    assert failures == [
        {"event": "test round failed", "error": "store unreachable", "log_level": "warning"}
    ]


async def test_close_stops_the_rounds() -> None:
    started = asyncio.Event()
    rounds = 0

    async def round_() -> None:
        nonlocal rounds
        rounds += 1
        started.set()

    repeating = Repeating(round_, 0, name="test-rounds", failed="unused")
    repeating.start()
    await started.wait()
    await repeating.close()
    after_close = rounds
    for _ in range(5):
        await asyncio.sleep(0)
    assert rounds == after_close
    await repeating.close()  # a second close is harmless
