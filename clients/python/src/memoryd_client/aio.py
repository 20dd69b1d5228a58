"""The asyncio client: the same helpers as :class:`~memoryd_client.MemorydClient`,
awaited, over a ``grpc.aio`` channel.

>>> async with AsyncMemorydClient("127.0.0.1:50051") as client:  # doctest: +SKIP
...     await client.remember("demo", "The user prefers dark mode")
...     hits = await client.recall("demo", "which theme?")
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any, Self, TypeVar

import grpc

from memoryd_client.api import Api
from memoryd_client.core import (
    Deadline,
    ServerStream,
    Unary,
    retry_policy_for,
    status_code,
)
from memoryd_client.errors import MemorydError, from_rpc_error
from memoryd_client.transport import BaseTransport

T = TypeVar("T")


class AsyncTransport(BaseTransport):
    """Runs calls on a ``grpc.aio.Channel``; the same rules as the sync transport."""

    def _open(self, credentials: grpc.ChannelCredentials | None, options: list[Any]) -> Any:
        if credentials is None:
            return grpc.aio.insecure_channel(self.target, options=options)
        return grpc.aio.secure_channel(self.target, credentials, options=options)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def run(self, call: Unary[T]) -> T:
        """Carry out ``call`` (retries, deadline, error mapping, fallback)."""
        try:
            return await self._attempts(call)
        except MemorydError as error:
            alternative = call.fallback(error) if call.fallback is not None else None
            if alternative is None:
                raise
            return await self.run(alternative)

    async def _attempts(self, call: Unary[T]) -> T:
        policy = retry_policy_for(call, self.options.retry, self.options.retry_writes)
        long = call.fold is not None or call.stream_in
        deadline = Deadline(self.options.stream_timeout if long else self.options.timeout)
        method, metadata = self._stub(call.service, call.method), self._metadata()
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._once(call, method, deadline.remaining(), metadata)
            except grpc.RpcError as exc:
                delay = policy.delay_before_retry(attempt, status_code(exc), deadline.remaining())
                if delay is None:
                    raise from_rpc_error(exc) from None
                await asyncio.sleep(delay)

    @staticmethod
    async def _once(call: Unary[T], method: Any, seconds: float | None, metadata: Any) -> T:
        # ``timeout`` is gRPC's deadline, sent to the daemon: not an asyncio timeout.
        if call.fold is not None:
            fold = call.fold()
            async for response in method(call.request, timeout=seconds, metadata=metadata):
                fold.feed(response)
            return fold.result()
        return call.parse(await method(call.request, timeout=seconds, metadata=metadata))

    async def run_stream(self, call: ServerStream[T]) -> AsyncIterator[T]:
        """Yield the items of a server stream (not retried: re-issue it instead)."""
        method = self._stub(call.service, call.method)
        responses = method(
            call.request, timeout=self.options.stream_timeout, metadata=self._metadata()
        )
        try:
            async for response in responses:
                item = call.parse(response)
                if item is not None:
                    yield item
                elif call.on_event is not None:
                    call.on_event(response)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None
        finally:
            responses.cancel()

    async def call(
        self,
        method: Callable[..., Any],
        request: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the gRPC deadline, as in the sync client
    ) -> Any:
        """Await a raw unary stub method with this client's deadline, metadata and error
        mapping (no retries)."""
        try:
            return await method(
                request,
                timeout=self.options.timeout if timeout is None else timeout,
                metadata=self._metadata(),
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None


class AsyncMemorydClient(Api, AsyncTransport):
    """A connection to one memoryd daemon for asyncio code; every helper of
    :class:`~memoryd_client.MemorydClient` is here too, as a coroutine (streams as
    async iterators). Create it inside the event loop that uses it."""
