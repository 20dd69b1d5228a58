"""The one server interceptor: request id, authentication, roles, audit, error mapping,
access log.

Applied to memoryd's own services; health and reflection pass through untouched so
probes need no credentials. Per call it: assigns a request id, authenticates the
transport into a Principal (UNAUTHENTICATED otherwise), checks the role the method
needs (PERMISSION_DENIED otherwise), binds principal, tenant, agent and request id to
the call's context and logs, runs the handler, maps every MemorydError to its gRPC
status (with google.rpc.BadRequest for INVALID_ARGUMENT), and records writes and
denials in the audit log. Unexpected exceptions are logged with their traceback and
answered INTERNAL with the request id, never the exception text. Nothing here logs a
request body or a metadata value.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import grpc
import structlog
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import code_pb2, error_details_pb2, status_pb2

from memoryd.api.audit_fields import read_ids, touched
from memoryd.api.auth import Authenticator, Transport
from memoryd.api.context import current_principal, current_request_id
from memoryd.api.grpc_tracing import RpcTrace
from memoryd.api.roles import check_role
from memoryd.config import LoggingSettings
from memoryd.domain.errors import InvalidArgument, MemorydError
from memoryd.domain.principal import Principal, Role
from memoryd.observability.logging import AccessLog
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import NO_TRACING, Tracing
from memoryd.security.audit import STARTED, AuditEvent, AuditLog
from memoryd.security.read_trail import ReadTrail

log = structlog.get_logger("memoryd.access")

REQUEST_ID_KEY = "x-request-id"
STATUS_DETAILS_KEY = "grpc-status-details-bin"
_OWN_PREFIX = "/memoryd.v1."
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
#: Outcomes that are denials: always audited, even for reads.
DENIALS = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED"})

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


class _Undecodable:
    """Stands in for a request that failed to parse, so the handler can reject it cleanly."""

    agent_id = ""


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """grpc answers INTERNAL when a request cannot be parsed; make it INVALID_ARGUMENT."""
    if deserializer is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except (DecodeError, ValueError, TypeError):
            return _Undecodable()

    return parse


def _undecodable_error(method: str) -> InvalidArgument:
    return InvalidArgument.field(
        "request",
        f"is not a valid {method.rsplit('/', 1)[-1]} request message "
        "(malformed protobuf, or invalid UTF-8 in a string field)",
    )


#: Violations sent in BadRequest, and the characters kept of each: the trailers must
#: stay well under the 16 KiB metadata limit of gRPC clients (RESOURCE_EXHAUSTED else).
MAX_WIRE_VIOLATIONS = 50
_FIELD_CHARS = 64
_DESCRIPTION_CHARS = 160


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


@dataclass(slots=True)
class _Call:
    """What one call's bookkeeping needs once it ends."""

    method: str
    request_id: str
    peer: str
    started: float = field(default_factory=time.perf_counter)
    code: str = "OK"
    reason: str = ""
    principal: Principal | None = None
    role: Role | None = None
    agent: str = ""
    ids: list[str] = field(default_factory=list)
    key: str = ""
    #: What a read returned, for the read trail (None: not recorded).
    read: list[str] | None = None
    trace: RpcTrace | None = None


