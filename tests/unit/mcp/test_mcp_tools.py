"""The daemon's MCP tools on the door, in process: a tool call is one span (named and
attributed as OpenTelemetry's MCP conventions put it, parented on the ``traceparent``
of its ``_meta``) over the operations it runs, which are its children; the caller's
credentials are the principal; the tool's structured result."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import Client
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from memoryd.config import McpSettings, SidecarSettings
from memoryd.mcp.http import McpHttpServer
from memoryd.mcp.server import McpRequest, ToolBackend, build_server, run_tool
from memoryd.mcp.tools import DoorTools
from memoryd.observability.otel import OtelTracing
from memoryd.observability.tracing import NO_TRACING, Tracing
from memoryd.operations import Door, Services
from memoryd.operations.auth import SidecarAuthenticator
from memoryd.security.settings import TlsSettings
from tests.mcp.support import http_client
from tests.unit.keyed.conftest import Keyed, keyed  # noqa: F401 (fixture)
from tests.unit.observability.test_tracing import tracing_with
from tests.unit.service.helpers import Harness, harness  # noqa: F401 (fixture)
from tests.unit.snapshot.world import world

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
PARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
SIDECAR = SidecarAuthenticator(SidecarSettings(tenant_id="acme", agents=["*"]))


def _door(services: Services, exporter: InMemorySpanExporter | None = None) -> Door:
    if exporter is None:
        return Door(services, SIDECAR)
    return Door(services, SIDECAR, tracing=tracing_with(exporter))


async def _run(
    backend: ToolBackend,
    name: str,
    arguments: dict[str, Any],
    request: McpRequest,
    tracing: Tracing = NO_TRACING,
) -> types.CallToolResult:
    """run_tool's wire dict, read back as the SDK's client reads it."""
    return types.CallToolResult.model_validate(
        await run_tool(backend, name, arguments, request, tracing)
    )


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


async def test_a_tool_call_is_a_span_of_the_callers_trace(harness: Harness) -> None:  # noqa: F811
    exporter = InMemorySpanExporter()
    door = _door(Services(memories=harness.service), exporter)
    tools = DoorTools(door, "a1")
    request = McpRequest(meta={"traceparent": PARENT}, rpc_id="7", protocol_version="2025-11-25")
    stored = await _run(tools, "remember", {"content": "likes tea"}, request, door.tracing)
    found = await _run(tools, "recall", {"query": "tea"}, McpRequest(), door.tracing)
    assert not stored.is_error and stored.structured_content is not None
    assert found.structured_content is not None
    assert [m["id"] for m in found.structured_content["memories"]] == [
        stored.structured_content["id"]
    ]
    spans = list(exporter.get_finished_spans())
    tool = _one(spans, "tools/call remember")
    assert tool.kind is SpanKind.SERVER
    assert f"{tool.context.trace_id:032x}" == TRACE_ID
    assert tool.parent is not None and f"{tool.parent.span_id:016x}" == CALLER_SPAN
    assert dict(tool.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "remember",
        "jsonrpc.request.id": "7",
        "mcp.protocol.version": "2025-11-25",
    }
    (remember,) = _children(spans, tool)
    assert remember.name == "upsert_memory" and remember.kind is SpanKind.INTERNAL
    attributes = dict(remember.attributes or {})
    assert attributes["rpc.system"] == "mcp" and attributes["gen_ai.tool.name"] == "remember"
    assert attributes["gen_ai.memory.store.id"] == "acme/a1"
    assert "likes tea" not in str([s.attributes for s in spans])  # never content
    recall_tool = _one(spans, "tools/call recall")
    assert recall_tool.parent is None  # no _meta traceparent: a trace of its own
    assert [s.name for s in _children(spans, recall_tool)] == ["search_memory"]


async def test_the_memory_tool_is_one_span_over_its_operations(keyed: Keyed) -> None:  # noqa: F811
    exporter = InMemorySpanExporter()
    door = _door(Services(memories=keyed.memories, keyed_memory=keyed.service), exporter)
    tools = DoorTools(door, "a1")
    create = {"command": "create", "path": "/memories/notes.md", "file_text": "tea at 5"}
    edit = {"command": "str_replace", "path": "/memories/notes.md", "old_str": "5", "new_str": "6"}
    assert not (await _run(tools, "memory", create, McpRequest(), door.tracing)).is_error
    request = McpRequest(meta={"traceparent": PARENT})
    edited = await _run(tools, "memory", edit, request, door.tracing)
    assert not edited.is_error, edited.content
    spans = list(exporter.get_finished_spans())
    tool = [s for s in spans if s.name == "tools/call memory"][-1]
    assert tool.parent is not None and f"{tool.parent.span_id:016x}" == CALLER_SPAN
    # str_replace reads the key, then writes its next version: both under the tool call.
    operations = _children(spans, tool)
    assert [s.name for s in operations] == ["search_memory", "upsert_memory"]
    assert {f"{s.context.trace_id:032x}" for s in operations} == {TRACE_ID}
    assert {s.attributes["gen_ai.memory.record.id"] for s in operations if s.attributes} == {
        "/memories/notes.md"
    }


async def test_a_tool_error_is_recorded_on_the_tool_span(harness: Harness) -> None:  # noqa: F811
    exporter = InMemorySpanExporter()
    door = _door(Services(memories=harness.service), exporter)
    tools = DoorTools(door, "a1")
    bad = await _run(tools, "recall", {"query": 7}, McpRequest(), door.tracing)
    missing = await _run(tools, "set_memory", {"key": "/a", "value": 1, "source": "user"},
                             McpRequest(), door.tracing)  # fmt: skip
    assert bad.is_error and missing.is_error
    spans = list(exporter.get_finished_spans())
    recall = _one(spans, "tools/call recall")
    assert recall.attributes is not None and recall.attributes["error.type"] == "INVALID_ARGUMENT"
    assert recall.status.status_code is StatusCode.UNSET  # the caller's fault
    assert _children(spans, recall) == []  # bad arguments never reach the door
    # Keyed memory is not in these services: the door's UNIMPLEMENTED is a server fault.
    set_memory = _one(spans, "tools/call set_memory")
    assert set_memory.attributes is not None
    assert set_memory.attributes["error.type"] == "UNIMPLEMENTED"
    assert set_memory.status.status_code is StatusCode.ERROR
    (operation,) = _children(spans, set_memory)
    assert operation.attributes is not None
    assert operation.attributes["error.type"] == "UNIMPLEMENTED"


async def test_a_tool_call_over_http_is_traced_from_its_meta(harness: Harness) -> None:  # noqa: F811
    """The SDK's client sends ``_meta`` and a JSON-RPC id; the endpoint's span has both."""
    exporter = InMemorySpanExporter()
    door = _door(Services(memories=harness.service), exporter)
    server = McpHttpServer(McpSettings(listen="127.0.0.1:0"), door, TlsSettings(), mode="sidecar")
    await server.start()
    try:
        async with http_client(server.address, None) as client:
            result = await client.call_tool(
                "remember", {"content": "likes tea"}, meta={"traceparent": PARENT}
            )
            assert not result.is_error, result.content
    finally:
        await server.stop()
    spans = list(exporter.get_finished_spans())
    tool = _one(spans, "tools/call remember")
    assert tool.parent is not None and f"{tool.parent.span_id:016x}" == CALLER_SPAN
    attributes = dict(tool.attributes or {})
    assert attributes["jsonrpc.request.id"] and attributes["mcp.protocol.version"]
    assert [s.name for s in _children(spans, tool)] == ["upsert_memory"]
    assert [s.name for s in spans if s.parent is None] == []  # nothing else, no orphans


async def test_bad_arguments_never_reach_the_door(harness: Harness) -> None:  # noqa: F811
    door = _door(Services(memories=harness.service))
    result = await _run(DoorTools(door, "a1"), "recall", {"query": 7}, McpRequest())
    assert result.is_error and '"query": "must be of type string' in result.content[0].text  # type: ignore[union-attr]


class _Backend:
    """Answers the profile and the snapshot, each inside a span of its own (as the door's
    operations are), to show what the request's span is the parent of."""

    default_agent = "a1"

    def __init__(self, tracing: OtelTracing) -> None:
        self._tracing = tracing

    async def call(
        self, name: str, arguments: dict[str, Any], request: McpRequest
    ) -> dict[str, Any]:
        with self._tracing.span(f"operation {name}"):
            if name == "read_agent_memory":
                return {"found": True, "content": "# a1", "etag": "e1"}
            return {"text": "what a1 knows", "tokens_used": 3, "token_budget": 100, "items": []}


