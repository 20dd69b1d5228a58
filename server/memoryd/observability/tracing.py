"""Opt-in OpenTelemetry tracing behind one small interface, :class:`Tracing`.

app.py builds one with :func:`build_tracing` and passes it down (the operation layer's door,
the instrumented embedder and stores, the write-ahead log); nothing here sets a global
tracer provider. Off (``tracing.enabled: false``, the default) it is :data:`NO_TRACING`:
every call returns the shared no-op span and nothing of OpenTelemetry is imported,
not even the API. On, :mod:`memoryd.observability.otel` builds an SDK provider that
exports over OTLP/gRPC, configured by the standard ``OTEL_*`` variables.

A transport opens one *operation* span per call (:meth:`Tracing.start_operation`, ended
by hand or as a ``with`` block), parented on the caller's W3C
``traceparent`` when it sends one; the work below it opens child spans
(:meth:`Tracing.span`): embedding, store calls, the log's fsync and its apply.

Attribute names follow the OpenTelemetry GenAI memory conventions (development
status): ``gen_ai.operation.name`` (``search_memory``, ``upsert_memory``, ...),
``gen_ai.memory.store.id`` (memoryd's partition, ``<tenant>/<agent>``),
``gen_ai.memory.record.id`` and ``gen_ai.memory.record.count``. Memory content is
never recorded; a search's query text only with ``tracing.capture_query_text``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Literal, Protocol

from memoryd.config import TracingSettings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

AttributeValue = str | bool | int | float | Sequence[str]
Attributes = Mapping[str, AttributeValue]
SpanKindName = Literal["server", "internal"]

# -- attribute names (GenAI memory conventions, RPC and DB conventions) ---------------
OPERATION_NAME = "gen_ai.operation.name"
STORE_ID = "gen_ai.memory.store.id"
RECORD_ID = "gen_ai.memory.record.id"
RECORD_COUNT = "gen_ai.memory.record.count"
QUERY_TEXT = "gen_ai.memory.query.text"
REQUEST_MODEL = "gen_ai.request.model"
EMBEDDING_DIMENSION = "gen_ai.embeddings.dimension.count"
ERROR_TYPE = "error.type"
RPC_SYSTEM = "rpc.system"
RPC_SERVICE = "rpc.service"
RPC_METHOD = "rpc.method"
RPC_STATUS_CODE = "rpc.grpc.status_code"
DB_OPERATION = "db.operation.name"
DB_COLLECTION = "db.collection.name"
REQUEST_ID = "memoryd.request_id"

#: Status codes that are the server's fault (span status ERROR); the others are the
#: caller's (``error.type`` only), as the RPC conventions put it for servers.
SERVER_FAULTS = frozenset(
    {"UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"}
)

# -- span names of the work under an operation ------------------------------------------
#: Waiting for the write-ahead log's group fsync that makes a write durable.
WAL_APPEND = "memoryd.wal.append"
#: Applying durable log entries to the store (inline, or behind the answer).
WAL_APPLY = "memoryd.wal.apply"
#: One commit of the write batcher carrying several calls' writes, linked to each (a
#: batch of one call's writes runs in that call's trace instead).
WRITE_BATCH = "memoryd.write.batch"

# -- gen_ai.operation.name of each operation ---------------------------------------------
SEARCH, CREATE, UPDATE, UPSERT, DELETE = (
    "search_memory",
    "create_memory",
    "update_memory",
    "upsert_memory",
    "delete_memory",
)
#: Operation (RPC method) -> its GenAI memory operation. Remember and SetMemory may
#: create, update or merge (near-duplicates, last write wins) without the caller
#: choosing: ``upsert_memory``. Reads of stored memory are ``search_memory``. GetStats,
#: Compact, RunMaintenance and EndSession have none (spans carry the RPC names only).
GENAI_OPERATIONS: dict[str, str] = {
    **dict.fromkeys(
        (
            "Recall", "GetMemory", "ListMemories", "GetKey", "ListKeys", "KeyHistory",
            "GetWorkingMemory", "ListWorkingMemoryScopes", "GetProfile", "GetSessionWindow",
            "BuildSnapshot", "DefaultRead", "LoadState", "Export",
        ),
        SEARCH,
    ),
    **dict.fromkeys(
        ("Remember", "RememberBatch", "SetMemory", "SetWorkingMemory", "SetProfile",
         "SaveState", "Import"),
        UPSERT,
    ),
    **dict.fromkeys(("AppendMessages", "InjectInstruction"), CREATE),
    **dict.fromkeys(("UpdateMemory", "Archive", "Restore", "Reembed"), UPDATE),
    **dict.fromkeys(("ForgetMemories", "DeleteWorkingMemory", "Prune", "Reset"), DELETE),
}  # fmt: skip


class TracingUnavailable(RuntimeError):
    """Tracing is enabled but cannot run (the extra is missing, an unsupported protocol)."""


class Span(AbstractContextManager["Span"], Protocol):
    """One span: attributes, the error it ended with, its end; as a ``with`` block,
    ended when the block ends (with the error of an exception escaping it)."""

    @property
    def recording(self) -> bool:
        """False for the no-op span and spans the sampler dropped: skip attribute work."""

    def set(self, key: str, value: AttributeValue) -> None: ...

    def fail(self, error_type: str, *, fault: bool) -> None:
        """Record ``error.type``; ``fault`` (a server-side failure) also sets the ERROR
        status, as the RPC conventions ask for INTERNAL, UNAVAILABLE and the like."""

    def end(self) -> None: ...


class Tracing(Protocol):
    """What memoryd's code traces through; :data:`NO_TRACING` or an OpenTelemetry one."""

    @property
    def enabled(self) -> bool: ...

    @property
    def capture_query_text(self) -> bool: ...

    def start_operation(
        self,
        name: str,
        attributes: Attributes,
        *,
        parent: Mapping[str, str] | None = None,
        kind: SpanKindName = "server",
    ) -> Span:
        """Start an operation's span and make it current (child spans nest under it)
        until :meth:`Span.end`, which must run in the same task, or until the ``with``
        block it opens ends (an exception escaping it is recorded as ``error.type``,
        its class name, with the ERROR status). ``parent`` is the caller's propagation
        fields (``traceparent``, ``tracestate``): gRPC metadata or MCP ``_meta``;
        without a valid one the span starts a new trace."""

    def span(
        self, name: str, attributes: Attributes | None = None, *, links: Sequence[object] = ()
    ) -> Span:
        """A child of the current span, started now and current until it ends: use it
        as a ``with`` block (an exception escaping it is recorded as above). ``links``:
        :meth:`capture` values of the calls it works for (a group commit)."""

    def capture(self) -> object | None:
        """The current span's context, for work done later on the caller's behalf (in
        another task): :meth:`resumed` continues it, :meth:`span` links to it. None
        without a current span (or with tracing off)."""

    def resumed(self, captured: object | None) -> AbstractContextManager[None]:
        """A :meth:`capture` value current within the block: spans started in it are
        children of the captured span."""

    def detached(self) -> AbstractContextManager[None]:
        """No current span within the block: a task created in it starts its own traces
        instead of joining the request that happened to create it."""

    async def close(self) -> None:
        """Export what is buffered and stop (after the server has drained)."""