class CallInterceptor(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        authenticator: Authenticator,
        audit: AuditLog | None = None,
        metrics: Metrics | None = None,
        access_log: AccessLog | None = None,
        read_trail: ReadTrail | None = None,
        tracing: Tracing = NO_TRACING,
    ) -> None:
        self._trail = read_trail
        self._auth = authenticator
        self._audit = audit
        self._metrics = metrics
        self._access = access_log or AccessLog(LoggingSettings())
        self._tracing = tracing

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(_OWN_PREFIX):
            return handler
        metadata = tuple(handler_call_details.invocation_metadata or ())
        kwargs = {
            "request_deserializer": _tolerant(handler.request_deserializer),
            "response_serializer": handler.response_serializer,
        }
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, method, metadata, streaming_in=False),
                **kwargs,
            )
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(handler.stream_unary, method, metadata, streaming_in=True),
                **kwargs,
            )
        streaming_in = bool(handler.stream_stream)
        behavior = handler.unary_stream or handler.stream_stream
        factory = (
            grpc.stream_stream_rpc_method_handler
            if streaming_in
            else grpc.unary_stream_rpc_method_handler
        )
        wrapped = (
            self._wrap_stream(behavior, method, metadata, streaming_in=streaming_in)
            if inspect.isasyncgenfunction(behavior)
            else self._wrap_unary(behavior, method, metadata, streaming_in=streaming_in)
        )
        return factory(wrapped, **kwargs)

    # ------------------------------------------------------------------ per call

    def _begin(
        self, call: _Call, metadata: Any, request: Any, context: Ctx, streaming_in: bool
    ) -> Any:
        """Authenticate, authorise and bind the call; returns the request to pass on."""
        call.trace = RpcTrace.start(self._tracing, call.method, metadata, call.request_id)
        current_request_id.set(call.request_id)
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=call.request_id, method=call.method)
        context.set_trailing_metadata(((REQUEST_ID_KEY, call.request_id),))
        if not streaming_in and not isinstance(request, _Undecodable):
            # Recorded before authenticating so denied calls are audited with them.
            call.agent = str(getattr(request, "agent_id", ""))[:128]
            call.ids, call.key = touched(request, None)
        transport = Transport(
            metadata=metadata,
            peer=call.peer,
            auth_context=_auth_context(context) if self._auth.uses_auth_context else {},
        )
        principal = self._auth.authenticate(transport)
        call.principal = principal
        current_principal.set(principal)
        structlog.contextvars.bind_contextvars(
            principal=principal.name, tenant=principal.tenant_id, agent=call.agent
        )
        if streaming_in:
            call.role = check_role(principal, call.method, None)
            return _checked_stream(request, call.method)
        if isinstance(request, _Undecodable):
            raise _undecodable_error(call.method)
        call.role = check_role(principal, call.method, request)
        return request

    async def _fail(self, context: Ctx, error: BaseException, request_id: str) -> None:
        if isinstance(error, MemorydError):
            await context.abort(
                getattr(grpc.StatusCode, error.status),
                error.message,
                status_trailers(error, request_id),
            )
        log.error("unhandled error", exc_info=error)
        await context.abort(
            grpc.StatusCode.INTERNAL,
            f"internal error (request id {request_id})",
            ((REQUEST_ID_KEY, request_id),),
        )

    async def _on_error(self, call: _Call, context: Ctx, exc: BaseException) -> None:
        if isinstance(exc, MemorydError):
            call.code = exc.status
            if exc.status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
                call.reason = exc.message
            await self._fail(context, exc, call.request_id)
        call.code = _abort_code(context, exc)
        if call.code == "INTERNAL":
            await self._fail(context, exc, call.request_id)

    def _wrap_unary(self, inner: Any, method: str, metadata: Any, *, streaming_in: bool) -> Any:
        async def behavior(request: Any, context: Ctx) -> Any:
            call = _Call(method, _request_id(metadata), context.peer())
            try:
                request = self._begin(call, metadata, request, context, streaming_in)
                await self._admit(call)
                response = await inner(request, context)
                self._note_read(call, response)
                if call.trace is not None:
                    call.trace.result(request, response)
                if call.role is not Role.READ:  # only writes are audited when they succeed
                    ids, key = touched(None, response)
                    call.ids = list(dict.fromkeys([*call.ids, *ids]))
                    call.key = call.key or key
                return response
            except asyncio.CancelledError:
                call.code = "CANCELLED"
                raise
            except Exception as exc:
                await self._on_error(call, context, exc)
                raise
            finally:
                self._finish(call)

        return behavior

    def _wrap_stream(self, inner: Any, method: str, metadata: Any, *, streaming_in: bool) -> Any:
        async def behavior(request: Any, context: Ctx) -> AsyncIterator[Any]:
            call = _Call(method, _request_id(metadata), context.peer())
            try:
                request = self._begin(call, metadata, request, context, streaming_in)
                await self._admit(call)
                async for response in inner(request, context):
                    self._note_read(call, response)
                    yield response
            except asyncio.CancelledError:
                call.code = "CANCELLED"
                raise
            except Exception as exc:
                await self._on_error(call, context, exc)
                raise
            finally:
                self._finish(call)

        return behavior

    def _note_read(self, call: _Call, response: Any) -> None:
        """Collect what a read returned, when the read trail records it."""
        if self._trail is None or not self._trail.wants(_operation(call.method)):
            return
        call.read = [*(call.read or []), *read_ids(response)]

    def _finish(self, call: _Call) -> None:
        elapsed_s = time.perf_counter() - call.started
        if self._trail is not None and call.read is not None and call.code == "OK":
            assert call.principal is not None
            self._trail.record(
                _operation(call.method),
                principal=call.principal,
                agent=call.agent,
                ids=call.read,
                request_id=call.request_id,
                peer=call.peer,
            )
        if call.trace is not None:
            call.trace.end(call.code, call.principal, call.agent, call.ids, call.key)
        principal = call.principal
        fields: dict[str, object] = {"request_id": call.request_id, "method": call.method}
        if principal is not None:
            fields.update(principal=principal.name, tenant=principal.tenant_id, agent=call.agent)
        fields.update(code=call.code, latency_ms=round(elapsed_s * 1000, 3))
        self._access.rpc(ok=call.code in ("OK", "NOT_FOUND"), fields=fields)
        if self._metrics is not None:
            self._metrics.observe_request(call.method, call.code, elapsed_s)
        is_write = call.role is not None and call.role is not Role.READ
        if self._audit is None or not (is_write or call.code in DENIALS):
            return
        self._audit.record(_event(call, call.code))

    async def _admit(self, call: _Call) -> None:
        """A write runs only once its STARTED event is on disk (UNAVAILABLE else)."""
        if self._audit is not None and call.role is not Role.READ:
            await self._audit.admit(_event(call, STARTED))


