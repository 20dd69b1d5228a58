"""Client certificates on the MCP endpoint (auth.mode mtls), authenticated as gRPC's are.

uvicorn puts nothing of the TLS session in the ASGI scope (0.54 fills no ``tls``
extension), so :class:`PeerCertificateProtocol`, its httptools protocol with one
addition, reads the verified peer certificate once per connection from the TLS
transport and adds it to each request's scope in the shape grpc's auth context gives a
client certificate (:func:`auth_context`). The daemon's MtlsAuthenticator maps that to
a principal with the same code and the same ``auth.mtls.subjects`` as a gRPC call's.
The handshake itself refuses a client without a certificate signed by
``auth.tls.client_ca_file``, as gRPC's does.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memoryd.mcp.server import CLIENT_CERTIFICATE, AuthContext

#: subjectAltName entry types (as the ssl module names them) -> grpc's peer property.
SAN_PROPERTIES = {
    "DNS": "peer_dns",
    "URI": "peer_uri",
    "email": "peer_email",
    "IP Address": "peer_ip",
}


def _san(kind: str, value: str) -> str:
    # grpc writes an IP address as inet_ntop does; the ssl module, IPv6 in full, upper case.
    return str(ipaddress.ip_address(value.strip())) if kind == "IP Address" else value


def auth_context(peer: ssl.SSLObject | ssl.SSLSocket) -> AuthContext:
    """The properties grpc's auth context has for the verified client certificate of
    ``peer`` (empty without one): ``x509_common_name``, each DNS, URI, email and IP
    subject alternative name in ``x509_subject_alternative_name`` and in its own
    ``peer_dns`` / ``peer_uri`` / ``peer_email`` / ``peer_ip``, and ``x509_pem_cert``."""
    der = peer.getpeercert(binary_form=True)
    fields = peer.getpeercert()  # empty unless the certificate was verified
    if not der or not fields:
        return {}
    out: dict[str, list[bytes]] = {"x509_pem_cert": [ssl.DER_cert_to_PEM_cert(der).encode()]}
    subject = cast(tuple[tuple[tuple[str, str], ...], ...], fields.get("subject", ()))
    names = [value for rdn in subject for key, value in rdn if key == "commonName"]
    if names:
        out["x509_common_name"] = [names[0].encode()]
    for kind, value in cast(tuple[tuple[str, str], ...], fields.get("subjectAltName", ())):
        prop = SAN_PROPERTIES.get(kind)
        if prop is not None:
            text = _san(kind, value).encode()
            out.setdefault("x509_subject_alternative_name", []).append(text)
            out.setdefault(prop, []).append(text)
    return out


class PeerCertificateProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with the connection's client certificate in each
    request's ``scope["extensions"]`` (:data:`~memoryd.mcp.server.CLIENT_CERTIFICATE`)."""

    _peer: AuthContext = {}

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        self._peer = auth_context(ssl_object) if ssl_object is not None else {}

    def on_message_begin(self) -> None:
        super().on_message_begin()
        extensions: dict[str, Any] = {CLIENT_CERTIFICATE: self._peer}
        self.scope["extensions"] = extensions
