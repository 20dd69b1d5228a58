"""MCP resource subscriptions on the daemon's Streamable HTTP endpoint, on top of the
change feed (docs/watch.md): ``subscriptions/listen`` for an agent's default-read or
agent.md resource.

Each listen stream is served apart: its own bus (one bus for every stream would tell
a tenant that another tenant's agent of the same name changed, agent names being per
tenant), and for each resource it names, the Watch operation run through the door
with the stream's own credentials, so the role, the agents the principal may act for,
the tenant and the clearance are checked exactly as for a gRPC Watch. A stream is
acknowledged once its watches caught up (nothing made after the acknowledgment is
missed); a resource its principal may not watch refuses the whole listen. A watch
whose cursor expired (it fell behind the retention) reports an update and follows
again from now.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

import mcp_types as types
import structlog
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from memoryd.aio import cancel_and_wait
from memoryd.domain.changes import ChangeKind, WatchQuery
from memoryd.domain.errors import FailedPrecondition, MemorydError
from memoryd.mcp.server import McpRequest, followed_resource, request_of
from memoryd.operations import Call, Door
from memoryd.operations.auth import Transport
from memoryd.operations.changes import WATCH

log = structlog.get_logger("memoryd.mcp")

#: How long a listen waits for its watches to catch up before it is acknowledged.
READY_TIMEOUT_S = 10.0
#: Pause before following again from now after a cursor expired.
_RETRY_S = 0.2


class _Followed:
    """One resource of one stream: its watch task, and whether it caught up or failed."""

    def __init__(self, uri: str, agent: str, kinds: frozenset[ChangeKind]) -> None:
        self.uri, self.agent, self.kinds = uri, agent, kinds
        self.ready = asyncio.Event()
        self.error: MemorydError | None = None
        self.task: asyncio.Task[None] | None = None


class DoorListen:
    """``subscriptions/listen`` served on the door (the daemon's HTTP endpoint)."""

    def __init__(self, door: Door) -> None:
        self._door = door

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        request = request_of(ctx)
        bus = InMemorySubscriptionBus()
        followed = _resources(params.notifications.resource_subscriptions or ())
        for item in followed:
            item.task = asyncio.create_task(self._follow(request, item, bus), name="mcp-listen")
        try:
            await self._caught_up(followed)
            return await ListenHandler(bus)(ctx, params)
        finally:
            for item in followed:
                await cancel_and_wait(item.task)

    @staticmethod
    async def _caught_up(followed: Sequence[_Followed]) -> None:
        """Once every watch caught up (or the timeout passed); MCPError when one was
        refused (the principal may not watch that agent)."""
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                for item in followed:
                    await item.ready.wait()
        except TimeoutError:
            pass
        for item in followed:
            if item.error is not None:
                raise MCPError(types.INVALID_REQUEST, f"{item.uri}: {item.error.message}")

    async def _follow(
        self, request: McpRequest, item: _Followed, bus: InMemorySubscriptionBus
    ) -> None:
        while True:
            call = Call(
                request_id=uuid.uuid4().hex,
                label="/mcp/subscriptions/listen",
                credentials=Transport(
                    metadata=tuple(request.headers),
                    peer=request.peer,
                    auth_context=request.auth_context,
                ),
                trace_attributes={"rpc.system": "mcp"},
            )
            stream = self._door.stream(WATCH, call, item.agent, lambda: WatchQuery(follow=True))
            try:
                async for message in stream:
                    if message.caught_up:
                        item.ready.set()
                    if any(change.kind in item.kinds for change in message.changes):
                        await bus.publish(ResourceUpdated(uri=item.uri))
            except FailedPrecondition:  # expired: the state is unknown, follow from now
                await bus.publish(ResourceUpdated(uri=item.uri))
                await asyncio.sleep(_RETRY_S)
                continue
            except MemorydError as exc:
                log.info("resource subscription refused", uri=item.uri, error=exc.message)
                item.error = exc
                item.ready.set()
            return


def _resources(uris: Sequence[str]) -> list[_Followed]:
    out = []
    for uri in dict.fromkeys(uris):
        resource = followed_resource(uri)
        if resource is not None:
            out.append(_Followed(uri, *resource))
    return out
