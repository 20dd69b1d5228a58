"""Authenticators: api_key (hashes only, Bearer, key files) and mtls subject mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.config import SidecarSettings
from memoryd.domain.errors import Unauthenticated
from memoryd.domain.models import SecurityLevel
from memoryd.domain.principal import Role
from memoryd.operations.auth import (
    ApiKeyAuthenticator,
    MtlsAuthenticator,
    Transport,
    build_authenticator,
    reload_keys,
)
from memoryd.security.keys import KeyFileError, KeyRing, build_ring, hash_key, load_key_file
from memoryd.security.settings import ApiKeyEntry, AuthSettings, MtlsIdentity


def entry(key: str, name: str, tenant: str = "t1", **kw: object) -> ApiKeyEntry:
    return ApiKeyEntry(sha256=hash_key(key), name=name, tenant_id=tenant, **kw)  # type: ignore[arg-type]


def bearer(value: str) -> Transport:
    return Transport(metadata=(("authorization", value),))


def test_api_key_maps_to_its_principal() -> None:
    ring = KeyRing(
        [
            entry("key-one", "one", agents=["a"], clearance="confidential", roles=["read"]),
            entry("key-two", "two", tenant="t2"),
        ]
    )
    auth = ApiKeyAuthenticator(ring)
    one = auth.authenticate(bearer("Bearer key-one"))
    assert (one.name, one.tenant_id, one.agents, one.clearance, one.roles) == (
        "one",
        "t1",
        frozenset({"a"}),
        SecurityLevel.CONFIDENTIAL,
        frozenset({Role.READ}),
    )
    assert auth.authenticate(bearer("bearer key-two")).tenant_id == "t2"


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer wrong"),),
        (("authorization", "Basic key-one"),),
        (("authorization", "key-one"),),
        (("authorization", "Bearer key-one"), ("authorization", "Bearer key-one")),
        (("authorization", "Bearer "),),
    ],
)
def test_missing_or_unknown_keys_are_unauthenticated(metadata: tuple[tuple[str, str], ...]) -> None:
    auth = ApiKeyAuthenticator(KeyRing([entry("key-one", "one")]))
    with pytest.raises(Unauthenticated) as raised:
        auth.authenticate(Transport(metadata=metadata))
    assert "key-one" not in raised.value.message


def test_config_never_holds_raw_keys() -> None:
    with pytest.raises(ValueError, match="SHA-256"):
        ApiKeyEntry(sha256="plain-text-key", name="x", tenant_id="t")
    assert entry("k", "n").sha256 == hash_key("k") and len(hash_key("k")) == 64


def test_a_duplicate_digest_is_rejected() -> None:
    with pytest.raises(KeyFileError, match="twice"):
        KeyRing([entry("same", "a"), entry("same", "b")])


def test_star_agents_and_level_names() -> None:
    e = entry("k", "n", agents="*", clearance="RESTRICTED")
    assert e.agents == ["*"] and e.clearance is SecurityLevel.RESTRICTED


@pytest.mark.parametrize("form", ["yaml-list", "json-dict"])
def test_key_file_forms(tmp_path: Path, form: str) -> None:
    rows = [{"sha256": hash_key("file-key"), "name": "f", "tenant_id": "t9", "agents": ["x"]}]
    path = tmp_path / "keys"
    if form == "yaml-list":
        path.write_text(
            "".join(
                f"- sha256: {r['sha256']}\n  name: f\n  tenant_id: t9\n  agents: [x]\n"
                for r in rows
            )
        )
    else:
        path.write_text(json.dumps({"keys": rows}))
    [loaded] = load_key_file(path)
    assert loaded.tenant_id == "t9" and loaded.agents == ["x"]


def test_bad_key_file_errors_never_quote_values(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text("- sha256: super-secret-value\n  name: n\n  tenant_id: t\n")
    with pytest.raises(KeyFileError) as raised:
        load_key_file(path)
    assert "super-secret-value" not in str(raised.value)
    with pytest.raises(KeyFileError, match="cannot read"):
        load_key_file(tmp_path / "missing.yaml")
    path.write_text("{not: [valid")
    with pytest.raises(KeyFileError, match="not valid"):
        load_key_file(path)


def test_reload_swaps_keys_and_keeps_them_on_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps([{"sha256": hash_key("old"), "name": "o", "tenant_id": "t"}]))
    settings = AuthSettings(mode="api_key", keys_file=path)
    auth = build_authenticator(settings, SidecarSettings())
    assert isinstance(auth, ApiKeyAuthenticator)
    assert auth.authenticate(bearer("Bearer old")).name == "o"
    path.write_text(json.dumps([{"sha256": hash_key("new"), "name": "n", "tenant_id": "t"}]))
    assert reload_keys(auth, settings) == 1
    assert auth.authenticate(bearer("Bearer new")).name == "n"
    with pytest.raises(Unauthenticated):
        auth.authenticate(bearer("Bearer old"))
    path.write_text("[{broken")
    with pytest.raises(KeyFileError):
        reload_keys(auth, settings)
    assert auth.authenticate(bearer("Bearer new")).name == "n"


def test_config_keys_and_file_keys_combine(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps([{"sha256": hash_key("f"), "name": "f", "tenant_id": "t"}]))
    ring = build_ring([entry("c", "c")], path)
    assert len(ring) == 2 and ring.lookup("c") is not None and ring.lookup("f") is not None
    assert ring.lookup("nope") is None


def test_sidecar_ignores_credentials() -> None:
    auth = build_authenticator(AuthSettings(), SidecarSettings(tenant_id="side"))
    assert auth.authenticate(bearer("Bearer anything")).tenant_id == "side"


def mtls() -> MtlsAuthenticator:
    return MtlsAuthenticator(
        [
            MtlsIdentity(subject="client-a", name="a", tenant_id="ta"),
            MtlsIdentity(subject="spiffe://cluster/ns/b", name="b", tenant_id="tb"),
        ]
    )


def test_mtls_maps_cn_then_san() -> None:
    cn = Transport(auth_context={"x509_common_name": [b"client-a"], "x509_pem_cert": [b"pem"]})
    assert mtls().authenticate(cn).tenant_id == "ta"
    san = Transport(
        auth_context={
            "x509_common_name": [b"unmapped"],
            "x509_subject_alternative_name": [b"other", b"spiffe://cluster/ns/b"],
            "x509_pem_cert": [b"pem"],
        }
    )
    assert mtls().authenticate(san).tenant_id == "tb"


def test_mtls_without_or_with_unmapped_cert_is_unauthenticated() -> None:
    with pytest.raises(Unauthenticated, match="required"):
        mtls().authenticate(Transport())
    with pytest.raises(Unauthenticated, match="not mapped"):
        mtls().authenticate(
            Transport(auth_context={"x509_common_name": [b"x"], "x509_pem_cert": [b"pem"]})
        )


def test_auth_settings_validate_modes() -> None:
    with pytest.raises(ValueError, match="client_ca_file"):
        AuthSettings(mode="mtls")
    with pytest.raises(ValueError, match="keys"):
        AuthSettings(mode="api_key")
    with pytest.raises(ValueError, match="go together"):
        AuthSettings(tls={"cert_file": "/x"})  # type: ignore[arg-type]
