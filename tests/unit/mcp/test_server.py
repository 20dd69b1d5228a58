"""build_server's per-call work: what it hands the SDK to check on every tool call."""

from __future__ import annotations

from typing import Any

from memoryd.mcp.server import McpRequest, build_server, header_schemas
from memoryd_client.tool_table import MCP_TOOLS, TOOLS


class _Nothing:
    default_agent = "a1"

    async def call(self, name: str, arguments: dict[str, Any], request: McpRequest) -> Any:
        raise AssertionError("not called")


def test_only_schemas_declaring_mcp_param_headers_are_looked_up() -> None:
    """The SDK walks a called tool's input schema twice a call to check ``Mcp-Param-*``
    headers; a schema without ``x-mcp-header`` annotations has none to check."""
    server = build_server(_Nothing())
    assert server.get_tool_input_schema is not None
    assert [n for n in MCP_TOOLS if server.get_tool_input_schema(n) is not None] == []
    declared = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    plain = TOOLS["recall"].input_schema()
    assert header_schemas({"routed": declared, "recall": plain}) == {"routed": declared}
