"""The /metrics HTTP endpoint: prometheus_client's threaded WSGI server over our registry.

It only answers scrapes (GET, any path serves the exposition; ``/favicon.ico`` 404s);
there is no push gateway and no outbound connection of any kind.
"""

from __future__ import annotations

import asyncio
import errno
import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server


class MetricsListenError(RuntimeError):
    """The endpoint cannot listen where configured (bad address, port in use)."""


def parse_listen(listen: str) -> tuple[str, int]:
    """``"127.0.0.1:9464"`` -> ("127.0.0.1", 9464); ``"[::1]:0"`` -> ("::1", 0);
    ``":9464"`` -> ("0.0.0.0", 9464)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise MetricsListenError(f"metrics.listen {listen!r} is not host:port")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


class MetricsServer:
    """Serve ``registry`` on ``listen`` until :meth:`close`."""

    def __init__(self, registry: CollectorRegistry, listen: str) -> None:
        self._registry = registry
        self._host, self._port = parse_listen(listen)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        """host:port actually bound (the real port when 0 was asked for)."""
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"

    def start(self, *, or_free_port: bool = False) -> bool:
        """Listen; with ``or_free_port``, a port in use is replaced by a free one.
        Returns whether that happened (the caller says so: scrapers look elsewhere)."""
        try:
            self._listen(self._port)
        except OSError as exc:
            if not (or_free_port and exc.errno == errno.EADDRINUSE):
                raise MetricsListenError(
                    f"cannot serve metrics on {self._host}:{self._port}: {exc.strerror or exc}"
                ) from None
        else:
            return False
        try:
            self._listen(0)
        except OSError as exc:
            raise MetricsListenError(
                f"cannot serve metrics on {self._host}: {exc.strerror or exc}"
            ) from None
        return True

    def _listen(self, port: int) -> None:
        self._server, self._thread = start_http_server(
            port, addr=self._host, registry=self._registry
        )

    async def close(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        # shutdown() blocks until serve_forever returns: keep the event loop free.
        await asyncio.to_thread(server.shutdown)
        server.server_close()
        if thread is not None:
            await asyncio.to_thread(thread.join)
