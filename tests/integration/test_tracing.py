"""OpenTelemetry traces of a LIVE daemon: real gRPC calls carrying a W3C traceparent,
exported by the daemon's OTLP/gRPC exporter to a real receiver in this process
(tests/otlp_receiver.py), with the real local model and LanceDB on disk."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon, default_model_id
from tests.otlp_receiver import SERVER_KIND, STATUS_ERROR, OtlpReceiver, ReceivedSpan

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

AGENT = "tracer"
CONTENT = "The user keeps a sourdough starter called Bubbles in the fridge"
QUERY = "what is the name of the sourdough starter?"
KEY_VALUE = "prefers window seats on long flights"
#: The embeddings span of the model the daemon runs (GenAI: "{operation} {model}").
MODEL_SPAN = f"embeddings {default_model_id()}"
#: The exporter's batch delay, shortened so spans arrive quickly (polled, not slept).
FAST_EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "50"}


def traceparent() -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """A fresh caller trace: (trace id, the caller's span id, gRPC metadata)."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, (("traceparent", f"00-{trace_id}-{span_id}-01"),)


def in_trace(spans: list[ReceivedSpan], trace_id: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.trace_id == trace_id]


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.parent_id == parent.span_id]


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as r:
        yield r


@pytest.fixture
def traced(daemon_factory: type[Daemon], receiver: OtlpReceiver) -> Daemon:
    d = daemon_factory(
        env={
            "MEMORYD_TRACING__ENABLED": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_SERVICE_NAME": "memoryd-under-test",
            **FAST_EXPORT,
        }
    )
    d.start()
    return d


def test_spans_per_rpc_with_children_reach_a_real_collector(
    traced: Daemon, receiver: OtlpReceiver
) -> None:
    with traced.channel() as channel:
        stub = MemoryServiceStub(channel)
        remember_trace, remember_parent, md = traceparent()
        remembered = stub.Remember(
            mpb.RememberRequest(agent_id=AGENT, content=CONTENT), metadata=md
        )
        recall_trace, recall_parent, md = traceparent()
        recalled = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=QUERY), metadata=md)
        key_trace, _, md = traceparent()
        value = struct_pb2.Value(string_value=KEY_VALUE)
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT, key="/user/seat", content=value, source=USER_SOURCE_PB
            ),
            metadata=md,
        )
        bad_trace, _, md = traceparent()
        with pytest.raises(grpc.RpcError) as bad:
            stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=QUERY, limit=-1), metadata=md)
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert recalled.results and recalled.results[0].memory.id == remembered.memory.id

    def applied(spans: list[ReceivedSpan]) -> set[str]:
        """The store calls under apply passes (a records write at start is not one: the
        wait must not end before the key's apply pass has been exported)."""
        passes = [s for s in spans if s.name == "memoryd.wal.apply"]
        return {s.name for a in passes for s in children(spans, a)}

    def complete(spans: list[ReceivedSpan]) -> bool:
        return (
            {"upsert_memory", "memoryd.wal.append"}
            <= {s.name for s in in_trace(spans, remember_trace)}
            and MODEL_SPAN in {s.name for s in in_trace(spans, recall_trace)}
            and "memoryd.wal.append" in {s.name for s in in_trace(spans, key_trace)}
            and "put_records records" in applied(spans)
            and bool(in_trace(spans, bad_trace))
        )

    spans = receiver.wait_for(complete, "the spans of Remember, Recall, SetMemory and apply")

    # Remember: one SERVER span, child of the caller's span, GenAI memory attributes.
    (remember,) = [s for s in in_trace(spans, remember_trace) if s.kind == SERVER_KIND]
    assert remember.name == "upsert_memory" and remember.parent_id == remember_parent
    assert remember.attributes["gen_ai.operation.name"] == "upsert_memory"
    assert remember.attributes["gen_ai.memory.store.id"] == f"default/{AGENT}"
    assert remember.attributes["gen_ai.memory.record.id"] == remembered.memory.id
    assert remember.attributes["gen_ai.memory.record.count"] == 1
    assert remember.attributes["rpc.method"] == "Remember"
    assert remember.attributes["rpc.grpc.status_code"] == 0
    assert remember.resource["service.name"] == "memoryd-under-test"
    below = {s.name: s for s in children(spans, remember)}
    embedding = below[MODEL_SPAN]
    assert embedding.attributes["gen_ai.request.model"] == default_model_id()
    assert embedding.attributes["memoryd.embedding.texts"] == 1
    # Its writes went to the write batcher alone: the batch continues its trace, so the
    # log's group fsync shows under it (a batch of several calls is a linked trace).
    assert "memoryd.wal.append" in below

    # Recall: search_memory with the number of results and the model below (the search
    # itself is answered by the hot cache from memory: store spans are LanceDB's calls).
    (recall,) = [s for s in in_trace(spans, recall_trace) if s.kind == SERVER_KIND]
    assert recall.name == "search_memory" and recall.parent_id == recall_parent
    assert recall.attributes["gen_ai.memory.record.count"] == len(recalled.results)
    assert MODEL_SPAN in {s.name for s in children(spans, recall)}

    # SetMemory is answered at the log's fsync (which nests under it) and applied
    # behind, in an apply pass of its own: its store call nests under that.
    (keyed,) = [s for s in in_trace(spans, key_trace) if s.kind == SERVER_KIND]
    assert keyed.attributes["gen_ai.memory.record.id"] == "/user/seat"
    assert "memoryd.wal.append" in {s.name for s in children(spans, keyed)}
    assert "put_records records" in applied(spans)

    # A caller's mistake: error.type names the code, the status stays unset (not ERROR).
    (bad_span,) = [s for s in in_trace(spans, bad_trace) if s.kind == SERVER_KIND]
    assert bad_span.attributes["error.type"] == "INVALID_ARGUMENT"
    assert bad_span.attributes["rpc.grpc.status_code"] == 3
    assert bad_span.status != STATUS_ERROR

    # Never content or query text (capture_query_text is off by default).
    texts = [str(v) for s in spans for v in s.attributes.values()]
    assert not [t for t in texts if CONTENT in t or QUERY in t or KEY_VALUE in t]
    assert all("gen_ai.memory.query.text" not in s.attributes for s in spans)


def test_tracing_off_imports_nothing_of_opentelemetry(
    daemon_factory: type[Daemon], receiver: OtlpReceiver
) -> None:
    before = len(receiver.spans())
    d = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "PYTHONPROFILEIMPORTTIME": "1",
            **FAST_EXPORT,
        }
    )
    d.start()
    with d.channel() as channel:
        _, _, md = traceparent()
        MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(agent_id=AGENT, content=CONTENT), metadata=md
        )
    assert d.stop() == 0
    modules = d.imported()
    assert "grpc" in modules  # the import log works ...
    assert not [m for m in modules if m.startswith("opentelemetry")]  # ... and
    assert len(receiver.spans()) == before  # nothing was sent
