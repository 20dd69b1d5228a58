"""Each RPC bound to the operation it runs, in one of three shapes.

A binding is a row of a service's table (api/memory_rpcs.py, api/snapshot_lifecycle_rpcs.py):
the operation, the converter from the request to the operation's typed input, and the
converter from what the operation returns to the response. The shapes are the only
code that runs an operation for gRPC, so every RPC is served the same way:

- :class:`Unary`: one request, one response;
- :class:`ServerStream`: one request, a response per item the operation streams;
- :class:`ClientStream`: a stream of requests (Import), one response.

The input is converted inside the door (after the caller is authenticated, see
memoryd.operations.door), and a response's ``degraded`` field is filled here and only
here, with every degradation the door reports for the call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from google.protobuf.message import Message

from memoryd.api.convert import degraded_to_proto
from memoryd.domain.requests import Degradation
from memoryd.operations import Call, Door, Operation, StreamOperation

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741
R = TypeVar("R", bound=Message)


def with_degraded(response: R, degraded: Sequence[Degradation]) -> R:
    """``response`` with its ``degraded`` field (where it has one) listing ``degraded``:
    the one place a gRPC response says what the call fell back on."""
    if degraded and "degraded" in response.DESCRIPTOR.fields_by_name:
        listed: Any = response  # a response type with the field (checked just above)
        listed.degraded.extend(degraded_to_proto(degraded))
    return response


@dataclass(frozen=True, slots=True)
class Unary(Generic[I, O]):
    """A request-response RPC: ``input(request)`` -> ``operation`` -> ``output(value)``."""

    operation: Operation[I, O]
    input: Callable[[Any], I]
    output: Callable[[O], Message]

    def agent_of(self, request: Any) -> str:
        """The agent the call names (the request's ``agent_id``)."""
        return str(request.agent_id)

    def bind(self, door: Door) -> Callable[[Any, Call], Awaitable[Message]]:
        """The coroutine serving one call of this RPC through ``door``."""

        async def serve(request: Any, call: Call) -> Message:
            agent = self.agent_of(request)
            out = await door.run(self.operation, call, agent, lambda: self.input(request))
            return with_degraded(self.output(out.value), out.degraded)

        return serve


@dataclass(frozen=True, slots=True)
class TenantUnary(Unary[I, O]):
    """A request-response RPC whose request names no agent (a tenant-wide operation)."""

    def agent_of(self, request: Any) -> str:
        """No agent: the operation is the caller's tenant's."""
        return ""


@dataclass(frozen=True, slots=True)
class ClientStream(Unary[I, O]):
    """A client-streaming RPC: ``input`` turns the request stream into the operation's
    input, and one response answers it."""

    def agent_of(self, request: Any) -> str:
        """None: the agents come from the streamed records."""
        return ""


@dataclass(frozen=True, slots=True)
class ServerStream(Generic[I, O]):
    """A server-streaming RPC: one response per item ``operation`` yields."""

    operation: StreamOperation[I, O]
    input: Callable[[Any], I]
    output: Callable[[O], Message]

    def bind(self, door: Door) -> Callable[[Any, Call], AsyncIterator[Message]]:
        """The async generator serving one call of this RPC through ``door``."""

        async def serve(request: Any, call: Call) -> AsyncIterator[Message]:
            items = door.stream(self.operation, call, request.agent_id, lambda: self.input(request))
            async for item in items:
                yield self.output(item)

        return serve


#: A row of a service's table (ClientStream is a Unary).
Binding: TypeAlias = Unary[Any, Any] | ServerStream[Any, Any]