def _event(call: _Call, outcome: str) -> AuditEvent:
    principal = call.principal
    return AuditEvent(
        operation=_operation(call.method),
        outcome=outcome,
        request_id=call.request_id,
        principal=principal.name if principal else "",
        tenant=principal.tenant_id if principal else "",
        agent=call.agent,
        peer=call.peer,
        ids=call.ids,
        key=call.key,
        reason=call.reason,
    )


async def _checked_stream(requests: AsyncIterator[Any], method: str) -> AsyncIterator[Any]:
    async for request in requests:
        if isinstance(request, _Undecodable):
            raise _undecodable_error(method)
        yield request


def _operation(method: str) -> str:
    """The audit log's name of a method: "MemoryService.Recall"."""
    return method.removeprefix("/memoryd.v1.").replace("/", ".")


def _auth_context(context: Ctx) -> dict[str, list[bytes]]:
    try:
        return {k: list(v) for k, v in (context.auth_context() or {}).items()}
    except Exception:  # an insecure channel has no auth context on some grpc versions
        return {}


def _request_id(metadata: Any) -> str:
    """The caller's x-request-id when it is short and plain, else a fresh one (it is
    logged, so arbitrary caller text never is)."""
    for key, value in metadata or ():
        if key == REQUEST_ID_KEY:
            text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
            if _REQUEST_ID_RE.match(text):
                return text
            break
    return uuid.uuid4().hex


def _abort_code(context: Ctx, exc: BaseException) -> str:
    """The code of an abort already under way (AbortError), else INTERNAL."""
    if isinstance(exc, grpc.aio.AbortError):
        code = context.code()
        return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    return "INTERNAL"
