"""Store failures as a client may see them: the one place a backend's exception is
classified.

A backend's own text (file paths, rustc source locations, Lance or Qdrant messages)
never reaches a client: :func:`backend_failure` turns an exception into a StoreError
whose message names the backend, the operation and a class of cause ("no space left
on device", "unreachable", ...), and logs the exception itself. Every backend's
error wrapper calls it; the write-ahead log's degraded reasons use
:func:`public_reason`.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import structlog

from memoryd.domain.errors import MemorydError, StoreError

log = structlog.get_logger(__name__)

NO_SPACE = "no space left on device"
READ_ONLY = "read-only file system"
IO_ERROR = "I/O error"
UNREACHABLE = "unreachable"
TIMED_OUT = "timed out"
DAMAGED = "damaged or missing files"
FAILED = "backend error"
#: Causes that pass by themselves: a retry may succeed, a start waits them out.
TRANSIENT = frozenset({NO_SPACE, READ_ONLY, IO_ERROR, UNREACHABLE, TIMED_OUT})

_BY_ERRNO = {
    errno.ENOSPC: NO_SPACE,
    errno.EDQUOT: NO_SPACE,
    errno.EROFS: READ_ONLY,
    errno.EIO: IO_ERROR,
    errno.ECONNREFUSED: UNREACHABLE,
    errno.EHOSTUNREACH: UNREACHABLE,
    errno.ENETUNREACH: UNREACHABLE,
    errno.ETIMEDOUT: TIMED_OUT,
    errno.ENOENT: DAMAGED,
}
#: Lance and the HTTP/gRPC clients mostly raise RuntimeErrors carrying the OS error's
#: text: matched in order, lower case.
_BY_TEXT = (
    ("no space left", NO_SPACE),
    ("disk quota exceeded", NO_SPACE),
    ("read-only file system", READ_ONLY),
    ("input/output error", IO_ERROR),
    ("connection refused", UNREACHABLE),
    ("connecterror", UNREACHABLE),
    ("failed to connect", UNREACHABLE),
    ("name or service not known", UNREACHABLE),
    ("unavailable", UNREACHABLE),
    ("timed out", TIMED_OUT),
    ("timeout", TIMED_OUT),
    # gRPC's own: a server that accepts the connection and never answers.
    ("deadline exceeded", TIMED_OUT),
    ("sufficient data", DAMAGED),
    ("file size is too small", DAMAGED),
    ("failed to fill whole buffer", DAMAGED),
    ("no such file", DAMAGED),
    ("invalid range", DAMAGED),
    ("not found", DAMAGED),
    ("corrupt", DAMAGED),
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def cause_of(exc: BaseException) -> str:
    """The class of cause of ``exc`` (one of the constants above)."""
    chain = list(_chain(exc))
    for e in chain:
        if isinstance(e, StoreError) and e.cause:
            return e.cause
        if isinstance(e, OSError) and e.errno in _BY_ERRNO:
            return _BY_ERRNO[e.errno]
        if isinstance(e, TimeoutError):
            return TIMED_OUT
        if isinstance(e, ConnectionError):
            return UNREACHABLE
    text = " ".join(f"{type(e).__name__} {e}" for e in chain).lower()
    for needle, cause in _BY_TEXT:
        if needle in text:
            return cause
    return FAILED


def backend_failure(backend: str, op: str, exc: BaseException, *, where: str = "") -> StoreError:
    """The StoreError for a backend call that raised ``exc`` (logged here in full,
    with ``where``: the endpoint, for the log only, never for a client)."""
    cause = cause_of(exc)
    log.warning(
        "store call failed",
        backend=backend,
        op=op,
        cause=cause,
        error=f"{type(exc).__name__}: {exc}",
        **({"where": where} if where else {}),
    )
    return StoreError(f"{backend} {op} failed: {cause}", cause=cause)


def public_reason(exc: BaseException) -> str:
    """What a client may hear about ``exc`` (a degraded reason, a breaker's error):
    memoryd's own messages are written for clients; anything else by its class."""
    if isinstance(exc, MemorydError):
        return exc.message
    return f"{type(exc).__name__} ({cause_of(exc)})"


@asynccontextmanager
async def backend_errors(backend: str, op: str, where: str = "") -> AsyncIterator[None]:
    """Turn any failure of a backend's client into StoreError (never let one escape
    raw); ``where`` (the endpoint) goes to the daemon's log."""
    try:
        yield
    except MemorydError:
        raise
    except Exception as exc:
        raise backend_failure(backend, op, exc, where=where) from exc
