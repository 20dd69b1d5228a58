"""The span of one MCP request that runs memoryd operations: a tool call, a resource
read, the prompt.

Named and attributed as OpenTelemetry's MCP conventions put it (development status):
``{mcp.method.name} {target}`` (``tools/call recall``), kind SERVER,
``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``; a tool call
also ``gen_ai.operation.name`` ``execute_tool`` and ``gen_ai.tool.name``. It is
parented on the W3C trace context of the request's ``_meta``, and the operations the
request runs are its children (the door's spans, operations/trace.py): the ``memory``
file tool's reads and writes of keys sit under one tool span. A tool error records its
status code as ``error.type``; the span's status is ERROR only for the server's faults,
as for a gRPC call. The SDK's own span per message is not used (it would go to the
process-wide tracer provider, which memoryd leaves alone).
"""

from __future__ import annotations

from collections.abc import Mapping

from memoryd.observability.tracing import NO_SPAN, OPERATION_NAME, Span, Tracing

MCP_METHOD = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
TOOL_NAME = "gen_ai.tool.name"
PROMPT_NAME = "gen_ai.prompt.name"
#: gen_ai.operation.name of a tool call.
EXECUTE_TOOL = "execute_tool"

TOOLS_CALL = "tools/call"
RESOURCES_READ = "resources/read"
PROMPTS_GET = "prompts/get"


def request_span(
    tracing: Tracing,
    method: str,
    *,
    target: str = "",
    parent: Mapping[str, str] | None = None,
    rpc_id: str = "",
    protocol_version: str = "",
    resource_uri: str = "",
) -> Span:
    """Start the span of an MCP request (current until it ends, in this task); the
    shared no-op span with tracing off. ``target`` is a tool's or prompt's name (low
    cardinality: never a resource URI)."""
    if not tracing.enabled:
        return NO_SPAN
    found = {MCP_METHOD: method}
    if method == TOOLS_CALL:
        found[OPERATION_NAME] = EXECUTE_TOOL
        found[TOOL_NAME] = target
    elif method == PROMPTS_GET:
        found[PROMPT_NAME] = target
    if resource_uri:
        found[MCP_RESOURCE_URI] = resource_uri
    if rpc_id:
        found[JSONRPC_REQUEST_ID] = rpc_id
    if protocol_version:
        found[MCP_PROTOCOL_VERSION] = protocol_version
    name = f"{method} {target}" if target else method
    return tracing.start_operation(name, found, parent=parent)
