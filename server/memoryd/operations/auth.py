"""Authentication: turns a call's transport credentials into a Principal.

The principal comes from the transport, never from the request body:

- ``sidecar``: every caller of the listener (a Unix socket or loopback) is the one
  configured principal.
- ``api_key``: ``authorization: Bearer <key>`` metadata; the key's SHA-256 digest is
  looked up in a KeyRing (constant-time, digests only) that SIGHUP can replace.
- ``mtls``: the verified client certificate's CN or a SAN, read from the gRPC auth
  context, is mapped to a principal by config.

Failures raise Unauthenticated with a fixed message that never quotes the credential.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memoryd.config import SidecarSettings
from memoryd.domain.errors import Unauthenticated
from memoryd.domain.principal import Principal, Role
from memoryd.security.keys import KeyRing, build_ring, principal_from
from memoryd.security.settings import AuthSettings, MtlsIdentity

AUTHORIZATION = "authorization"
_BEARER = "bearer "
#: Auth-context properties that name the client certificate's subject, in match order.
SUBJECT_PROPERTIES = (
    "x509_common_name",
    "x509_subject_alternative_name",
    "peer_dns",
    "peer_uri",
    "peer_email",
    "peer_ip",
)

MISSING_CREDENTIAL = (
    "missing credential: send 'authorization: Bearer <api key>' "
    "(memoryctl and the memoryd clients send $MEMORYD_API_KEY)"
)
INVALID_CREDENTIAL = (
    "invalid credential: not a known API key "
    "(memoryctl and the memoryd clients send $MEMORYD_API_KEY)"
)
NO_CLIENT_CERT = "a verified client certificate is required"
UNMAPPED_CERT = "the client certificate is not mapped to a principal"


@dataclass(frozen=True, slots=True)
class Transport:
    """What the transport tells about one call."""

    metadata: Sequence[tuple[str, str | bytes]] = ()
    peer: str = ""
    #: grpc's auth context: property name -> values (empty on an insecure channel).
    auth_context: Mapping[str, Sequence[bytes]] = field(default_factory=dict)


class Authenticator(Protocol):
    """Who a call's credentials say the caller is (one per auth mode)."""

    mode: str
    #: Whether ``authenticate`` reads ``Transport.auth_context``. Fetching it from grpc
    #: costs ~20-40 us a call, so it is left empty for authenticators that ignore it.
    uses_auth_context: bool

    def authenticate(self, transport: Transport) -> Principal:
        """The caller's principal, or raise Unauthenticated."""


class SidecarAuthenticator:
    """sidecar mode: every caller of the listener is the one configured principal."""

    mode = "sidecar"
    uses_auth_context = False

    def __init__(self, settings: SidecarSettings) -> None:
        self._principal = Principal(
            name="sidecar",
            tenant_id=settings.tenant_id,
            agents=frozenset(settings.agents),
            clearance=settings.clearance,
            roles=frozenset(Role),
        )

    def authenticate(self, transport: Transport) -> Principal:
        """The configured principal, whatever the transport carries."""
        return self._principal


class ApiKeyAuthenticator:
    """api_key mode: ``authorization: Bearer <key>`` looked up by its SHA-256 digest in the key
    ring."""

    mode = "api_key"
    uses_auth_context = False

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring

    @property
    def ring(self) -> KeyRing:
        """The key ring (reloaded from auth.keys_file when it changes)."""
        return self._ring

    def replace_ring(self, ring: KeyRing) -> None:
        """Swap in reloaded keys; one reference assignment, so calls see old or new."""
        self._ring = ring

    def authenticate(self, transport: Transport) -> Principal:
        """The principal of the call's bearer key; UNAUTHENTICATED for a missing or unknown one."""
        values = [v for k, v in transport.metadata if k.lower() == AUTHORIZATION]
        if not values:
            raise Unauthenticated(MISSING_CREDENTIAL)
        if len(values) > 1:
            raise Unauthenticated(INVALID_CREDENTIAL)
        value = values[0]
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if not text[: len(_BEARER)].lower() == _BEARER:
            raise Unauthenticated(INVALID_CREDENTIAL)
        principal = self._ring.lookup(text[len(_BEARER) :].strip())
        if principal is None:
            raise Unauthenticated(INVALID_CREDENTIAL)
        return principal


class MtlsAuthenticator:
    """mtls mode: the client certificate's CN or a SAN, mapped through auth.mtls.subjects."""

    mode = "mtls"
    uses_auth_context = True

    def __init__(self, identities: Sequence[MtlsIdentity]) -> None:
        self._by_subject: dict[str, Principal] = {}
        for identity in identities:
            if identity.subject in self._by_subject:
                raise ValueError(f"auth.mtls.subjects lists {identity.subject!r} twice")
            self._by_subject[identity.subject] = principal_from(identity)

    def authenticate(self, transport: Transport) -> Principal:
        """The principal the client certificate maps to; UNAUTHENTICATED when none does."""
        ctx = transport.auth_context
        if not ctx.get("x509_pem_cert") and not ctx.get("x509_common_name"):
            raise Unauthenticated(NO_CLIENT_CERT)
        for prop in SUBJECT_PROPERTIES:
            for raw in ctx.get(prop, ()):
                subject = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
                principal = self._by_subject.get(subject)
                if principal is not None:
                    return principal
        raise Unauthenticated(UNMAPPED_CERT)


def build_authenticator(auth: AuthSettings, sidecar: SidecarSettings) -> Authenticator:
    """The authenticator of ``auth.mode``; raises KeyFileError for a bad keys file."""
    if auth.mode == "api_key":
        return ApiKeyAuthenticator(build_ring(auth.keys, auth.keys_file))
    if auth.mode == "mtls":
        return MtlsAuthenticator(auth.mtls.subjects)
    return SidecarAuthenticator(sidecar)


def reload_keys(authenticator: Authenticator, auth: AuthSettings) -> int | None:
    """Re-read the keys file into an api_key authenticator; returns the number of keys,
    or None when there is nothing to reload. A bad file raises KeyFileError and the
    old keys stay in force."""
    if not isinstance(authenticator, ApiKeyAuthenticator):
        return None
    ring = build_ring(auth.keys, auth.keys_file)
    authenticator.replace_ring(ring)
    return len(ring)
