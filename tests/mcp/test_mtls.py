"""MCP against a live mtls daemon, over both transports: the SDK's client over HTTPS
with a client certificate, and the stdio bridge with ``--tls-ca/--tls-cert/--tls-key``
(gRPC to the daemon). A certificate is the principal its CN or SAN maps to, over either
transport; an unmapped one is refused (401 over HTTP, an UNAUTHENTICATED tool error
through the bridge), and none fails the TLS handshake."""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO, Daemon
from tests.mcp.support import error_of, mcp_url
from tests.security.support import CertFactory, write_config, write_pem

SUBJECTS = [
    {"subject": "client-a", "name": "a", "tenant_id": "tenant-a", "clearance": "restricted"},
    {
        "subject": "spiffe://test/client-b",
        "name": "b",
        "tenant_id": "tenant-b",
        "clearance": "restricted",
    },
]


@dataclass
class MtlsDaemon:
    daemon: Daemon
    url: str
    ca_file: Path
    #: name -> (certificate file, key file)
    clients: dict[str, tuple[Path, Path]]

    def context(self, name: str | None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file)
        if name is not None:
            context.load_cert_chain(*self.clients[name])
        return context


@pytest.fixture(scope="module")
def mtls_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MtlsDaemon]:
    root = tmp_path_factory.mktemp("mcp-mtls")
    ca = CertFactory()
    cert, key = write_pem(root, "server", ca.issue("localhost", ips=["127.0.0.1"]))
    ca_file = root / "ca.crt"
    ca_file.write_bytes(ca.ca_pem)
    clients = {
        "a": write_pem(root, "a", ca.issue("client-a")),
        "b": write_pem(root, "b", ca.issue("unmapped-cn-b", uris=["spiffe://test/client-b"])),
        "stranger": write_pem(root, "stranger", ca.issue("stranger")),
    }
    tls = {"cert_file": str(cert), "key_file": str(key), "client_ca_file": str(ca_file)}
    config = {
        "embedder": "hashing",
        "auth": {"mode": "mtls", "tls": tls, "mtls": {"subjects": SUBJECTS}},
        "mcp": {"listen": "127.0.0.1:0", "default_agent": "a1"},
    }
    daemon = Daemon(data_dir=root / "data", config_file=write_config(root / "m.yaml", config))
    daemon.start()
    try:
        yield MtlsDaemon(daemon, mcp_url(daemon), ca_file, clients)
    finally:
        daemon.kill()


@asynccontextmanager
async def https_client(d: MtlsDaemon, name: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(verify=d.context(name), timeout=60) as http,
        Client(streamable_http_client(d.url, http_client=http)) as client,
    ):
        yield client


@asynccontextmanager
async def bridge(d: MtlsDaemon, name: str) -> AsyncIterator[Client]:
    cert, key = d.clients[name]
    tls = ["--tls-ca", str(d.ca_file), "--tls-cert", str(cert), "--tls-key", str(key)]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryd", "mcp", "--address", d.daemon.address, "--agent", "a1", *tls],
        env={k: v for k, v in os.environ.items() if k != "MEMORYD_API_KEY"},
        cwd=str(REPO),
    )
    async with Client(params) as client:
        yield client


async def _contents(client: Client, query: str) -> list[str]:
    found = await client.call_tool("recall", {"query": query})
    assert found.structured_content is not None, found.content
    return [m["content"] for m in found.structured_content["memories"]]


async def test_https_with_client_certificates(mtls_daemon: MtlsDaemon) -> None:
    async with https_client(mtls_daemon, "a") as a:
        stored = await a.call_tool("remember", {"content": "tenant a over https"})
        assert not stored.is_error, stored.content
        assert await _contents(a, "tenant a over https") == ["tenant a over https"]
    async with https_client(mtls_daemon, "b") as b:  # mapped by its URI SAN
        assert await _contents(b, "tenant a over https") == []
    async with httpx2.AsyncClient(verify=mtls_daemon.context("stranger")) as http:
        response = await http.post(
            mtls_daemon.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 401 and "not mapped" in response.text
    async with httpx2.AsyncClient(verify=mtls_daemon.context(None)) as http:
        with pytest.raises(httpx2.TransportError):
            await http.post(mtls_daemon.url, json={})


async def test_the_stdio_bridge_with_client_certificates(mtls_daemon: MtlsDaemon) -> None:
    async with bridge(mtls_daemon, "a") as a:
        stored = await a.call_tool("remember", {"content": "tenant a over the bridge"})
        assert not stored.is_error, stored.content
        # The same principal over both transports: a's tenant, a's memories.
        async with https_client(mtls_daemon, "a") as over_http:
            assert "tenant a over the bridge" in await _contents(
                over_http, "tenant a over the bridge"
            )
    async with bridge(mtls_daemon, "b") as b:
        assert await _contents(b, "tenant a over the bridge") == []
    async with bridge(mtls_daemon, "stranger") as stranger:
        refused = await stranger.call_tool("recall", {"query": "tenant a"})
        detail = error_of(refused)
        assert detail["error"] == "UNAUTHENTICATED" and "not mapped" in detail["message"]
