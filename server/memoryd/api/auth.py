"""Authentication: turns a call's transport credentials into a Principal.

Today the daemon runs in sidecar mode: every caller of its listener (a Unix socket
or loopback) is the one principal configured for it. api_key and mtls modes plug in
here behind the same Authenticator protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memoryd.config import SidecarSettings
from memoryd.domain.principal import Principal, Role


class Authenticator(Protocol):
    def authenticate(self, metadata: Sequence[tuple[str, str | bytes]], peer: str) -> Principal:
        """The caller's principal, or raise Unauthenticated."""


class SidecarAuthenticator:
    def __init__(self, settings: SidecarSettings) -> None:
        self._principal = Principal(
            name="sidecar",
            tenant_id=settings.tenant_id,
            agents=frozenset(settings.agents),
            clearance=settings.clearance,
            roles=frozenset(Role),
        )

    def authenticate(self, metadata: Sequence[tuple[str, str | bytes]], peer: str) -> Principal:
        return self._principal