class _NoSpan:
    """The span of disabled tracing: one shared instance, every method does nothing."""

    __slots__ = ()

    @property
    def recording(self) -> bool:
        return False

    def set(self, key: str, value: AttributeValue) -> None:
        return None

    def fail(self, error_type: str, *, fault: bool) -> None:
        return None

    def end(self) -> None:
        return None

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NO_SPAN = _NoSpan()


#: The block that does nothing, entered as often as wanted.
_NOTHING: AbstractContextManager[None] = nullcontext()


class NoTracing:
    """Tracing off: no spans, no OpenTelemetry import, a few attribute lookups a call;
    what a span would be given is ignored."""

    enabled = False
    capture_query_text = False

    def start_operation(self, *ignored: object, **ignored_too: object) -> Span:
        return NO_SPAN

    def span(self, *ignored: object, **ignored_too: object) -> Span:
        return NO_SPAN

    def capture(self) -> object | None:
        return None

    def resumed(self, captured: object | None) -> AbstractContextManager[None]:
        return _NOTHING

    def detached(self) -> AbstractContextManager[None]:
        return _NOTHING

    async def close(self) -> None:
        return None


NO_TRACING: Tracing = NoTracing()


def build_tracing(settings: TracingSettings, *, exporter: SpanExporter | None = None) -> Tracing:
    """:data:`NO_TRACING` unless ``settings.enabled``; then an OpenTelemetry tracer whose
    spans go to ``exporter`` as they end (tests) or, by default, to the OTLP/gRPC
    exporter in batches. Raises TracingUnavailable when it cannot be built."""
    if not settings.enabled:
        return NO_TRACING
    try:
        # Imported only here: with tracing off no OpenTelemetry module is ever loaded.
        from memoryd.observability.otel import build_otel_tracing
    except ImportError as exc:
        raise TracingUnavailable(
            f"tracing.enabled needs OpenTelemetry: pip install 'memoryd[tracing]' ({exc})"
        ) from None
    return build_otel_tracing(settings, exporter=exporter)
