"""The daemon's MCP endpoint, in process: Nagle off on its connections, mtls refused."""

from __future__ import annotations

import socket

import pytest

from memoryd.config import McpSettings, SidecarSettings
from memoryd.mcp.http import McpHttpServer, McpListenError
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


def test_mtls_mode_refuses_the_http_endpoint(harness: Harness) -> None:  # noqa: F811
    with pytest.raises(McpListenError, match="memoryd mcp"):
        McpHttpServer(McpSettings(listen="127.0.0.1:0"), _door(harness), TlsSettings(), mode="mtls")
