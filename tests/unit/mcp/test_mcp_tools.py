"""The daemon's MCP tools on the door, in process: a span per tool call parented on the
``traceparent`` of its ``_meta``, the caller's credentials as the principal, and the
tool's structured result."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memoryd.config import SidecarSettings
from memoryd.mcp.server import McpRequest, run_tool
from memoryd.mcp.tools import DoorTools
from memoryd.operations import Door, Services
from memoryd.operations.auth import SidecarAuthenticator
from tests.unit.observability.test_tracing import tracing_with
from tests.unit.service.helpers import Harness, harness  # noqa: F401 (fixture)

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"


async def test_a_tool_call_is_a_span_of_the_callers_trace(harness: Harness) -> None:  # noqa: F811
    exporter = InMemorySpanExporter()
    door = Door(
        Services(memories=harness.service),
        SidecarAuthenticator(SidecarSettings(tenant_id="acme", agents=["*"])),
        tracing=tracing_with(exporter),
    )
    tools = DoorTools(door, "a1")
    request = McpRequest(meta={"traceparent": PARENT})
    stored = await run_tool(tools, "remember", {"content": "likes tea"}, request)
    found = await run_tool(tools, "recall", {"query": "tea"}, McpRequest())
    assert not stored.is_error and stored.structured_content is not None
    assert found.structured_content is not None
    assert [m["id"] for m in found.structured_content["memories"]] == [
        stored.structured_content["id"]
    ]
    spans = {s.name: s for s in exporter.get_finished_spans()}
    remember, recall = spans["upsert_memory"], spans["search_memory"]
    assert f"{remember.context.trace_id:032x}" == TRACE_ID
    assert remember.parent is not None and f"{remember.parent.span_id:016x}" == "b7ad6b7169203331"
    assert recall.parent is None  # no _meta traceparent: a trace of its own
    attributes = dict(remember.attributes or {})
    assert attributes["rpc.system"] == "mcp" and attributes["gen_ai.tool.name"] == "remember"
    assert attributes["gen_ai.memory.store.id"] == "acme/a1"
    assert "likes tea" not in str(attributes)  # never content


async def test_bad_arguments_never_reach_the_door(harness: Harness) -> None:  # noqa: F811
    door = Door(
        Services(memories=harness.service),
        SidecarAuthenticator(SidecarSettings(tenant_id="acme", agents=["*"])),
    )
    result = await run_tool(DoorTools(door, "a1"), "recall", {"query": 7}, McpRequest())
    assert result.is_error and '"query": "must be of type string' in result.content[0].text  # type: ignore[union-attr]
