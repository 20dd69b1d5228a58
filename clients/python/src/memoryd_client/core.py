"""The one core both clients share: a call is data, the clients only carry it out.

Every RPC helper is a plain function (in ``memoryd_client.ops``) that validates its
arguments, builds the request message and returns a :class:`Unary` or
:class:`ServerStream` describing the call: which stub method, the request, how to map
the response to a typed result, and whether the call is safe to retry. The sync
:class:`~memoryd_client.MemorydClient` and the async
:class:`~memoryd_client.AsyncMemorydClient` expose the same helpers through the
descriptors :class:`Method` and :class:`StreamMethod`, which bind a helper to the
client's way of executing a call (blocking, or ``await``). Nothing about an RPC is
written twice.
"""

from __future__ import annotations

import functools
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypeVar, overload

import grpc

from memoryd_client.errors import MemorydError

if TYPE_CHECKING:
    from memoryd_client.aio import AsyncTransport
    from memoryd_client.transport import SyncTransport

T = TypeVar("T")
P = ParamSpec("P")
Service = Literal["memory", "snapshot", "lifecycle", "health"]


@dataclass(frozen=True, slots=True)
class Unary(Generic[T]):
    """One call with one result.

    ``stream_in``: ``request`` is an iterable of messages (client streaming).
    ``collect``: the server streams events; ``fold`` turns them into the result (long
    operations that report progress). ``fallback``: when the call fails with an error
    it accepts, another call answers instead (e.g. recall when BuildSnapshot is not
    built); it returns None for errors it does not handle.
    """

    service: Service
    method: str
    request: Any
    parse: Callable[[Any], T]
    idempotent: bool
    stream_in: bool = False
    fold: Callable[[], Fold[T]] | None = None
    fallback: Callable[[MemorydError], Unary[T] | None] | None = None


@dataclass(frozen=True, slots=True)
class ServerStream(Generic[T]):
    """A call whose responses are yielded one by one; ``parse`` returns None for
    events that are not items (progress, reported through ``on_event``)."""

    service: Service
    method: str
    request: Any
    parse: Callable[[Any], T | None]
    on_event: Callable[[Any], None] | None = None


class Fold(Generic[T]):
    """Accumulates a server stream of progress events and one final result."""

    def __init__(
        self,
        result_of: Callable[[Any], T | None],
        progress: Callable[[Any], None] | None,
        method: str,
    ) -> None:
        self._result_of = result_of
        self._progress = progress
        self._method = method
        self._result: T | None = None

    def feed(self, response: Any) -> None:
        result = self._result_of(response)
        if result is not None:
            self._result = result
        elif self._progress is not None:
            self._progress(response)

    def result(self) -> T:
        if self._result is None:
            raise MemorydError(
                grpc.StatusCode.UNKNOWN, f"{self._method} ended without sending its result"
            )
        return self._result


# ---------------------------------------------------------------------- retries


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, for UNAVAILABLE only.

    Attempt ``n`` (1-based) that failed waits ``min(max_backoff, initial_backoff *
    multiplier ** (n - 1))``, reduced by a random share of up to ``jitter`` of it
    (``jitter=1``: anywhere from 0 to the full delay, as gRPC's own retry policy does;
    ``jitter=0``: exactly the delay). The call's deadline (``timeout``) covers every
    attempt and wait. ``max_attempts`` counts the first try; 1 disables retries.
    """

    max_attempts: int = 4
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    multiplier: float = 2.0
    jitter: float = 1.0
    retry_on: frozenset[grpc.StatusCode] = field(
        default_factory=lambda: frozenset({grpc.StatusCode.UNAVAILABLE})
    )

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be >= 0 and multiplier >= 1")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """The wait after failed attempt ``attempt`` (1-based)."""
        delay = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        share = (rng or random).random() * self.jitter
        return delay * (1 - share)

    def delay_before_retry(
        self, attempt: int, code: grpc.StatusCode | None, remaining: float | None
    ) -> float | None:
        """How long to wait before retrying after failed attempt ``attempt``, or None
        when the call must not be retried (code, attempts or deadline)."""
        if code not in self.retry_on or attempt >= self.max_attempts:
            return None
        delay = self.backoff(attempt)
        if remaining is not None and delay >= remaining:
            return None
        return delay


#: No retries at all.
NO_RETRY = RetryPolicy(max_attempts=1)


def retry_policy_for(call: Unary[Any], policy: RetryPolicy, retry_writes: bool) -> RetryPolicy:
    """Retries only for idempotent calls unless the caller opted in for writes; never for
    client streams (the request iterator cannot be replayed)."""
    if call.stream_in or not (call.idempotent or retry_writes):
        return NO_RETRY
    return policy


# ---------------------------------------------------------------------- descriptors


def _bound(fn: Callable[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Any:
        return run(fn(*args, **kwargs))

    return method


class Method(Generic[P, T]):
    """A client method made from a core helper returning :class:`Unary`.

    On a sync client it returns the result; on an async client, an awaitable of it.
    """

    def __init__(self, helper: Callable[P, Unary[T]]) -> None:
        self.helper = helper
        functools.update_wrapper(self, helper)
        self.__signature__ = inspect.signature(helper)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Method[P, T]: ...
    @overload
    def __get__(self, obj: SyncTransport, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: AsyncTransport, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        return _bound(self.helper, obj.run)

    def __call__(self, client: Any, *args: Any, **kwargs: Any) -> Any:
        """``MemorydClient.recall(client, ...)``: the unbound form, as for a plain method."""
        return client.run(self.helper(*args, **kwargs))


class StreamMethod(Generic[P, T]):
    """A client method made from a core helper returning :class:`ServerStream`: an
    iterator of items on a sync client, an async iterator on an async one."""

    def __init__(self, helper: Callable[P, ServerStream[T]]) -> None:
        self.helper = helper
        functools.update_wrapper(self, helper)
        self.__signature__ = inspect.signature(helper)

    @overload
    def __get__(self, obj: None, owner: type) -> StreamMethod[P, T]: ...
    @overload
    def __get__(self, obj: SyncTransport, owner: type) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, obj: AsyncTransport, owner: type) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        return _bound(self.helper, obj.run_stream)

    def __call__(self, client: Any, *args: Any, **kwargs: Any) -> Any:
        """``MemorydClient.recall(client, ...)``: the unbound form, as for a plain method."""
        return client.run_stream(self.helper(*args, **kwargs))


class Deadline:
    """One deadline for a call and all its retries."""

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        if self._end is None:
            return None
        return max(0.0, self._end - time.monotonic())


def status_code(error: grpc.RpcError) -> grpc.StatusCode | None:
    """The code of a failed call (sync or aio), None when the error carries none."""
    code = getattr(error, "code", None)
    if not callable(code):
        return None
    value = code()
    return value if isinstance(value, grpc.StatusCode) else None