async def test_a_resource_read_and_the_prompt_are_spans_too() -> None:
    exporter = InMemorySpanExporter()
    tracing = tracing_with(exporter)
    server = build_server(_Backend(tracing), tracing=tracing)
    async with Client(server) as client:
        uri = "memory://agents/a1/agent.md"
        read = await client.read_resource(uri, meta={"traceparent": PARENT})
        assert read.contents[0].text == "# a1"  # type: ignore[union-attr]
        prompt = await client.get_prompt("memory_context", {"trigger": "tea?"})
        assert prompt.messages[0].content.text == "what a1 knows"  # type: ignore[union-attr]
    spans = list(exporter.get_finished_spans())
    resource = _one(spans, "resources/read")  # the URI is not in the name: high cardinality
    assert resource.attributes is not None and resource.attributes["mcp.resource.uri"] == uri
    assert resource.parent is not None and f"{resource.parent.span_id:016x}" == CALLER_SPAN
    assert [s.name for s in _children(spans, resource)] == ["operation read_agent_memory"]
    prompt_span = _one(spans, "prompts/get memory_context")
    assert prompt_span.attributes is not None
    assert prompt_span.attributes["gen_ai.prompt.name"] == "memory_context"
    assert [s.name for s in _children(spans, prompt_span)] == ["operation build_snapshot"]


