"""MCP resource subscriptions on the stdio bridge, on top of Watch (docs/watch.md).

A host listens (``subscriptions/listen``, MCP 2026-07-28) to an agent's
``memory://agents/<agent>/default-read`` resource (or its ``agent.md``); while any
listen stream names it, the bridge follows that agent's change feed over gRPC (one
Watch per resource, whatever the number of streams) and publishes
``notifications/resources/updated`` for it on every change of the agent's keys (of
its profile, for ``agent.md``). The Watch resumes from its last cursor
after a disconnect (the daemon restarting), so no change is missed; a cursor that
expired meanwhile is reported as an update (the state may have changed) and the
watch starts again from now. A listen stream is acknowledged only once its watches
are caught up, so a change made after the acknowledgment is never missed either.

The daemon's own Streamable HTTP endpoint serves them too, in the daemon
(memoryd.mcp.listen).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import structlog
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus

from memoryd.aio import cancel_and_wait
from memoryd.mcp.server import Listen, followed_resource
from memoryd_client import AsyncMemorydClient
from memoryd_client.errors import MemorydError
from memoryd_proto.v1 import memory_service_pb2 as mpb

log = structlog.get_logger(__name__)

#: Errors after which the watch is resumed (the daemon restarting, the network).
TRANSIENT = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "UNKNOWN", "INTERNAL"})
#: How long a listen waits for its watches to catch up before it is acknowledged.
READY_TIMEOUT_S = 10.0


class _Followed:
    """One resource's watch: its task, how many streams hold it, whether it caught up."""

    def __init__(self) -> None:
        self.holders = 0
        self.ready = asyncio.Event()
        self.task: asyncio.Task[None] | None = None


class KeyWatches:
    """One Watch per subscribed resource, publishing its updates on ``bus``."""

    def __init__(
        self,
        client: AsyncMemorydClient,
        bus: SubscriptionBus,
        *,
        retry_s: float = 0.2,
        max_retry_s: float = 5.0,
    ) -> None:
        self._client = client
        self._bus = bus
        self._retry_s = retry_s
        self._max_retry_s = max_retry_s
        self._followed: dict[str, _Followed] = {}

    @asynccontextmanager
    async def holding(self, uris: Sequence[str]) -> AsyncIterator[None]:
        """Follow the resources among ``uris`` the bridge can follow while the block runs."""
        mine = [uri for uri in dict.fromkeys(uris) if followed_resource(uri) is not None]
        for uri in mine:
            self._acquire(uri)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(READY_TIMEOUT_S):
                    for uri in mine:
                        await self._followed[uri].ready.wait()
            yield
        finally:
            for uri in mine:
                await self._release(uri)

    async def close(self) -> None:
        for followed in list(self._followed.values()):
            await cancel_and_wait(followed.task)
        self._followed.clear()

    def _acquire(self, uri: str) -> None:
        followed = self._followed.get(uri)
        if followed is None:
            followed = self._followed[uri] = _Followed()
            followed.task = asyncio.create_task(self._follow(uri, followed), name="mcp-watch")
        followed.holders += 1

    async def _release(self, uri: str) -> None:
        followed = self._followed[uri]
        followed.holders -= 1
        if followed.holders == 0:
            del self._followed[uri]
            await cancel_and_wait(followed.task)

    async def _follow(self, uri: str, followed: _Followed) -> None:
        resource = followed_resource(uri)
        assert resource is not None
        agent, updates = resource
        kinds = {mpb.ChangeKind.Value(f"CHANGE_KIND_{kind.name}") for kind in updates}
        cursor, delay = "", self._retry_s
        while True:
            try:
                async for message in self._client.watch(agent, cursor=cursor, follow=True):
                    cursor, delay = message.cursor, self._retry_s
                    if message.caught_up:
                        followed.ready.set()
                    if any(change.kind in kinds for change in message.changes):
                        await self._bus.publish(ResourceUpdated(uri=uri))
            except MemorydError as exc:
                if exc.code_name == "FAILED_PRECONDITION":  # expired: the state is unknown
                    cursor = ""
                    await self._bus.publish(ResourceUpdated(uri=uri))
                    continue
                if exc.code_name not in TRANSIENT:
                    log.warning("resource subscription ended", uri=uri, error=exc.message)
                    followed.ready.set()
                    return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._max_retry_s)


def listen_handler(watches: KeyWatches, bus: SubscriptionBus) -> Listen:
    """``subscriptions/listen``: the SDK's handler, with the streams' default-read
    resources followed while they are open."""
    inner = ListenHandler(bus)

    async def listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        async with watches.holding(params.notifications.resource_subscriptions or ()):
            return await inner(ctx, params)

    return listen
