"""MCP over Streamable HTTP, served by the daemon itself when ``mcp.listen`` is set.

The endpoint (``mcp.path``, ``/mcp`` by default) answers the MCP SDK's stateless
Streamable HTTP with JSON responses. Every HTTP request is authenticated as a gRPC call
is (api_key mode: ``Authorization: Bearer <key>``, the same keys and principals;
sidecar mode: the listener's principal): one without a valid credential is answered
401 before MCP sees it, and each tool call is authenticated and authorised again by the
door. TLS comes from ``auth.tls`` as for gRPC. uvicorn runs in the daemon's event loop
and leaves the daemon's signal handling alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import structlog
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from memoryd.config import McpSettings
from memoryd.domain.errors import Unauthenticated
from memoryd.mcp.server import build_server
from memoryd.mcp.tools import DoorTools
from memoryd.operations import Door
from memoryd.operations.auth import Transport
from memoryd.security.settings import TlsSettings

log = structlog.get_logger("memoryd.mcp")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class McpListenError(RuntimeError):
    pass


class _Authenticated:
    """401 for an HTTP request whose credentials the daemon's authenticator refuses."""

    def __init__(self, app: Asgi, door: Door) -> None:
        self._app = app
        self._door = door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = tuple(
                (k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]
            )
            client = scope.get("client") or ("", 0)
            try:
                self._door.authenticator.authenticate(
                    Transport(metadata=headers, peer=f"ipv4:{client[0]}:{client[1]}")
                )
            except Unauthenticated as exc:
                body = json.dumps({"error": "UNAUTHENTICATED", "message": exc.message}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="memoryd"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self._app(scope, receive, send)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the daemon handles SIGTERM / SIGINT and stops this server itself


def _split(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit():
        raise McpListenError(f"mcp.listen {listen!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


class McpHttpServer:
    """The daemon's MCP endpoint: start() binds and serves, stop() drains."""

    def __init__(self, settings: McpSettings, door: Door, tls: TlsSettings, *, mode: str) -> None:
        if mode == "mtls":
            raise McpListenError(
                "mcp.listen is not available with auth.mode mtls (client certificates cannot "
                "be mapped over HTTP yet): use `memoryd mcp` (stdio over gRPC) instead"
            )
        self._settings = settings
        self._host, self._port = _split(settings.listen)
        security = (
            TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            )
            if self._host in LOOPBACK
            else TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        mcp = build_server(DoorTools(door, settings.default_agent))
        app = mcp.streamable_http_app(
            streamable_http_path=settings.path,
            stateless_http=True,
            json_response=True,
            transport_security=security,
            host=self._host,
        )
        self._config = uvicorn.Config(
            _Authenticated(app, door),
            lifespan="on",
            log_config=None,
            access_log=False,
            ssl_certfile=str(tls.cert_file) if tls.cert_file else None,
            ssl_keyfile=str(tls.key_file) if tls.key_file else None,
            timeout_graceful_shutdown=5,
        )
        self._tls = tls.enabled
        self._server = _Server(self._config)
        self._task: asyncio.Task[None] | None = None
        self.address = ""

    async def start(self) -> None:
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: uvicorn writes a response's head and body
        # apart, and with Nagle on the body waited for the client's delayed ACK (~40 ms
        # a call, measured).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((self._host, self._port))
        except OSError as exc:
            sock.close()
            raise McpListenError(f"cannot listen on {self._settings.listen}: {exc}") from None
        sock.listen(128)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise McpListenError("the MCP server stopped while starting")
            await asyncio.sleep(0.01)
        scheme = "https" if self._tls else "http"
        host = f"[{self._host}]" if ":" in self._host else self._host
        self.address = f"{scheme}://{host}:{port}{self._settings.path}"
        log.info("mcp serving", address=self.address, transport="streamable-http")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(Exception):
            await self._task
        self._task = None
