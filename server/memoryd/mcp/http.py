"""MCP over Streamable HTTP, served by the daemon itself when ``mcp.listen`` is set.

The endpoint (``mcp.path``, ``/mcp`` by default) answers the MCP SDK's stateless
Streamable HTTP with JSON responses, but for ``subscriptions/listen``, whose response
is a stream of server-sent events (mcp/listen.py). Every HTTP request is authenticated as a gRPC call
is (api_key mode: ``Authorization: Bearer <key>``, the same keys and principals;
sidecar mode: the listener's principal; mtls mode: the client certificate, mapped by
``auth.mtls.subjects``, see mcp/tls.py): one without a valid credential is answered 401
before MCP sees it, and each tool call is authenticated and authorised again by the
door. TLS comes from ``auth.tls`` as for gRPC (in mtls mode the handshake requires a
client certificate signed by ``auth.tls.client_ca_file``). uvicorn runs in the daemon's
event loop and leaves the daemon's signal handling alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import structlog
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from memoryd.config import McpSettings
from memoryd.domain.errors import Unauthenticated
from memoryd.mcp.listen import DoorListen
from memoryd.mcp.server import build_server, client_certificate
from memoryd.mcp.tls import PeerCertificateProtocol
from memoryd.mcp.tools import DoorTools
from memoryd.operations import Door
from memoryd.operations.auth import Transport
from memoryd.security.settings import TlsSettings

log = structlog.get_logger("memoryd.mcp")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class McpListenError(RuntimeError):
    pass


class _Endpoint:
    """The endpoint's ASGI app: the SDK's Streamable HTTP session manager at the path,
    behind the daemon's authenticator, and its lifespan. Nothing else is in between
    (the SDK's own Starlette app added a router and two middlewares to every call)."""

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        listen: StreamableHTTPSessionManager,
        door: Door,
        path: str,
    ) -> None:
        self._manager = manager
        #: Serves ``subscriptions/listen`` only: its response is a stream of server-sent
        #: events, which the JSON-response manager cannot carry (mcp/listen.py).
        self._listen = listen
        self._door = door
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] != "http":
            return
        elif scope["path"] != self._path:
            await _respond(send, 404, "NOT_FOUND", f"no MCP endpoint at {scope['path']!r}")
        elif (refused := self._refusal(scope)) is not None:
            await _respond(
                send,
                401,
                "UNAUTHENTICATED",
                refused,
                (b"www-authenticate", b'Bearer realm="memoryd"'),
            )
        elif scope.get("method") == "POST":
            body = await _body(receive)
            manager = self._listen if _is_listen(body) else self._manager
            await manager.handle_request(scope, _replayed(body, receive), send)
        else:
            await self._manager.handle_request(scope, receive, send)

    def _refusal(self, scope: Scope) -> str | None:
        """Why the daemon's authenticator refuses the request's credentials, if it does
        (every tool call is authenticated again by the door)."""
        headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
        client = scope.get("client") or ("", 0)
        try:
            self._door.authenticator.authenticate(
                Transport(
                    metadata=headers,
                    peer=f"ipv4:{client[0]}:{client[1]}",
                    auth_context=client_certificate(scope),
                )
            )
        except Unauthenticated as exc:
            return exc.message
        return None

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The session managers run (their task groups) from startup to shutdown."""
        await receive()  # lifespan.startup
        started = False
        try:
            async with self._manager.run(), self._listen.run():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except Exception as exc:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


#: Longest body parsed to route it: a listen request is small, and a longer body goes
#: to the JSON manager unparsed (which answers it as it would have).
_ROUTED_BODY = 64 * 2**10


async def _body(receive: Receive) -> bytes:
    """The request's whole body (the SDK reads it whole too), to be replayed."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _is_listen(body: bytes) -> bool:
    """Whether the body is one ``subscriptions/listen`` request."""
    if len(body) > _ROUTED_BODY or b"subscriptions/listen" not in body:
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "subscriptions/listen"


def _replayed(body: bytes, receive: Receive) -> Receive:
    """``receive`` giving ``body`` once, then the connection's own messages."""
    sent = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _respond(
    send: Send, status: int, code: str, message: str, *headers: tuple[bytes, bytes]
) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


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
        mtls = mode == "mtls"
        if mtls and (not tls.enabled or tls.client_ca_file is None):
            raise McpListenError(
                "mcp.listen with auth.mode mtls needs auth.tls.cert_file, auth.tls.key_file "
                "and auth.tls.client_ca_file"
            )
        self._settings = settings
        self._host, self._port = _split(settings.listen)
        security = (
            TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=[
                    f"{scheme}://{host}:*"
                    for scheme in ("http", "https")
                    for host in ("127.0.0.1", "localhost", "[::1]")
                ],
            )
            if self._host in LOOPBACK
            else TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        listen = DoorListen(door)
        app = build_server(
            DoorTools(door, settings.default_agent), tracing=door.tracing, on_listen=listen
        )
        manager = StreamableHTTPSessionManager(
            app=app, json_response=True, stateless=True, security_settings=security
        )
        # The same server, answering in server-sent events: listen streams only.
        streams = StreamableHTTPSessionManager(
            app=app, json_response=False, stateless=True, security_settings=security
        )
        self._config = uvicorn.Config(
            _Endpoint(manager, streams, door, settings.path),
            lifespan="on",
            log_config=None,
            access_log=False,
            ws="none",
            # The peer is the TCP peer: audit and access logs never take it from a
            # client's X-Forwarded-For.
            proxy_headers=False,
            server_header=False,
            ssl_certfile=str(tls.cert_file) if tls.cert_file else None,
            ssl_keyfile=str(tls.key_file) if tls.key_file else None,
            # mtls: the handshake requires a client certificate of the client CA (as
            # gRPC's does), and the protocol hands it to the authenticator.
            ssl_cert_reqs=ssl.CERT_REQUIRED if mtls else ssl.CERT_NONE,
            ssl_ca_certs=str(tls.client_ca_file) if mtls else None,
            http=PeerCertificateProtocol if mtls else "auto",
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
