"""Context variables set for the length of a block.

The daemon passes per-call state down a call's path in context variables (a call's
degradation reasons, the admissions its audit events ride on, a transaction's writes,
the stamp of the write just logged): each is set when a block starts and must be back
to what it was however the block ends, or the state would leak into whatever the task
runs next.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def bound(var: ContextVar[T], value: T) -> Iterator[None]:
    """``var`` is ``value`` while the block runs (in this task and the tasks it starts),
    and what it was before once the block ends, by return or raise."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)
