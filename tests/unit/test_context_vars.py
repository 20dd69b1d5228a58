"""memoryd.context_vars.bound: a context variable set for a block, back to what it was
however the block ends (the degradation collector, audit admissions, a transaction's
writes and the write stamp all rely on it)."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar

import pytest

from memoryd.context_vars import bound

_VAR: ContextVar[str | None] = ContextVar("test_bound", default=None)


def test_the_value_holds_in_the_block_and_the_previous_one_comes_back() -> None:
    with bound(_VAR, "outer"):
        with bound(_VAR, "inner"):
            assert _VAR.get() == "inner"
        assert _VAR.get() == "outer"
    assert _VAR.get() is None


def test_a_block_that_raises_resets_the_variable() -> None:
    with pytest.raises(RuntimeError), bound(_VAR, "set"):
        raise RuntimeError("the block fails")
    assert _VAR.get() is None


async def test_tasks_started_in_the_block_see_the_value() -> None:
    async def read() -> str | None:
        return _VAR.get()

    with bound(_VAR, "call"):
        seen = await asyncio.create_task(read())
    assert seen == "call"
    assert await asyncio.create_task(read()) is None
