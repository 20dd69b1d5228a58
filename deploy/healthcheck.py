#!/usr/bin/env python3
"""memoryd-healthcheck: one grpc.health.v1 Check against a memoryd daemon; exit 0 if SERVING.

Installed in the image as ``/opt/memoryd/bin/memoryd-healthcheck`` and used by the
Dockerfile's HEALTHCHECK and by Kubernetes ``exec`` probes where the kubelet's own
``grpc`` probe cannot reach the daemon (a Unix socket, or TLS, which the kubelet's
probe does not speak). It imports only grpcio and grpcio-health-checking, so a probe
costs about a tenth of a CPU second instead of the ~0.3 s of ``memoryctl health``.

Address: ``--address``, else ``$MEMORYD_HEALTH_ADDRESS``, else ``$MEMORYD_LISTEN`` with a
wildcard host (0.0.0.0, ::) replaced by loopback, else 127.0.0.1:50051.
Exit codes: 0 SERVING, 1 anything else (unreachable, NOT_SERVING, timeout), 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}


def default_address() -> str:
    explicit = os.environ.get("MEMORYD_HEALTH_ADDRESS", "").strip()
    if explicit:
        return explicit
    listen = os.environ.get("MEMORYD_LISTEN", "").strip()
    if not listen:
        return DEFAULT_ADDRESS
    if listen.startswith("unix:"):
        return listen
    host, sep, port = listen.rpartition(":")
    if not sep:
        return DEFAULT_ADDRESS
    return f"{_WILDCARDS.get(host, host)}:{port}"


def channel_for(args: argparse.Namespace) -> grpc.Channel:
    if args.tls_ca is None:
        return grpc.insecure_channel(args.address)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=Path(args.tls_ca).read_bytes(),
        private_key=Path(args.tls_key).read_bytes() if args.tls_key else None,
        certificate_chain=Path(args.tls_cert).read_bytes() if args.tls_cert else None,
    )
    options = [("grpc.ssl_target_name_override", args.server_name)] if args.server_name else []
    return grpc.secure_channel(args.address, credentials, options=options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memoryd-healthcheck", description=__doc__.split("\n")[0])
    parser.add_argument("--address", default=None, help="host:port or unix:/path")
    parser.add_argument("--service", default="", help="a service name; default: the daemon")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds (default 3)")
    parser.add_argument("--tls-ca", default=None, help="CA bundle: connect with TLS")
    parser.add_argument("--tls-cert", default=None, help="client certificate (mTLS)")
    parser.add_argument("--tls-key", default=None, help="client private key (mTLS)")
    parser.add_argument("--server-name", default=None, help="TLS name to verify the server as")
    args = parser.parse_args(argv)
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_cert is not None and args.tls_ca is None:
        parser.error("--tls-cert needs --tls-ca")
    args.address = args.address or default_address()

    try:
        with channel_for(args) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            response = stub.Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        print(f"{args.address}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    except OSError as exc:  # an unreadable certificate file
        print(f"memoryd-healthcheck: {exc}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    print(f"{args.address}: {status}")
    return 0 if response.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
