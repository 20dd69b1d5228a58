"""The span of one gRPC call (observability/tracing.py does the rest).

Started by the call interceptor before authentication and ended with the call's
status: named by the call's GenAI memory operation (``search_memory``, ...; the RPC
name for calls that have none), parented on the caller's W3C ``traceparent`` /
``tracestate`` metadata, with the RPC conventions' ``rpc.*`` attributes, the
partition as ``gen_ai.memory.store.id`` and ids and counts, never content.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from memoryd.domain.principal import Principal
from memoryd.observability.tracing import (
    GENAI_OPERATIONS,
    NO_SPAN,
    OPERATION_NAME,
    QUERY_TEXT,
    RECORD_COUNT,
    RECORD_ID,
    REQUEST_ID,
    RPC_METHOD,
    RPC_SERVICE,
    RPC_STATUS_CODE,
    RPC_SYSTEM,
    SEARCH,
    SERVER_FAULTS,
    STORE_ID,
    Span,
    Tracing,
)

#: W3C trace-context metadata keys (gRPC metadata keys are lower case).
PROPAGATION_KEYS = ("traceparent", "tracestate")
#: Repeated fields counted as the records of a message, first present wins: a search's
#: results in its response, a write's items or ids in its request.
_COUNTED = ("results", "memories", "items", "ids", "entries", "keys", "scopes", "messages")
_CODES = {code.name: code.value[0] for code in grpc.StatusCode}


def _carrier(metadata: Sequence[tuple[str, str | bytes]]) -> dict[str, str] | None:
    found = {
        key: value if isinstance(value, str) else value.decode("ascii", "replace")
        for key, value in metadata
        if key in PROPAGATION_KEYS
    }
    return found or None


def _count(message: Any) -> int | None:
    if not isinstance(message, Message):
        return None
    fields = message.DESCRIPTOR.fields_by_name
    for name in _COUNTED:
        field = fields.get(name)
        if field is not None and field.is_repeated:
            return len(getattr(message, name))
    return None


class RpcTrace:
    """One call's span and the operation it was named after."""

    __slots__ = ("capture_query_text", "operation", "span")

    def __init__(self, span: Span, operation: str, *, capture_query_text: bool = False) -> None:
        self.span = span
        self.operation = operation
        self.capture_query_text = capture_query_text

    @classmethod
    def start(
        cls,
        tracing: Tracing,
        method: str,
        metadata: Sequence[tuple[str, str | bytes]],
        request_id: str,
    ) -> RpcTrace:
        if not tracing.enabled:
            return _OFF
        service, _, name = method.lstrip("/").partition("/")
        operation = GENAI_OPERATIONS.get(name, "")
        attributes: dict[str, str] = {
            RPC_SYSTEM: "grpc",
            RPC_SERVICE: service,
            RPC_METHOD: name,
            REQUEST_ID: request_id,
        }
        if operation:
            attributes[OPERATION_NAME] = operation
        span = tracing.start_operation(
            operation or method.lstrip("/"), attributes, parent=_carrier(metadata)
        )
        return cls(span, operation, capture_query_text=tracing.capture_query_text)

    def result(self, request: Any, response: Any) -> None:
        """Record the count of what the call returned (a search) or sent (a write)."""
        if not self.span.recording:
            return
        count = _count(response if self.operation == SEARCH else request)
        if count is None and self.operation and self.operation != SEARCH:
            count = 1  # a single-item write (Remember, SetMemory, UpdateMemory, ...)
        if count is not None:
            self.span.set(RECORD_COUNT, count)
        if self.capture_query_text and self.operation == SEARCH:
            text = _query_text(request)
            if text:
                self.span.set(QUERY_TEXT, text)

    def end(
        self, code: str, principal: Principal | None, agent: str, ids: Sequence[str], key: str
    ) -> None:
        span = self.span
        if span.recording:
            span.set(RPC_STATUS_CODE, _CODES.get(code, _CODES["UNKNOWN"]))
            if principal is not None and agent:
                span.set(STORE_ID, f"{principal.tenant_id}/{agent}")
            # The slot the call addressed (a key, a session, a scope), else its one memory.
            if key or len(ids) == 1:
                span.set(RECORD_ID, key or ids[0])
            if code != "OK":
                span.fail(code, fault=code in SERVER_FAULTS)
        span.end()


_OFF = RpcTrace(NO_SPAN, "")


def _query_text(request: Any) -> str:
    """The text a search asks for (Recall's ``query``), when the request has one."""
    if isinstance(request, Message) and "query" in request.DESCRIPTOR.fields_by_name:
        return str(request.query)  # type: ignore[attr-defined]
    return ""
