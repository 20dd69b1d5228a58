"""Turn what a user types as a daemon address into a gRPC channel target.

Accepted forms:

* ``host:port`` (``127.0.0.1:50051``, ``localhost:50051``, ``[::1]:50051``); a bare
  ``host`` gets the default port 50051;
* ``unix:/abs/path``, ``unix:relative/path`` and ``unix:///abs/path``;
* a bare filesystem path ending in ``.sock`` or starting with ``/``, ``./``, ``../``
  or ``~`` (``/run/memoryd.sock``, ``./memoryd.sock``);
* any other gRPC name-resolver target (``dns:``, ``ipv4:``, ``ipv6:``,
  ``unix-abstract:``), passed through unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the daemon address.
ADDRESS_ENV = "MEMORYD_ADDRESS"
#: Where ``memoryd serve`` listens by default.
DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_PORT = 50051

_PASSTHROUGH_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix-abstract:", "vsock:")
_PATH_PREFIXES = ("/", "./", "../", "~")


class TargetError(ValueError):
    """The address cannot be understood as a memoryd target."""


def default_address() -> str:
    """``$MEMORYD_ADDRESS`` when set (and not blank), else ``127.0.0.1:50051``."""
    return os.environ.get(ADDRESS_ENV, "").strip() or DEFAULT_ADDRESS


def parse_target(target: str | None = None) -> str:
    """The gRPC channel target for ``target`` (``None``: :func:`default_address`).

    >>> parse_target("localhost:50051")
    'localhost:50051'
    >>> parse_target("unix:///run/memoryd.sock")
    'unix:/run/memoryd.sock'
    >>> parse_target("/run/memoryd.sock")
    'unix:/run/memoryd.sock'
    """
    raw = default_address() if target is None else target.strip()
    if not raw:
        raise TargetError("the daemon address is empty")
    if raw.startswith("unix:"):
        return _unix(raw[len("unix:") :], raw)
    if raw.startswith(_PASSTHROUGH_SCHEMES):
        return raw
    if "://" in raw:
        raise TargetError(
            f"unsupported address {raw!r}: use host:port, unix:/path/to/socket or a .sock path"
        )
    if raw.startswith(_PATH_PREFIXES) or raw.endswith(".sock"):
        return f"unix:{Path(raw).expanduser().absolute()}"
    return _host_port(raw)


def _unix(rest: str, raw: str) -> str:
    if rest.startswith("//"):
        # unix://<authority>/path: gRPC only accepts an empty authority (unix:///abs/path).
        if not rest.startswith("///"):
            raise TargetError(
                f"invalid unix address {raw!r}: use unix:///abs/path or unix:/abs/path"
            )
        rest = rest[2:]
    if not rest:
        raise TargetError(f"invalid unix address {raw!r}: the socket path is missing")
    return f"unix:{rest}"


def _host_port(raw: str) -> str:
    if raw.startswith("["):  # [v6]:port or [v6]
        end = raw.find("]")
        if end < 0:
            raise TargetError(f"invalid address {raw!r}: unclosed '['")
        host, rest = raw[: end + 1], raw[end + 1 :]
        if not rest:
            return f"{host}:{DEFAULT_PORT}"
        if not rest.startswith(":"):
            raise TargetError(f"invalid address {raw!r}: expected [host]:port")
        port = rest[1:]
    elif raw.count(":") > 1:
        raise TargetError(f"invalid address {raw!r}: write IPv6 addresses as [host]:port")
    elif ":" in raw:
        host, port = raw.split(":", 1)
    else:
        return f"{raw}:{DEFAULT_PORT}"
    if not host:
        raise TargetError(f"invalid address {raw!r}: the host is missing")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise TargetError(f"invalid address {raw!r}: the port must be a number from 1 to 65535")
    return f"{host}:{int(port)}"
