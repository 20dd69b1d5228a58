"""gRPC's side of a call: the handlers memoryd's services are registered with.

Each handler makes the call's :class:`~memoryd.operations.Call` (request id, peer,
credentials from metadata and the TLS auth context, the caller's trace context),
hands it with the request to the RPC's binding (api/binding.py: the operation through
the door, with the request and response converters), and turns what the door raised into
a gRPC status: every MemorydError maps to its own (with google.rpc.BadRequest for
INVALID_ARGUMENT), anything else is INTERNAL with the request id, never the exception
text. A request that cannot be parsed still goes through the door, so it is
authenticated and authorised before it is rejected as INVALID_ARGUMENT. Health and
reflection are registered apart and need no credentials.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc
from google.protobuf import any_pb2
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message_factory import GetMessageClass
from google.rpc import code_pb2, error_details_pb2, status_pb2

from memoryd.api.binding import Binding
from memoryd.domain.errors import InvalidArgument, MemorydError
from memoryd.observability.tracing import RPC_METHOD, RPC_SERVICE, RPC_STATUS_CODE, RPC_SYSTEM
from memoryd.operations import Call, Door, Operation, StreamOperation
from memoryd.operations.auth import Transport

REQUEST_ID_KEY = "x-request-id"
STATUS_DETAILS_KEY = "grpc-status-details-bin"
#: Trailing metadata, one per degradation: "<component>: <reason>" (ASCII-escaped).
#: Every answer carries its degradations here, also those whose message has no
#: ``degraded`` field (ListKeys, KeyHistory, LoadState, ...).
DEGRADED_KEY = "x-memoryd-degraded"
_DEGRADED_CHARS = 512
_MAX_DEGRADED = 8
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
#: W3C trace-context metadata keys (gRPC metadata keys are lower case).
PROPAGATION_KEYS = ("traceparent", "tracestate")

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
AnyOperation = Operation[Any, Any] | StreamOperation[Any, Any]

#: Violations sent in BadRequest, and the characters kept of each: the trailers must
#: stay well under the 16 KiB metadata limit of gRPC clients (RESOURCE_EXHAUSTED else).
MAX_WIRE_VIOLATIONS = 50
_FIELD_CHARS = 64
_DESCRIPTION_CHARS = 160


class Undecodable:
    """Stands in for a request that failed to parse, so the door can reject it cleanly."""

    agent_id = ""


def _tolerant(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """grpc answers INTERNAL when a request cannot be parsed; make it INVALID_ARGUMENT."""

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except (DecodeError, ValueError, TypeError):
            return Undecodable()

    return parse


def undecodable_error(method: str) -> InvalidArgument:
    """The INVALID_ARGUMENT answering a request that could not be parsed as ``method``'s
    message."""
    return InvalidArgument.field(
        "request",
        f"is not a valid {method} request message "
        "(malformed protobuf, or invalid UTF-8 in a string field)",
    )


def status_trailers(error: MemorydError, request_id: str) -> tuple[tuple[str, str | bytes], ...]:
    """Trailing metadata carrying google.rpc.Status (and BadRequest for bad input)."""
    status = status_pb2.Status(code=getattr(code_pb2, error.status), message=error.message)
    if isinstance(error, InvalidArgument):
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field[:_FIELD_CHARS], description=v.description[:_DESCRIPTION_CHARS]
                )
                for v in error.violations[:MAX_WIRE_VIOLATIONS]
            ]
        )
        hidden = len(error.violations) - MAX_WIRE_VIOLATIONS
        if hidden > 0:
            bad_request.field_violations.add(
                field="request", description=f"{hidden} more violations not listed"
            )
        detail = any_pb2.Any()
        detail.Pack(bad_request)
        status.details.append(detail)
    return ((REQUEST_ID_KEY, request_id), (STATUS_DETAILS_KEY, status.SerializeToString()))


def degraded_trailers(call: Call) -> tuple[tuple[str, str], ...]:
    """The request id and the call's degradations as trailing metadata (printable
    ASCII, bounded well under gRPC's metadata limit)."""
    items = [
        (
            DEGRADED_KEY,
            f"{d.component}: {d.reason}".encode("unicode_escape").decode("ascii")[:_DEGRADED_CHARS],
        )
        for d in call.degraded[:_MAX_DEGRADED]
    ]
    return ((REQUEST_ID_KEY, call.request_id), *items)


def _request_id(metadata: Sequence[tuple[str, str | bytes]]) -> str:
    """The caller's x-request-id when it is short and plain, else a fresh one (it is
    logged, so arbitrary caller text never is)."""
    for key, value in metadata:
        if key == REQUEST_ID_KEY:
            text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
            if _REQUEST_ID_RE.match(text):
                return text
            break
    return uuid.uuid4().hex


def _carrier(metadata: Sequence[tuple[str, str | bytes]]) -> dict[str, str] | None:
    found = {
        key: value if isinstance(value, str) else value.decode("ascii", "replace")
        for key, value in metadata
        if key in PROPAGATION_KEYS
    }
    return found or None


def _auth_context(context: Ctx) -> dict[str, list[bytes]]:
    try:
        return {k: list(v) for k, v in (context.auth_context() or {}).items()}
    except Exception:  # an insecure channel has no auth context on some grpc versions
        return {}


@dataclass(frozen=True, slots=True)
class _Route:
    """One RPC as its handler sees it: the operation it runs, the method's name, its
    label ("/<service>/<method>") and its trace attributes."""

    op: AnyOperation
    method: str
    label: str
    attributes: dict[str, str]


