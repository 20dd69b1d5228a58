"""The OpenTelemetry side of :mod:`memoryd.observability.tracing`, imported only when
``tracing.enabled``: an SDK tracer provider owned by the daemon (never installed as
the global one), W3C trace-context extraction, and spans.

The exporter is OTLP over gRPC, configured entirely by the standard variables
(``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``_HEADERS``, ``_CERTIFICATE``,
``_INSECURE``, ``_TIMEOUT``, ``_COMPRESSION``); the batch processor by ``OTEL_BSP_*``,
the sampler by ``OTEL_TRACES_SAMPLER[_ARG]`` and the resource by ``OTEL_SERVICE_NAME``
and ``OTEL_RESOURCE_ATTRIBUTES`` (service.name defaults to ``memoryd``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from memoryd import __version__
from memoryd.config import TracingSettings
from memoryd.domain.errors import MemorydError
from memoryd.observability.tracing import (
    ERROR_TYPE,
    SERVER_FAULTS,
    Attributes,
    AttributeValue,
    SpanKindName,
    TracingUnavailable,
)

INSTRUMENTATION_SCOPE = "memoryd"
_KINDS = {"server": SpanKind.SERVER, "internal": SpanKind.INTERNAL}
_PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def error_of(exc: BaseException) -> tuple[str, bool]:
    """(``error.type``, whether it is the server's fault) of an exception: a memoryd
    error by its status code, anything else by its class name."""
    if isinstance(exc, MemorydError):
        return exc.status, exc.status in SERVER_FAULTS
    if isinstance(exc, asyncio.CancelledError):
        return "CANCELLED", False
    return type(exc).__name__, True


class OtelSpan:
    """One started span, current until :meth:`end` (or the end of its ``with`` block)."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: trace.Span, token: object) -> None:
        self._span = span
        self._token = token

    @property
    def recording(self) -> bool:
        return self._span.is_recording()

    def set(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def fail(self, error_type: str, *, fault: bool) -> None:
        self._span.set_attribute(ERROR_TYPE, error_type)
        if fault:
            self._span.set_status(Status(StatusCode.ERROR, error_type))

    def end(self) -> None:
        token, self._token = self._token, None
        if token is not None:
            context.detach(token)  # type: ignore[arg-type]
        self._span.end()

    def __enter__(self) -> OtelSpan:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            # The class or status code only: exception messages may quote user data.
            error_type, fault = error_of(exc)
            self.fail(error_type, fault=fault)
        self.end()


class OtelTracing:
    """:class:`~memoryd.observability.tracing.Tracing` over one SDK TracerProvider."""

    enabled = True

    def __init__(self, provider: TracerProvider, *, capture_query_text: bool = False) -> None:
        self._provider = provider
        self._tracer = provider.get_tracer(INSTRUMENTATION_SCOPE, __version__)
        self._propagator = TraceContextTextMapPropagator()
        self.capture_query_text = capture_query_text

    def _start(
        self,
        name: str,
        attributes: Attributes | None,
        parent: Context | None,
        kind: SpanKind,
        links: Sequence[trace.Link] = (),
    ) -> OtelSpan:
        span = self._tracer.start_span(
            name, context=parent, kind=kind, attributes=attributes, links=links
        )
        return OtelSpan(span, context.attach(trace.set_span_in_context(span, parent)))

    def start_operation(
        self,
        name: str,
        attributes: Attributes,
        *,
        parent: Mapping[str, str] | None = None,
        kind: SpanKindName = "server",
    ) -> OtelSpan:
        # Never the current context: an operation's parent is its caller's or none.
        remote = self._propagator.extract(parent) if parent else Context()
        return self._start(name, attributes, remote, _KINDS[kind])

    def span(
        self, name: str, attributes: Attributes | None = None, *, links: Sequence[object] = ()
    ) -> OtelSpan:
        kept = [
            trace.Link(trace.get_current_span(c).get_span_context())
            for c in links
            if isinstance(c, Context)
        ]
        return self._start(name, attributes, None, SpanKind.INTERNAL, kept)

    def capture(self) -> Context | None:
        current = context.get_current()
        return current if trace.get_current_span(current).get_span_context().is_valid else None

    def resumed(self, captured: object | None) -> AbstractContextManager[None]:
        return _attached(captured if isinstance(captured, Context) else Context())

    def detached(self) -> AbstractContextManager[None]:
        return _attached(Context())

    async def close(self) -> None:
        # shutdown() flushes the batch processor: blocking I/O, off the event loop.
        await asyncio.to_thread(self._provider.shutdown)


@contextmanager
def _attached(current: Context) -> Iterator[None]:
    token = context.attach(current)
    try:
        yield
    finally:
        context.detach(token)


def _resource() -> Resource:
    """OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME, with memoryd's name and version."""
    detected = Resource.create({SERVICE_VERSION: __version__})
    name = str(detected.attributes.get(SERVICE_NAME, ""))
    if not name or name.startswith("unknown_service"):
        return detected.merge(Resource({SERVICE_NAME: INSTRUMENTATION_SCOPE}))
    return detected


def _otlp_processor() -> SpanProcessor:
    for variable in _PROTOCOL_VARIABLES:
        protocol = os.environ.get(variable, "").strip()
        if protocol and protocol != "grpc":
            raise TracingUnavailable(
                f"{variable}={protocol}: memoryd exports traces over OTLP/gRPC only "
                "(unset it, or use 'grpc')"
            )
    return BatchSpanProcessor(OTLPSpanExporter())


def build_otel_tracing(
    settings: TracingSettings, *, exporter: SpanExporter | None = None
) -> OtelTracing:
    """A provider of its own (the global one is left alone) with the OTLP/gRPC batch
    exporter, or ``exporter`` fed span by span as each ends."""
    provider = TracerProvider(resource=_resource())
    processor = SimpleSpanProcessor(exporter) if exporter is not None else _otlp_processor()
    provider.add_span_processor(processor)
    return OtelTracing(provider, capture_query_text=settings.capture_query_text)
