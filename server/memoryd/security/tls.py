"""Server TLS credentials: server-only TLS in any mode, client certificates in mtls."""

from __future__ import annotations

from pathlib import Path

import grpc

from memoryd.security.settings import TlsSettings


class TlsConfigError(ValueError):
    pass


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TlsConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def server_credentials(tls: TlsSettings, *, require_client_cert: bool) -> grpc.ServerCredentials:
    """grpc server credentials; with ``require_client_cert`` clients must present a
    certificate signed by ``client_ca_file`` (the TLS handshake fails otherwise)."""
    if tls.cert_file is None or tls.key_file is None:
        raise TlsConfigError("auth.tls.cert_file and auth.tls.key_file are required for TLS")
    pair = (_read(tls.key_file, "TLS key file"), _read(tls.cert_file, "TLS certificate file"))
    if require_client_cert:
        if tls.client_ca_file is None:
            raise TlsConfigError("auth.tls.client_ca_file is required for mtls")
        return grpc.ssl_server_credentials(
            [pair],
            root_certificates=_read(tls.client_ca_file, "client CA file"),
            require_client_auth=True,
        )
    roots = _read(tls.client_ca_file, "client CA file") if tls.client_ca_file else None
    return grpc.ssl_server_credentials([pair], root_certificates=roots, require_client_auth=False)
