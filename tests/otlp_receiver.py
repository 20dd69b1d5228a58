"""A real OTLP/gRPC trace receiver for tests and the bench: the collector's
TraceService (opentelemetry-proto) on 127.0.0.1:<ephemeral>, keeping every span a
daemon's OTLP exporter sends it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

SERVER_KIND = trace_pb2.Span.SPAN_KIND_SERVER
STATUS_ERROR = trace_pb2.Status.STATUS_CODE_ERROR


def _value(v: common_pb2.AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    status: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    #: (trace id, span id) of each linked span.
    links: tuple[tuple[str, str], ...] = ()


@dataclass
class OtlpReceiver:
    """``with OtlpReceiver() as r:`` then point OTEL_EXPORTER_OTLP_ENDPOINT at
    ``r.endpoint``; ``r.spans()`` is everything received so far."""

    address: str = ""
    requests: int = 0
    _spans: list[ReceivedSpan] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: grpc.Server | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.address}"

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(
                self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
            ) -> trace_service_pb2.ExportTraceServiceResponse:
                receiver._keep(request)
                return trace_service_pb2.ExportTraceServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), self._server)
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.address = f"127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.stop(grace=None)

    def _keep(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        spans = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    spans.append(
                        ReceivedSpan(
                            name=s.name,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(),
                            kind=s.kind,
                            status=s.status.code,
                            attributes={a.key: _value(a.value) for a in s.attributes},
                            resource=resource,
                            links=tuple((k.trace_id.hex(), k.span_id.hex()) for k in s.links),
                        )
                    )
        with self._lock:
            self.requests += 1
            self._spans.extend(spans)

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    def wait_for(
        self, found: Callable[[list[ReceivedSpan]], bool], what: str, timeout_s: float = 30.0
    ) -> list[ReceivedSpan]:
        """Poll until ``found(spans)`` holds (the exporter sends in batches)."""
        deadline = time.monotonic() + timeout_s
        while True:
            spans = self.spans()
            if found(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted({s.name for s in spans})
                raise AssertionError(f"no {what} after {timeout_s} s; received: {names}")
            time.sleep(0.05)
