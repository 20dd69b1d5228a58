"""The span of one call through the door (observability/tracing.py does the rest).

Started before authentication and ended with the call's outcome: named by the
operation's GenAI memory operation (``search_memory``, ...; the transport's label for
operations that have none), parented on the W3C trace context the transport read
(gRPC metadata), or a child of the transport's own span (an MCP tool call's, parented
on its ``_meta``), with the transport's attributes (``rpc.*``), the
partition as ``gen_ai.memory.store.id`` and ids and counts, never content.
"""

from __future__ import annotations

from typing import Any

from memoryd.observability.tracing import (
    NO_SPAN,
    OPERATION_NAME,
    QUERY_TEXT,
    RECORD_COUNT,
    RECORD_ID,
    REQUEST_ID,
    SEARCH,
    SERVER_FAULTS,
    STORE_ID,
    Span,
    Tracing,
)
from memoryd.operations.call import Call
from memoryd.operations.definition import Operation, StreamOperation

#: Canonical status codes (google.rpc.Code, the numbers gRPC uses on the wire).
STATUS_CODES = {
    name: number
    for number, name in enumerate(
        (
            "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
            "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
            "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
        )
    )
}  # fmt: skip


class CallTrace:
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
        op: Operation[Any, Any] | StreamOperation[Any, Any],
        call: Call,
    ) -> CallTrace:
        """The span of one call of ``op`` (a no-op when tracing is off), parented as the call
        says."""
        if not tracing.enabled:
            return _OFF
        attributes = {**call.trace_attributes, REQUEST_ID: call.request_id}
        if op.genai:
            attributes[OPERATION_NAME] = op.genai
        name = op.genai or call.label.lstrip("/")
        span = (
            tracing.span(name, attributes)
            if call.nested
            else tracing.start_operation(name, attributes, parent=call.trace_parent)
        )
        return cls(span, op.genai, capture_query_text=tracing.capture_query_text)

    def result(self, op: Operation[Any, Any], value: Any, result: Any) -> None:
        """Record the count of what the call returned (a search) or sent (a write)."""
        if not self.span.recording:
            return
        count = op.count(value, result) if op.count is not None else None
        if count is None and self.operation and self.operation != SEARCH:
            count = 1  # a single-item write (Remember, SetMemory, UpdateMemory, ...)
        if count is not None:
            self.span.set(RECORD_COUNT, count)
        if self.capture_query_text and self.operation == SEARCH:
            text = getattr(value, "query", None)  # Recall's query (a RecallQuery)
            if isinstance(text, str) and text:
                self.span.set(QUERY_TEXT, text)

    def end(self, call: Call) -> None:
        """End the call's span with its outcome code (ERROR only for the server's own faults)."""
        span = self.span
        if span.recording:
            code = call.code
            if call.status_attribute:
                span.set(call.status_attribute, STATUS_CODES.get(code, STATUS_CODES["UNKNOWN"]))
            if call.principal is not None and call.agent:
                span.set(STORE_ID, f"{call.principal.tenant_id}/{call.agent}")
            # The slot the call addressed (a key, a session, a scope), else its one memory.
            if call.key or len(call.ids) == 1:
                span.set(RECORD_ID, call.key or call.ids[0])
            if code != "OK":
                span.fail(code, fault=code in SERVER_FAULTS)
        span.end()


_OFF = CallTrace(NO_SPAN, "")
