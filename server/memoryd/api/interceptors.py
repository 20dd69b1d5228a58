"""The one server interceptor: request id, authentication, error mapping, access log.

Applied to memoryd's own services; health and reflection pass through untouched so
probes need no credentials. Every MemorydError becomes its gRPC status (with
google.rpc.BadRequest details for INVALID_ARGUMENT); anything else is logged with
its traceback and answered INTERNAL with the request id, never the exception text.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from memoryd.api.auth import Authenticator
from memoryd.api.context import current_principal, current_request_id
from memoryd.domain.errors import InvalidArgument, MemorydError

log = structlog.get_logger("memoryd.access")

REQUEST_ID_KEY = "x-request-id"
STATUS_DETAILS_KEY = "grpc-status-details-bin"
_OWN_PREFIX = "/memoryd.v1."

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


def _metadata_value(metadata: Any, key: str) -> str:
    for k, v in metadata or ():
        if k == key:
            return v.decode() if isinstance(v, bytes) else str(v)
    return ""


def status_trailers(error: MemorydError, request_id: str) -> tuple[tuple[str, str | bytes], ...]:
    """Trailing metadata carrying google.rpc.Status (and BadRequest for bad input)."""
    status = status_pb2.Status(code=getattr(code_pb2, error.status), message=error.message)
    if isinstance(error, InvalidArgument):
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description
                )
                for v in error.violations
            ]
        )
        detail = any_pb2.Any()
        detail.Pack(bad_request)
        status.details.append(detail)
    return ((REQUEST_ID_KEY, request_id), (STATUS_DETAILS_KEY, status.SerializeToString()))


class CallInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, authenticator: Authenticator) -> None:
        self._auth = authenticator

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(_OWN_PREFIX):
            return handler
        metadata = handler_call_details.invocation_metadata
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, method, metadata),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(handler.stream_unary, method, metadata),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        behavior = handler.unary_stream or handler.stream_stream
        factory = (
            grpc.unary_stream_rpc_method_handler
            if handler.unary_stream
            else grpc.stream_stream_rpc_method_handler
        )
        wrapped = (
            self._wrap_stream(behavior, method, metadata)
            if inspect.isasyncgenfunction(behavior)
            else self._wrap_unary(behavior, method, metadata)
        )
        return factory(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _begin(self, request_id: str, method: str, metadata: Any, context: Ctx) -> None:
        current_request_id.set(request_id)
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, method=method)
        context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))
        principal = self._auth.authenticate(metadata or (), context.peer())
        current_principal.set(principal)
        structlog.contextvars.bind_contextvars(principal=principal.name, tenant=principal.tenant_id)

    async def _fail(self, context: Ctx, error: BaseException, request_id: str) -> str:
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
        raise AssertionError("unreachable")  # abort raises

    def _wrap_unary(self, inner: Any, method: str, metadata: Any) -> Any:
        async def behavior(request: Any, context: Ctx) -> Any:
            request_id, code, started = _request_id(metadata), "OK", time.perf_counter()
            try:
                self._begin(request_id, method, metadata, context)
                return await inner(request, context)
            except asyncio.CancelledError:
                code = "CANCELLED"
                raise
            except MemorydError as exc:
                code = exc.status
                await self._fail(context, exc, request_id)
            except Exception as exc:
                code = _abort_code(context, exc)
                if code == "INTERNAL":
                    await self._fail(context, exc, request_id)
                raise
            finally:
                _log_call(code, started)

        return behavior

    def _wrap_stream(self, inner: Any, method: str, metadata: Any) -> Any:
        async def behavior(request: Any, context: Ctx) -> AsyncIterator[Any]:
            request_id, code, started = _request_id(metadata), "OK", time.perf_counter()
            try:
                self._begin(request_id, method, metadata, context)
                async for response in inner(request, context):
                    yield response
            except asyncio.CancelledError:
                code = "CANCELLED"
                raise
            except MemorydError as exc:
                code = exc.status
                await self._fail(context, exc, request_id)
            except Exception as exc:
                code = _abort_code(context, exc)
                if code == "INTERNAL":
                    await self._fail(context, exc, request_id)
                raise
            finally:
                _log_call(code, started)

        return behavior


def _request_id(metadata: Any) -> str:
    """The caller's x-request-id (bounded), or a fresh one."""
    return _metadata_value(metadata, REQUEST_ID_KEY)[:128] or uuid.uuid4().hex


def _abort_code(context: Ctx, exc: BaseException) -> str:
    """The code of an abort already under way (AbortError), else INTERNAL."""
    if isinstance(exc, grpc.aio.AbortError):
        code = context.code()
        return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    return "INTERNAL"


def _log_call(code: str, started: float) -> None:
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    level = "info" if code in ("OK", "NOT_FOUND") else "warning"
    getattr(log, level)("rpc", code=code, latency_ms=latency_ms)
