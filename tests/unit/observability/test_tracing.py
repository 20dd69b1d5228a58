"""Tracing: the no-op default, and the OpenTelemetry side with the SDK's in-memory
exporter (spans as they end, no collector): parents, kinds, errors, links, the
resource, and the gRPC call's span built from real protobuf messages."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from memoryd.config import TracingSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.principal import Principal, Role
from memoryd.domain.requests import (
    MemoryDraft,
    RecallOutcome,
    RecallQuery,
    ScoreComponents,
    ScoredMemory,
)
from memoryd.embedding import HashingEmbedder
from memoryd.observability.instrumented import InstrumentedEmbedder, InstrumentedStore
from memoryd.observability.otel import OtelTracing, build_otel_tracing
from memoryd.observability.tracing import (
    NO_SPAN,
    NO_TRACING,
    TracingUnavailable,
    build_tracing,
)
from memoryd.operations import Call
from memoryd.operations import lifecycle as lifecycle_ops
from memoryd.operations import memories as memory_ops
from memoryd.operations.auth import Transport
from memoryd.operations.trace import CallTrace
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.storage.memory import InMemoryStore
from tests.unit.hot_cache.helpers import DIM, P, memory

ON = TracingSettings(enabled=True)
RECALL = "/memoryd.v1.MemoryService/Recall"
PRINCIPAL = Principal(
    name="k",
    tenant_id="acme",
    agents=frozenset({"*"}),
    clearance=SecurityLevel.RESTRICTED,
    roles=frozenset(Role),
)


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    yield InMemorySpanExporter()


def tracing_with(exporter: InMemorySpanExporter, settings: TracingSettings = ON) -> OtelTracing:
    return build_otel_tracing(settings, exporter=exporter)


def by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {s.name: s for s in exporter.get_finished_spans()}


def test_off_is_the_shared_no_op() -> None:
    assert build_tracing(TracingSettings()) is NO_TRACING
    assert not NO_TRACING.enabled
    with NO_TRACING.span("x") as span:
        assert span is NO_SPAN and not span.recording
    assert NO_TRACING.start_operation("op", {}) is NO_SPAN
    assert NO_TRACING.capture() is None
    with NO_TRACING.resumed(None), NO_TRACING.detached():
        pass


def test_an_operation_joins_the_callers_trace_and_nests_its_children(
    exported: InMemorySpanExporter,
) -> None:
    tracing = tracing_with(exported)
    trace_id, caller = secrets.token_hex(16), secrets.token_hex(8)
    op = tracing.start_operation(
        "search_memory", {"k": "v"}, parent={"traceparent": f"00-{trace_id}-{caller}-01"}
    )
    with tracing.span("search memories"):
        pass
    op.end()
    spans = by_name(exported)
    server, child = spans["search_memory"], spans["search memories"]
    assert server.kind == SpanKind.SERVER and child.kind == SpanKind.INTERNAL
    assert f"{server.context.trace_id:032x}" == trace_id
    assert server.parent is not None and f"{server.parent.span_id:016x}" == caller
    assert server.parent.is_remote
    assert child.parent is not None and child.parent.span_id == server.context.span_id
    # Ended: the next operation is not its child.
    with tracing.start_operation("again", {}):
        pass
    assert by_name(exported)["again"].parent is None


def test_a_bad_or_missing_traceparent_starts_a_new_trace(exported: InMemorySpanExporter) -> None:
    tracing = tracing_with(exported)
    for parent in (None, {"traceparent": "not-a-traceparent"}, {"traceparent": "00-" + "0" * 32}):
        with tracing.start_operation("op", {}, parent=parent):
            pass
    assert [s.parent for s in exported.get_finished_spans()] == [None, None, None]


def test_errors_are_typed_and_never_quote_the_message(exported: InMemorySpanExporter) -> None:
    tracing = tracing_with(exported)
    with pytest.raises(InvalidArgument), tracing.span("caller's fault"):
        raise InvalidArgument.field("query", "secret user text")
    with pytest.raises(RuntimeError), tracing.span("server's fault"):
        raise RuntimeError("secret user text")
    spans = by_name(exported)
    caller, server = spans["caller's fault"], spans["server's fault"]
    assert caller.attributes == {"error.type": "INVALID_ARGUMENT"}
    assert caller.status.status_code == StatusCode.UNSET
    assert server.attributes == {"error.type": "RuntimeError"}
    assert server.status.status_code == StatusCode.ERROR
    for span in (caller, server):
        assert not span.events  # no exception event with a message or a traceback
        assert "secret" not in str(span.status.description)


async def test_detached_tasks_start_their_own_traces_and_captured_ones_resume_or_link(
    exported: InMemorySpanExporter,
) -> None:
    tracing = tracing_with(exported)
    assert tracing.capture() is None  # no current span

    async def background() -> None:
        with tracing.span("background"):
            pass

    with tracing.start_operation("request", {}):
        captured = tracing.capture()
        inherited = asyncio.create_task(background())
        with tracing.detached():
            detached = asyncio.create_task(background())
        await asyncio.gather(inherited, detached)
    with tracing.resumed(captured), tracing.span("on the caller's behalf"):
        pass
    with tracing.span("batch", links=[captured, None, "not a context"]):
        pass
    spans = by_name(exported)
    request = spans["request"].context.span_id
    parents = [s.parent for s in exported.get_finished_spans() if s.name == "background"]
    assert sorted(p is None for p in parents) == [False, True]
    resumed = spans["on the caller's behalf"].parent
    assert resumed is not None and resumed.span_id == request
    assert spans["batch"].parent is None
    assert [k.context.span_id for k in spans["batch"].links] == [request]


def test_the_provider_is_the_daemons_own(
    exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = trace.get_tracer_provider()
    with tracing_with(exported).span("s"):
        pass
    assert trace.get_tracer_provider() is before  # the global provider is left alone
    assert by_name(exported)["s"].resource.attributes["service.name"] == "memoryd"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "memories-eu")
    with tracing_with(exported).span("t"):
        pass
    assert by_name(exported)["t"].resource.attributes["service.name"] == "memories-eu"


def test_only_otlp_over_grpc_is_exported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    with pytest.raises(TracingUnavailable, match="OTLP/gRPC only"):
        build_tracing(ON)


def grpc_call(
    method: str, request_id: str = "r", metadata: tuple[tuple[str, str], ...] = ()
) -> Call:
    """The Call api/rpc.py makes for one gRPC request."""
    service, _, name = method.lstrip("/").partition("/")
    return Call(
        request_id=request_id,
        label=method,
        credentials=Transport(metadata=metadata),
        trace_attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": name},
        status_attribute="rpc.grpc.status_code",
    )


def _recall_call(tracing: OtelTracing, query: RecallQuery, results: int) -> None:
    call = grpc_call(RECALL, "req-1", (("x-other", "1"),))
    trace = CallTrace.start(tracing, memory_ops.RECALL, call)
    outcome = RecallOutcome(
        results=[
            ScoredMemory(memory(P, id=f"m{i}"), 0.5, ScoreComponents()) for i in range(results)
        ],
        embedding_model="m",
    )
    trace.result(memory_ops.RECALL, query, outcome)
    call.principal, call.agent = PRINCIPAL, "a1"
    trace.end(call)


def test_a_grpc_calls_span_counts_results_and_keeps_the_query_out(
    exported: InMemorySpanExporter,
) -> None:
    query = RecallQuery(query="where does my sister live?")
    _recall_call(tracing_with(exported), query, results=3)
    span = by_name(exported)["search_memory"]
    assert dict(span.attributes or {}) == {
        "rpc.system": "grpc",
        "rpc.service": "memoryd.v1.MemoryService",
        "rpc.method": "Recall",
        "memoryd.request_id": "req-1",
        "gen_ai.operation.name": "search_memory",
        "gen_ai.memory.record.count": 3,
        "rpc.grpc.status_code": 0,
        "gen_ai.memory.store.id": "acme/a1",
    }
    exported.clear()
    opted_in = tracing_with(exported, TracingSettings(enabled=True, capture_query_text=True))
    _recall_call(opted_in, query, results=0)
    attributes = by_name(exported)["search_memory"].attributes or {}
    assert attributes["gen_ai.memory.query.text"] == "where does my sister live?"
    assert attributes["gen_ai.memory.record.count"] == 0


def test_a_writes_span_counts_what_it_sent_and_names_its_record(
    exported: InMemorySpanExporter,
) -> None:
    tracing = tracing_with(exported)
    drafts = [MemoryDraft(f"fact {i}") for i in range(4)]
    call = grpc_call("/memoryd.v1.MemoryService/RememberBatch")
    batch = CallTrace.start(tracing, memory_ops.REMEMBER_BATCH, call)
    batch.result(memory_ops.REMEMBER_BATCH, drafts, [])
    call.principal, call.agent, call.ids = PRINCIPAL, "a1", ["m1", "m2"]
    batch.end(call)
    call = grpc_call("/memoryd.v1.MemoryService/Remember")
    single = CallTrace.start(tracing, memory_ops.REMEMBER, call)
    call.principal, call.agent, call.ids, call.code = PRINCIPAL, "a1", ["m9"], "UNAVAILABLE"
    single.end(call)
    call = grpc_call("/memoryd.v1.LifecycleService/GetStats")
    stats = CallTrace.start(tracing, lifecycle_ops.GET_STATS, call)
    call.code = "PERMISSION_DENIED"
    stats.end(call)
    spans = {s.attributes["rpc.method"]: s for s in exported.get_finished_spans() if s.attributes}
    assert spans["RememberBatch"].attributes["gen_ai.memory.record.count"] == 4
    assert "gen_ai.memory.record.id" not in spans["RememberBatch"].attributes
    assert spans["Remember"].attributes["gen_ai.memory.record.id"] == "m9"
    assert spans["Remember"].status.status_code == StatusCode.ERROR  # the server's fault
    assert spans["GetStats"].name == "memoryd.v1.LifecycleService/GetStats"
    assert "gen_ai.operation.name" not in spans["GetStats"].attributes
    assert spans["GetStats"].attributes["error.type"] == "PERMISSION_DENIED"
    assert spans["GetStats"].status.status_code == StatusCode.UNSET


def test_a_grpc_call_without_tracing_costs_no_span() -> None:
    call = grpc_call(RECALL)
    trace = CallTrace.start(NO_TRACING, memory_ops.RECALL, call)
    assert trace.span is NO_SPAN
    trace.result(memory_ops.RECALL, RecallQuery(), RecallOutcome([], "m"))
    trace.end(call)


async def test_store_and_embedder_calls_are_spans_without_metrics(
    exported: InMemorySpanExporter,
) -> None:
    tracing = tracing_with(exported)
    store = InstrumentedStore(InMemoryStore(DIM), None, tracing)
    model = InstrumentedEmbedder(HashingEmbedder(DIM), None, tracing)
    p = Partition("t", "a")
    with tracing.start_operation("upsert_memory", {}):
        await store.open()
        await store.upsert(p, [memory(p, id="a")])
        assert [m.id for m in await store.get(p, ["a"])] == ["a"]
        await model.embed(["a secret sentence", "another"], kind="query")
    spans = by_name(exported)
    root = spans["upsert_memory"].context.span_id
    assert spans["upsert memories"].attributes == {
        "db.operation.name": "upsert",
        "db.collection.name": "memories",
    }
    embedding = spans[f"embeddings {model.model_id}"]
    assert embedding.attributes is not None
    assert embedding.attributes["memoryd.embedding.texts"] == 2
    assert embedding.attributes["memoryd.embedding.kind"] == "query"
    for name in ("upsert memories", "get memories", f"embeddings {model.model_id}"):
        parent = spans[name].parent
        assert parent is not None and parent.span_id == root


async def test_the_write_batcher_continues_a_lone_call_and_links_a_batch_to_its_calls(
    exported: InMemorySpanExporter,
) -> None:
    tracing = tracing_with(exported)
    store = InstrumentedStore(InMemoryStore(DIM), None, tracing)
    await store.open()
    writer = WriteBatcher(store, max_batch=100, tracing=tracing)
    writer.start()
    p = Partition("t", "a")

    async def call(name: str) -> None:
        with tracing.start_operation(name, {}):
            await writer.submit(p, [memory(p, id=name)])

    try:
        await call("alone")
        await asyncio.gather(*(call(f"together-{i}") for i in range(3)))
    finally:
        await writer.close()
    spans = exported.get_finished_spans()
    ops = {s.name: s.context.span_id for s in spans if s.name.startswith(("alone", "together"))}
    upserts = [s for s in spans if s.name == "upsert memories"]
    assert upserts[0].parent is not None and upserts[0].parent.span_id == ops["alone"]
    (batch,) = [s for s in spans if s.name == "memoryd.write.batch"]
    assert batch.parent is None and batch.attributes == {"memoryd.write.calls": 3}
    assert sorted(k.context.span_id for k in batch.links) == sorted(
        v for k, v in ops.items() if k.startswith("together")
    )
    assert upserts[1].parent is not None and upserts[1].parent.span_id == batch.context.span_id
