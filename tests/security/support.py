"""Helpers for the security suites: daemons with auth configs, generic RPC calls built
from the proto descriptors, certificates."""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from memoryd.security.keys import hash_key
from memoryd_proto.v1 import lifecycle_service_pb2, memory_service_pb2, snapshot_service_pb2

PROTO_MODULES = (memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2)


@dataclass(frozen=True)
class Rpc:
    service: str
    name: str
    path: str
    descriptor: MethodDescriptor
    request_class: type[Message]
    response_class: type[Message]
    client_streaming: bool
    server_streaming: bool

    @property
    def label(self) -> str:
        return f"{self.service}.{self.name}"


def all_rpcs() -> list[Rpc]:
    """Every RPC of every memoryd service, read from the descriptors."""
    out: list[Rpc] = []
    for module in PROTO_MODULES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                out.append(
                    Rpc(
                        service=service.name,
                        name=method.name,
                        path=f"/{service.full_name}/{method.name}",
                        descriptor=method,
                        request_class=message_factory.GetMessageClass(method.input_type),
                        response_class=message_factory.GetMessageClass(method.output_type),
                        client_streaming=method.client_streaming,
                        server_streaming=method.server_streaming,
                    )
                )
    return out


@dataclass
class Outcome:
    code: grpc.StatusCode
    message: str = ""
    responses: list[Message] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)
    has_bad_request: bool = False

    @property
    def ok(self) -> bool:
        return self.code == grpc.StatusCode.OK


def _status_details(error: grpc.RpcError) -> tuple[bool, list[tuple[str, str]]]:
    trailers = error.trailing_metadata() or ()  # type: ignore[attr-defined]
    for key, value in trailers:
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            violations: list[tuple[str, str]] = []
            found = False
            for detail in status.details:
                bad = error_details_pb2.BadRequest()
                if detail.Unpack(bad):
                    found = True
                    violations += [(v.field, v.description) for v in bad.field_violations]
            return found, violations
    return False, []


def invoke(
    channel: grpc.Channel,
    rpc: Rpc,
    request: Message | Sequence[Message],
    metadata: Sequence[tuple[str, str]] = (),
    timeout: float = 30.0,
) -> Outcome:
    """Call any RPC generically; never raises for a gRPC status."""
    serializer = rpc.request_class.SerializeToString
    deserializer = rpc.response_class.FromString
    kwargs: dict[str, Any] = {"metadata": tuple(metadata), "timeout": timeout}
    try:
        if rpc.client_streaming:
            requests = list(request) if isinstance(request, Sequence) else [request]
            if rpc.server_streaming:
                stub = channel.stream_stream(rpc.path, serializer, deserializer)
                responses = list(stub(iter(requests), **kwargs))
            else:
                stub = channel.stream_unary(rpc.path, serializer, deserializer)
                responses = [stub(iter(requests), **kwargs)]
        elif rpc.server_streaming:
            stub = channel.unary_stream(rpc.path, serializer, deserializer)
            responses = list(stub(_to_its_end(request), **kwargs))
        else:
            stub = channel.unary_unary(rpc.path, serializer, deserializer)
            responses = [stub(request, **kwargs)]
    except grpc.RpcError as error:
        has_bad, violations = _status_details(error)
        return Outcome(
            code=error.code(),  # type: ignore[attr-defined]
            message=error.details() or "",  # type: ignore[attr-defined]
            violations=violations,
            has_bad_request=has_bad,
        )
    return Outcome(code=grpc.StatusCode.OK, responses=responses)


def _to_its_end(request: Message | Sequence[Message]) -> Message | Sequence[Message]:
    """A generic call reads a stream to its end: a following Watch has none, so it is
    asked for a catch-up read instead (everything else of the request as generated)."""
    if isinstance(request, Message) and "follow" in request.DESCRIPTOR.fields_by_name:
        copy = type(request)()
        copy.CopyFrom(request)
        copy.follow = False  # type: ignore[attr-defined]
        return copy
    return request


def invoke_raw(
    channel: grpc.Channel, rpc: Rpc, payload: bytes, metadata: Sequence[tuple[str, str]] = ()
) -> Outcome:
    """Send raw bytes as the request (unary-request RPCs only)."""
    kwargs: dict[str, Any] = {"metadata": tuple(metadata), "timeout": 30.0}
    try:
        if rpc.server_streaming:
            stub = channel.unary_stream(rpc.path, lambda b: b, rpc.response_class.FromString)
            responses = list(stub(payload, **kwargs))
        else:
            stub = channel.unary_unary(rpc.path, lambda b: b, rpc.response_class.FromString)
            responses = [stub(payload, **kwargs)]
    except grpc.RpcError as error:
        has_bad, violations = _status_details(error)
        return Outcome(error.code(), error.details() or "", [], violations, has_bad)  # type: ignore[attr-defined]
    return Outcome(grpc.StatusCode.OK, responses=responses)


# ---------------------------------------------------------------------- config


@dataclass(frozen=True)
class KeySpec:
    """A principal of the api_key mode and its raw key (the daemon only sees the hash)."""

    raw: str
    name: str
    tenant_id: str
    agents: tuple[str, ...] | str
    clearance: str
    roles: tuple[str, ...]

    def entry(self) -> dict[str, Any]:
        return {
            "sha256": hash_key(self.raw),
            "name": self.name,
            "tenant_id": self.tenant_id,
            "agents": self.agents if isinstance(self.agents, str) else list(self.agents),
            "clearance": self.clearance,
            "roles": list(self.roles),
        }

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.raw}"),)


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def api_key_config(
    keys: Sequence[KeySpec], *, keys_file: Path | None = None, **extra: Any
) -> dict[str, Any]:
    auth: dict[str, Any] = {"mode": "api_key", "keys": [k.entry() for k in keys]}
    if keys_file is not None:
        auth["keys_file"] = str(keys_file)
    return {"embedder": "hashing", "auth": auth, **extra}


# ---------------------------------------------------------------------- certificates


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


class CertFactory:
    """A test CA that signs server and client certificates (cryptography package)."""

    def __init__(self) -> None:
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memoryd test CA")])
        self._ca_name = name
        now = dt.datetime.now(dt.UTC)
        self._ca_cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._ca_key, hashes.SHA256())
        )

    @property
    def ca_pem(self) -> bytes:
        return self._ca_cert.public_bytes(serialization.Encoding.PEM)

    def issue(
        self,
        common_name: str,
        *,
        dns: Sequence[str] = (),
        uris: Sequence[str] = (),
        ips: Sequence[str] = (),
    ) -> Pem:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        sans += [x509.UniformResourceIdentifier(u) for u in uris]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self._ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._ca_key, hashes.SHA256())
        return Pem(
            cert=cert.public_bytes(serialization.Encoding.PEM),
            key=key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )


def write_pem(directory: Path, name: str, pem: Pem) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    cert.write_bytes(pem.cert)
    key.write_bytes(pem.key)
    key.chmod(0o600)
    return cert, key


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
