"""The MCP endpoint in mtls mode, in process, over real TLS handshakes: the SDK's client
with a client certificate is the principal its subject maps to (CN or SAN, as over
gRPC); an unmapped certificate is 401, none or a foreign CA's fails the handshake; and
the authenticator sees the certificate exactly as grpc's auth context shows it."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryd.config import McpSettings
from memoryd.domain.principal import Principal
from memoryd.mcp.http import McpHttpServer
from memoryd.operations import Door, Services
from memoryd.operations.auth import SUBJECT_PROPERTIES, MtlsAuthenticator, Transport
from memoryd.security.settings import MtlsIdentity, TlsSettings
from tests.security.support import CertFactory, Pem, write_pem
from tests.unit.service.helpers import Harness, harness  # noqa: F401 (fixture)

#: What the comparison with grpc covers: every property the authenticator reads.
COMPARED = (*SUBJECT_PROPERTIES, "x509_pem_cert")
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
ACCEPT = {"accept": "application/json, text/event-stream"}
IDENTITIES = [
    MtlsIdentity(subject="client-a", name="a", tenant_id="tenant-a", clearance="restricted"),
    MtlsIdentity(
        subject="spiffe://test/client-b", name="b", tenant_id="tenant-b", clearance="restricted"
    ),
]


@dataclass
class Pki:
    ca: CertFactory
    dir: Path
    tls: TlsSettings
    certs: dict[str, Pem] = field(default_factory=dict)

    def context(self, name: str | None, ca: CertFactory | None = None) -> ssl.SSLContext:
        """A client context trusting the server, with client certificate ``name``."""
        context = ssl.create_default_context(cadata=self.ca.ca_pem.decode())
        if name is not None:
            pem = self.certs[name] if ca is None else ca.issue(name)
            cert, key = write_pem(self.dir, f"client-{name}-{id(ca)}", pem)
            context.load_cert_chain(cert, key)
        return context


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    ca = CertFactory()
    directory = tmp_path_factory.mktemp("pki")
    cert, key = write_pem(
        directory, "server", ca.issue("localhost", dns=["localhost"], ips=["127.0.0.1"])
    )
    (directory / "ca.crt").write_bytes(ca.ca_pem)
    tls = TlsSettings(cert_file=cert, key_file=key, client_ca_file=directory / "ca.crt")
    pki = Pki(ca, directory, tls)
    pki.certs = {
        "client-a": ca.issue("client-a"),
        "b": ca.issue("unmapped-cn-b", uris=["spiffe://test/client-b"]),
        "stranger": ca.issue("stranger"),
        "many": ca.issue(
            "many-names",
            dns=["agent.example", "second.example"],
            uris=["spiffe://test/many"],
            ips=["10.1.2.3", "2001:db8::1"],
        ),
    }
    return pki


class Recording:
    """The mtls authenticator, keeping what each call's transport showed it."""

    mode = "mtls"
    uses_auth_context = True

    def __init__(self) -> None:
        self._inner = MtlsAuthenticator(IDENTITIES)
        self.seen: list[Transport] = []

    def authenticate(self, transport: Transport) -> Principal:
        self.seen.append(transport)
        return self._inner.authenticate(transport)


@asynccontextmanager
async def endpoint(h: Harness, pki: Pki, authenticator: Any) -> AsyncIterator[str]:
    door = Door(Services(memories=h.service), authenticator)
    server = McpHttpServer(McpSettings(listen="127.0.0.1:0"), door, pki.tls, mode="mtls")
    await server.start()
    try:
        yield server.address
    finally:
        await server.stop()


@asynccontextmanager
async def client(url: str, context: ssl.SSLContext) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(verify=context, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as mcp,
    ):
        yield mcp


async def test_client_certificates_are_principals(harness: Harness, pki: Pki) -> None:  # noqa: F811
    async with endpoint(harness, pki, MtlsAuthenticator(IDENTITIES)) as url:
        assert url.startswith("https://127.0.0.1:")
        async with client(url, pki.context("client-a")) as a:
            stored = await a.call_tool("remember", {"content": "tenant a secret", "agent_id": "x"})
            assert not stored.is_error, stored.content
            found = await a.call_tool("recall", {"query": "tenant a secret", "agent_id": "x"})
            assert found.structured_content is not None
            assert [m["content"] for m in found.structured_content["memories"]] == [
                "tenant a secret"
            ]
        # b is mapped by its URI SAN (its CN is unmapped): tenant-b sees nothing of a's.
        async with client(url, pki.context("b")) as b:
            found = await b.call_tool("recall", {"query": "tenant a secret", "agent_id": "x"})
            assert found.structured_content == {"memories": []}


async def test_unmapped_missing_and_foreign_certificates_are_refused(
    harness: Harness,  # noqa: F811
    pki: Pki,
) -> None:
    async with endpoint(harness, pki, MtlsAuthenticator(IDENTITIES)) as url:
        async with httpx2.AsyncClient(verify=pki.context("stranger")) as http:
            response = await http.post(url, json=PING, headers=ACCEPT)
            assert response.status_code == 401 and "not mapped" in response.text
        # No certificate, or one of another CA with a mapped name: no TLS session at all.
        for context in (pki.context(None), pki.context("client-a", ca=CertFactory())):
            async with httpx2.AsyncClient(verify=context) as http:
                with pytest.raises(httpx2.TransportError):
                    await http.post(url, json=PING, headers=ACCEPT)


def _grpc_auth_context(pki: Pki, name: str) -> dict[str, list[bytes]]:
    """What grpc's auth context shows of client certificate ``name`` (a server with the
    daemon's TLS settings, require_client_auth, and one method that returns nothing)."""
    seen: dict[str, list[bytes]] = {}

    def handler(request: bytes, context: grpc.ServicerContext) -> bytes:
        seen.update({k: list(v) for k, v in context.auth_context().items()})
        return b""

    assert pki.tls.key_file and pki.tls.cert_file
    server = grpc.server(ThreadPoolExecutor(max_workers=1))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "t.T", {"M": grpc.unary_unary_rpc_method_handler(handler)}
            ),
        )
    )
    credentials = grpc.ssl_server_credentials(
        [(pki.tls.key_file.read_bytes(), pki.tls.cert_file.read_bytes())],
        root_certificates=pki.ca.ca_pem,
        require_client_auth=True,
    )
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    try:
        pem = pki.certs[name]
        channel_credentials = grpc.ssl_channel_credentials(pki.ca.ca_pem, pem.key, pem.cert)
        with grpc.secure_channel(f"127.0.0.1:{port}", channel_credentials) as channel:
            channel.unary_unary("/t.T/M")(b"", timeout=30)
    finally:
        server.stop(None)
    return seen


async def test_the_authenticator_sees_the_certificate_as_over_grpc(
    harness: Harness,  # noqa: F811
    pki: Pki,
) -> None:
    recording = Recording()
    async with (
        endpoint(harness, pki, recording) as url,
        httpx2.AsyncClient(verify=pki.context("many")) as http,
    ):
        response = await http.post(url, json=PING, headers=ACCEPT)
        assert response.status_code == 401  # many-names is not mapped
    over_http = recording.seen[-1].auth_context
    over_grpc = await asyncio.to_thread(_grpc_auth_context, pki, "many")
    assert over_grpc["x509_common_name"] == [b"many-names"]  # the comparison is not vacuous
    assert {k: list(over_http.get(k, ())) for k in COMPARED} == {
        k: over_grpc.get(k, []) for k in COMPARED
    }
