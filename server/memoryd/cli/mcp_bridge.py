"""``memoryd mcp``: the MCP server over stdio, a bridge an agent host launches.

It speaks MCP on stdin/stdout and gRPC to a running daemon with the Python client, so
identity is the gRPC connection's: ``$MEMORYD_API_KEY`` in api_key mode, a client
certificate for mtls (``--tls-cert`` / ``--tls-key``), the socket's principal in
sidecar mode. The tools, resources and prompt are the daemon's own MCP server's
(memoryd.mcp.server), run on the client (memoryd_client.tool_calls); resource
subscriptions follow the daemon's change feed (memoryd.cli.mcp_subscriptions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus

from memoryd.cli.mcp_subscriptions import KeyWatches, listen_handler
from memoryd.mcp.errors import ToolFailure
from memoryd.mcp.server import McpRequest, build_server
from memoryd_client import AsyncMemorydClient, TlsConfig
from memoryd_client.errors import InvalidArgumentError, MemorydError
from memoryd_client.tool_calls import AsyncToolRunner, ToolContext

JSON = dict[str, Any]


class BridgeTools:
    """The table's tools on a gRPC client (memoryd.mcp.server.ToolBackend)."""

    def __init__(self, client: AsyncMemorydClient, agent: str) -> None:
        self._runner = AsyncToolRunner(client, ToolContext(agent_id=agent))
        self._agent = agent

    @property
    def default_agent(self) -> str:
        return self._agent

    async def call(self, name: str, arguments: JSON, request: McpRequest) -> JSON:
        try:
            return await self._runner.run(name, arguments)
        except MemorydError as exc:
            fields = (
                {v.field: v.description for v in exc.field_violations}
                if isinstance(exc, InvalidArgumentError)
                else None
            )
            raise ToolFailure(exc.code_name, exc.message, fields) from None


@dataclass(frozen=True, slots=True)
class BridgeOptions:
    address: str | None
    agent: str
    tls: TlsConfig | None = None


async def run_bridge(options: BridgeOptions) -> None:
    """Serve MCP on stdio until the host closes it."""
    async with AsyncMemorydClient(options.address, tls=options.tls) as client:
        bus = InMemorySubscriptionBus()
        watches = KeyWatches(client, bus)
        server = build_server(
            BridgeTools(client, options.agent), on_listen=listen_handler(watches, bus)
        )
        try:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            await watches.close()