async def test_recall_reports_relevance_and_takes_min_relevance(harness: Harness) -> None:  # noqa: F811
    door = _door(Services(memories=harness.service), InMemorySpanExporter())
    tools = DoorTools(door, "a1")
    await _run(tools, "remember", {"content": "likes green tea"}, McpRequest(), door.tracing)
    found = await _run(tools, "recall", {"query": "green tea"}, McpRequest(), door.tracing)
    assert found.structured_content is not None
    (hit,) = found.structured_content["memories"]
    assert 0.0 < hit["relevance"] <= 1.0
    above = {"query": "green tea", "min_relevance": min(1.0, hit["relevance"] + 0.01)}
    none = await _run(tools, "recall", above, McpRequest(), door.tracing)
    assert none.structured_content is not None and none.structured_content["memories"] == []
    bad = await _run(
        tools, "recall", {"query": "tea", "min_relevance": 2}, McpRequest(), door.tracing
    )
    assert bad.is_error


async def test_remember_takes_a_session_position_and_recall_a_context_window(
    harness: Harness,  # noqa: F811
) -> None:
    door = _door(Services(memories=harness.service), InMemorySpanExporter())
    tools = DoorTools(door, "a1")
    turns = ["Ana: any plans?", "Ben: the Lisbon marathon", "Ana: good luck", "Ben: thanks"]
    for seq, text in enumerate(turns, start=1):
        turn = {"content": text, "session_id": "run-1", "sequence": seq}
        assert not (await _run(tools, "remember", turn, McpRequest(), door.tracing)).is_error
    asked = {"query": "Lisbon marathon", "limit": 3, "context_window": 1}
    found = await _run(tools, "recall", asked, McpRequest(), door.tracing)
    assert found.structured_content is not None
    hits = found.structured_content["memories"]
    assert hits[0]["content"] == turns[1]
    assert {h["content"] for h in hits[1:]} == {turns[0], turns[2]}
    for bad_name, bad in (
        ("recall", {**asked, "context_window": 6}),
        ("remember", {"content": "x", "session_id": "run-1", "sequence": 0}),
    ):
        assert (await _run(tools, bad_name, bad, McpRequest(), door.tracing)).is_error


async def test_build_snapshot_takes_a_context_window() -> None:
    """The snapshot tool's context_window reaches its semantic section as Recall's does:
    the best hit's neighbouring turns, ranked just below it, take the place of weaker
    matches; a window above 5 is refused."""
    chat = ["Ana: tea or coffee?", "Ben: the Lisbon marathon, Sunday", "Ana: good luck"]
    elsewhere = ["Cal: Lisbon has yellow trams", "Dee: a marathon of meetings"]
    async with world() as w:
        door = _door(Services(memories=w.memories, snapshot_service=w.snapshots))
        tools = DoorTools(door, "a1")
        ids: dict[str, str] = {}
        turns = [(t, "run-1", seq) for seq, t in enumerate(chat, start=1)]
        # Each elsewhere in a session of its own: no neighbour supports it.
        alone = [(t, f"alone-{i}", 1) for i, t in enumerate(elsewhere)]
        for text, session, seq in [*turns, *alone]:
            turn = {"content": text, "session_id": session, "sequence": seq}
            stored = await _run(tools, "remember", turn, McpRequest())
            assert stored.structured_content is not None
            ids[stored.structured_content["id"]] = text

        async def semantic(window: int) -> list[str]:
            asked = {"trigger": "Lisbon marathon", "context_window": window}
            built = await _run(tools, "build_snapshot", asked, McpRequest())
            assert not built.is_error and built.structured_content is not None
            items = built.structured_content["items"]
            return [ids[i["id"]] for i in items if i["section"] == "semantic"]

        without, expanded = await semantic(0), await semantic(1)
        assert without[0] == expanded[0] == chat[1]
        assert set(without[1:]) == set(elsewhere)  # the next-best matches, another session's
        # A neighbour (ranked just below the hit) takes the place of a next-best match.
        added = set(expanded) - set(without)
        assert added and added <= {chat[0], chat[2]}
        bad = {"trigger": "Lisbon marathon", "context_window": 6}
        assert (await _run(tools, "build_snapshot", bad, McpRequest())).is_error
