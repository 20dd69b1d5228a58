"""The daemon's MCP endpoint, in process: Nagle off on its connections (mtls: test_mtls.py)."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2

from memoryd.config import McpSettings, SidecarSettings
from memoryd.mcp.http import McpHttpServer
from memoryd.operations import Door, Services
from memoryd.operations.auth import SidecarAuthenticator
from memoryd.security.settings import TlsSettings
from tests.unit.service.helpers import Harness, harness  # noqa: F401 (fixture)


def _door(h: Harness) -> Door:
    return Door(Services(memories=h.service), SidecarAuthenticator(SidecarSettings()))


async def test_connections_are_accepted_with_nagle_off(harness: Harness) -> None:  # noqa: F811
    """uvicorn writes a response's head and body apart: with Nagle on, each call waited
    for the client's delayed ACK (~40 ms). Accepted sockets inherit TCP_NODELAY."""
    server = McpHttpServer(
        McpSettings(listen="127.0.0.1:0"), _door(harness), TlsSettings(), mode="sidecar"
    )
    await server.start()
    try:
        assert server.address.startswith("http://127.0.0.1:") and server.address.endswith("/mcp")
        port = int(server.address.rsplit(":", 1)[1].split("/", 1)[0])
        with socket.create_connection(("127.0.0.1", port)):
            pass
        listening = server._server.servers[0].sockets[0]
        assert listening.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        await server.stop()


def _tools_call(version: str) -> tuple[dict[str, Any], dict[str, str]]:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    meta = envelope if version >= "2026" else {}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": "tea"}, "_meta": meta},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": version,
        "mcp-method": "tools/call",
        "mcp-name": "recall",
    }
    return body, headers


async def test_tool_results_fit_each_protocol_era(harness: Harness) -> None:  # noqa: F811
    """A tool's result leaves run_tool as its wire dict: every protocol version gets its
    own shape (resultType only from 2026-07-28), structured content and its text."""
    server = McpHttpServer(
        McpSettings(listen="127.0.0.1:0"), _door(harness), TlsSettings(), mode="sidecar"
    )
    await server.start()
    try:
        async with httpx2.AsyncClient() as http:
            for version in ("2025-06-18", "2025-11-25", "2026-07-28"):
                body, headers = _tools_call(version)
                response = await http.post(server.address, json=body, headers=headers)
                assert response.status_code == 200, (version, response.text)
                result = response.json()["result"]
                assert result["structuredContent"] == {"memories": []}, version
                assert json.loads(result["content"][0]["text"]) == {"memories": []}
                assert result["isError"] is False
                assert ("resultType" in result) is (version >= "2026"), version
                body["params"]["arguments"] = {"query": 7}
                response = await http.post(server.address, json=body, headers=headers)
                error = response.json()["result"]
                assert error["isError"] is True and "structuredContent" not in error
                assert "INVALID_ARGUMENT" in error["content"][0]["text"]
            # Only the endpoint's path is served.
            other = server.address.replace("/mcp", "/other")
            response = await http.post(other, json=body, headers=headers)
            assert response.status_code == 404 and response.json()["error"] == "NOT_FOUND"
    finally:
        await server.stop()
