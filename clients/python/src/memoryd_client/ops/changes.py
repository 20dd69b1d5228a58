"""The change feed: ``watch`` streams an agent's (or a tenant's) changes after a cursor."""

from __future__ import annotations

from memoryd_client import requests as rq
from memoryd_client.core import ServerStream
from memoryd_proto.v1 import memory_service_pb2


def watch(
    agent_id: str,
    *,
    cursor: str = "",
    start: rq.EnumArg = "now",
    tenant_wide: bool = False,
    follow: bool = True,
) -> ServerStream[memory_service_pb2.WatchResponse]:
    """Every change of ``agent_id`` (``tenant_wide``: of every agent of the tenant,
        admin) after ``cursor``, in order, as ``WatchResponse`` messages (their ``changes``,
    at most 256 a message); without a cursor
        from ``start`` ("now" or "oldest"). Each message's ``cursor`` resumes after it; the
        first ``caught_up`` message says everything so far was sent. Following (the
        default), the stream goes on with each change as it happens (stop iterating to
        close it); ``follow=False`` ends it at the ``caught_up`` message. Never retried:
        re-issue it with the last cursor."""
    request = memory_service_pb2.WatchRequest(
        agent_id=agent_id,
        cursor=cursor,
        start=rq.enum_value(start, memory_service_pb2.WatchStart, "WATCH_START_", "start"),  # type: ignore[arg-type]
        tenant_wide=tenant_wide,
        follow=follow,
    )
    return ServerStream("memory", "Watch", request, lambda r: r)