class Rpcs:
    """Builds the handler of each RPC of a service onto its servicer's methods."""

    def __init__(self, door: Door) -> None:
        self._door = door

    def _call(self, route: _Route, context: Ctx) -> Call:
        metadata = tuple(context.invocation_metadata() or ())
        door = self._door
        call = Call(
            request_id=_request_id(metadata),
            label=route.label,
            credentials=Transport(
                metadata=metadata,
                peer=context.peer(),
                auth_context=(
                    _auth_context(context) if door.authenticator.uses_auth_context else {}
                ),
            ),
            trace_parent=_carrier(metadata) if door.tracing.enabled else None,
            trace_attributes=route.attributes,
            status_attribute=RPC_STATUS_CODE,
        )
        context.set_trailing_metadata(((REQUEST_ID_KEY, call.request_id),))
        return call

    async def _reject(self, route: _Route, call: Call) -> None:
        """Authenticate and authorise an unparsable request, then reject it."""

        def fail() -> None:
            raise undecodable_error(route.method)

        op = route.op
        if isinstance(op, StreamOperation):
            async for _ in self._door.stream(op, call, "", fail):
                pass
        else:
            await self._door.run(op, call, "", fail)

    def handlers(
        self, service: ServiceDescriptor, bindings: Sequence[Binding]
    ) -> dict[str, Handler]:
        """grpc method handlers of every RPC of ``service``, each served by its binding
        (api/binding.py); every method of the service must have exactly one."""
        by_method = {b.operation.method: b for b in bindings}
        names = [method.name for method in service.methods]
        if sorted(by_method) != sorted(names) or len(bindings) != len(names):
            raise ValueError(f"{service.name}: bindings {sorted(by_method)} != methods {names}")
        return {
            method.name: self.handler(
                service,
                method,
                by_method[method.name].bind(self._door),
                by_method[method.name].operation,
            )
            for method in service.methods
        }

    def handler(
        self, service: ServiceDescriptor, method: MethodDescriptor, inner: Any, op: AnyOperation
    ) -> Handler:
        """The grpc handler of one RPC: ``inner`` (request, Call) runs ``op`` via the door."""
        route = _Route(
            op=op,
            method=method.name,
            label=f"/{service.full_name}/{method.name}",
            attributes={
                RPC_SYSTEM: "grpc",
                RPC_SERVICE: service.full_name,
                RPC_METHOD: method.name,
            },
        )
        kwargs: dict[str, Any] = {
            "request_deserializer": _tolerant(GetMessageClass(method.input_type).FromString),
            "response_serializer": GetMessageClass(method.output_type).SerializeToString,
        }
        if method.client_streaming:
            checked = self._stream_in(inner, route)
            return grpc.stream_unary_rpc_method_handler(checked, **kwargs)
        if method.server_streaming:
            streamed = self._stream_out(inner, route)
            return grpc.unary_stream_rpc_method_handler(streamed, **kwargs)
        return grpc.unary_unary_rpc_method_handler(self._unary(inner, route), **kwargs)

    def _unary(
        self, inner: Callable[[Any, Call], Awaitable[Any]], route: _Route
    ) -> Callable[[Any, Ctx], Awaitable[Any]]:
        async def behavior(request: Any, context: Ctx) -> Any:
            call = self._call(route, context)
            try:
                if isinstance(request, Undecodable):
                    await self._reject(route, call)
                response = await inner(request, call)
            except (Exception, asyncio.CancelledError) as exc:
                await _abort(context, exc, call)
                raise
            if call.degraded:
                context.set_trailing_metadata(degraded_trailers(call))
            return response

        return behavior

    def _stream_out(
        self, inner: Callable[[Any, Call], AsyncIterator[Any]], route: _Route
    ) -> Callable[[Any, Ctx], AsyncIterator[Any]]:
        async def behavior(request: Any, context: Ctx) -> AsyncIterator[Any]:
            call = self._call(route, context)
            try:
                if isinstance(request, Undecodable):
                    await self._reject(route, call)
                async for response in inner(request, call):
                    yield response
            except (Exception, asyncio.CancelledError) as exc:
                await _abort(context, exc, call)
                raise

        return behavior

    def _stream_in(
        self, inner: Callable[[AsyncIterator[Any], Call], Awaitable[Any]], route: _Route
    ) -> Callable[[AsyncIterator[Any], Ctx], Awaitable[Any]]:
        async def behavior(requests: AsyncIterator[Any], context: Ctx) -> Any:
            call = self._call(route, context)
            try:
                return await inner(_checked_stream(requests, route.method), call)
            except (Exception, asyncio.CancelledError) as exc:
                await _abort(context, exc, call)
                raise

        return behavior


async def _checked_stream(requests: AsyncIterator[Any], method: str) -> AsyncIterator[Any]:
    async for request in requests:
        if isinstance(request, Undecodable):
            raise undecodable_error(method)
        yield request


async def _abort(context: Ctx, error: BaseException, call: Call) -> None:
    """Answer the call's error with its status; a cancelled call just ends."""
    if isinstance(error, asyncio.CancelledError | grpc.aio.AbortError):
        return
    if isinstance(error, MemorydError):
        await context.abort(
            getattr(grpc.StatusCode, error.status),
            error.message,
            status_trailers(error, call.request_id),
        )
    await context.abort(
        grpc.StatusCode.INTERNAL,
        f"internal error (request id {call.request_id})",
        ((REQUEST_ID_KEY, call.request_id),),
    )
