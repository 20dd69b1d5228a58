"""Config sections for authentication, TLS, quotas and the audit log.

They live here rather than in config.py so the security code owns its settings;
``memoryd.config.Settings`` includes them as ``auth``, ``quotas`` and ``audit``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import re2
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    PlainSerializer,
    field_validator,
    model_validator,
)

from memoryd.domain.limits import canonical_id, id_problem
from memoryd.domain.models import SecurityLevel
from memoryd.domain.principal import Role

AuthMode = Literal["sidecar", "api_key", "mtls"]
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def parse_level(value: Any) -> Any:
    """Accept a level's name in any case ("confidential") as well as its number."""
    if isinstance(value, str) and not value.isdigit():
        name = value.strip().upper().removeprefix("SECURITY_LEVEL_")
        try:
            return SecurityLevel[name]
        except KeyError:
            raise ValueError(
                f"unknown security level {value!r}; use one of "
                + ", ".join(level.name for level in SecurityLevel)
            ) from None
    return value


#: Read as a name or a number; written (``memoryd config show``) as the lower-case name.
Clearance = Annotated[
    SecurityLevel,
    BeforeValidator(parse_level),
    PlainSerializer(lambda level: level.name.lower(), return_type=str, when_used="json"),
]


def checked_id(value: str) -> str:
    """A tenant or agent id as the daemon accepts them in requests, in its canonical
    form (see domain.limits)."""
    canonical = canonical_id(value)
    problem = id_problem(canonical)
    if problem is not None:
        raise ValueError(f"{value!r} {problem}")
    return canonical


def checked_agents(values: list[str]) -> list[str]:
    """Agent ids, or "*" for every agent."""
    return [v if v == "*" else checked_id(v) for v in values]


TenantId = Annotated[str, AfterValidator(checked_id)]
AgentList = Annotated[list[str], AfterValidator(checked_agents)]


class Grant(BaseModel):
    """What an authenticated caller may do: its tenant, agents, clearance and roles."""

    model_config = {"extra": "forbid"}

    #: Shown in logs and the audit log (never the credential itself).
    name: str = Field(min_length=1, max_length=128)
    tenant_id: TenantId
    #: A list of agent ids, or "*" (or ["*"]) for every agent of the tenant.
    agents: AgentList = Field(default_factory=lambda: ["*"])
    clearance: Clearance = SecurityLevel.INTERNAL
    roles: list[Role] = Field(default_factory=lambda: [Role.READ, Role.WRITE])

    @field_validator("agents", mode="before")
    @classmethod
    def _star_means_all(cls, value: Any) -> Any:
        return ["*"] if value == "*" else value


class ApiKeyEntry(Grant):
    """One API key, stored only as the SHA-256 hex digest of the key."""

    sha256: str

    @field_validator("sha256")
    @classmethod
    def _is_hex_digest(cls, value: str) -> str:
        value = value.strip().lower()
        if not _SHA256_HEX.match(value):
            raise ValueError("must be the 64-character hex SHA-256 digest of the key")
        return value


class MtlsIdentity(Grant):
    """A client-certificate identity: the subject's CN or one of its SANs, exactly."""

    subject: str = Field(min_length=1)


class TlsSettings(BaseModel):
    """Server TLS (any mode); ``client_ca_file`` is what mtls verifies clients against."""

    cert_file: Path | None = None
    key_file: Path | None = None
    client_ca_file: Path | None = None

    @property
    def enabled(self) -> bool:
        return self.cert_file is not None

    @model_validator(mode="after")
    def _pairs(self) -> TlsSettings:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("auth.tls.cert_file and auth.tls.key_file go together")
        return self


class MtlsSettings(BaseModel):
    #: Certificate subjects (CN or SAN) and the principals they map to.
    subjects: list[MtlsIdentity] = Field(default_factory=list)


class AuthSettings(BaseModel):
    mode: AuthMode = "sidecar"
    #: api_key mode: keys from the config (hashes only).
    keys: list[ApiKeyEntry] = Field(default_factory=list)
    #: api_key mode: more keys from a YAML/JSON file (a list of entries, or {keys: [...]}),
    #: re-read when it changes and on SIGHUP. A file that fails to load keeps the
    #: previous keys.
    keys_file: Path | None = None
    #: Seconds between checks of keys_file for a change (inode, size, mtime: a
    #: Kubernetes Secret update swaps the file); 0 checks only on SIGHUP.
    keys_file_poll_s: float = Field(10.0, ge=0)
    tls: TlsSettings = Field(default_factory=TlsSettings)
    mtls: MtlsSettings = Field(default_factory=MtlsSettings)

    @model_validator(mode="after")
    def _mode_is_configured(self) -> AuthSettings:
        if self.mode == "mtls" and (not self.tls.enabled or self.tls.client_ca_file is None):
            raise ValueError(
                "auth.mode mtls needs auth.tls.cert_file, auth.tls.key_file and "
                "auth.tls.client_ca_file"
            )
        if self.mode == "api_key" and not self.keys and self.keys_file is None:
            raise ValueError("auth.mode api_key needs auth.keys or auth.keys_file")
        return self


class TenantQuotas(BaseModel):
    """Per-tenant overrides; unset fields fall back to the global quota."""

    model_config = {"extra": "forbid"}

    max_memories_per_partition: int | None = Field(None, ge=0)
    max_keys_per_partition: int | None = Field(None, ge=0)
    max_session_messages: int | None = Field(None, ge=0)


class QuotaSettings(BaseModel):
    """Stored-data quotas (RESOURCE_EXHAUSTED when reached). 0 means unlimited."""

    max_memories_per_partition: int = Field(1_000_000, ge=0)
    max_keys_per_partition: int = Field(100_000, ge=0)
    max_session_messages: int = Field(10_000, ge=0)
    tenants: dict[str, TenantQuotas] = Field(default_factory=dict)

    def for_tenant(self, tenant_id: str) -> TenantQuotas:
        """The effective quotas of one tenant (every field set)."""
        override = self.tenants.get(tenant_id, TenantQuotas())
        return TenantQuotas(
            **{
                name: getattr(self, name)
                if getattr(override, name) is None
                else getattr(override, name)
                for name in TenantQuotas.model_fields
            }
        )


MaskingRule = Literal["email", "phone", "national_id", "card", "secret"]


#: Applied in this order: card numbers before the looser phone pattern.
BUILTIN_RULES: dict[str, tuple[str, str]] = {
    "secret": (
        r"(?i)\b(?:api[_-]?key|secret|token|password|passwd|pwd)\s*[:=]\s*\S+"
        r"|\b(?:sk|pk|rk)[-_](?:live|test|proj)[-_][A-Za-z0-9_-]{8,}"
        r"|\bsk-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{30,}"
        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}",
        "[secret]",
    ),
    "email": (r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}", "[email]"),
    "national_id": (
        r"\b\d{3}-\d{2}-\d{4}\b|\b\d{17}[\dXx]\b|\b[A-Za-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-Da-d]\b",
        "[national id]",
    ),
    "card": (r"\b\d{4}(?:[ -]?\d{4}){2}[ -]?\d{1,7}\b", "[card]"),
    "phone": (
        r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{3,4}[\s.-]?\d{3,4}(?:[\s.-]?\d{2,4})?\b",
        "[phone]",
    ),
}


class CustomMaskingRule(BaseModel):
    """A pattern of your own (RE2 syntax: linear time, no backreferences)."""

    model_config = {"extra": "forbid"}

    name: str = Field(min_length=1, max_length=64)
    pattern: str = Field(min_length=1, max_length=4096)
    replacement: str = Field("[masked]", max_length=64)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re2.compile(value)
        except re2.error as exc:
            raise ValueError(f"not an RE2 pattern: {exc}") from None
        return value


class MaskingSettings(BaseModel):
    """Personal data and secrets masked in what low-clearance callers read
    (security/masking.py); what is stored is never changed."""

    enabled: bool = False
    #: Callers cleared below this read masked output; at or above, the stored text.
    unmasked_clearance: Clearance = SecurityLevel.CONFIDENTIAL
    rules: list[MaskingRule] = Field(default_factory=lambda: list(get_args(MaskingRule)))
    custom: list[CustomMaskingRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _replacements_stay(self) -> MaskingSettings:
        """Masked text must stay as it is when masked again (the operation door masks
        a rendered snapshot whose parts were masked before its tokens were counted): no
        rule may match a replacement."""
        rules: list[tuple[str, str, str]] = [
            (name, *BUILTIN_RULES[name]) for name in BUILTIN_RULES if name in self.rules
        ]
        rules += [(c.name, c.pattern, c.replacement) for c in self.custom]
        compiled = [re2.compile(pattern) for _, pattern, _ in rules]
        for name, _, replacement in rules:
            text = replacement
            for pattern, (_, _, other) in zip(compiled, rules, strict=True):
                text = pattern.sub(other, text)
            if text != replacement:
                raise ValueError(
                    f"masking rule {name!r}: its replacement {replacement!r} is masked again "
                    f"(to {text!r}); a replacement must not match any rule"
                )
        return self


class AuditSettings(BaseModel):
    enabled: bool = True
    #: Unset: <data_dir>/audit.
    dir: Path | None = None
    #: The active file is rotated when it would grow past this.
    rotate_bytes: int = Field(64 * 1024 * 1024, ge=4096)
    #: Rotated files kept (oldest removed first); 0 keeps every file.
    keep_files: int = Field(20, ge=0)
    #: Also one line per successful read (Recall, GetMemory, BuildSnapshot, DefaultRead,
    #: Export) with the ids it returned, never content (security/read_trail.py).
    read_trail: bool = False


class SidecarSettings(BaseModel):
    """The principal every caller of a sidecar listener acts as."""

    tenant_id: TenantId = "default"
    #: Agents the sidecar may act for; ["*"] means any.
    agents: AgentList = Field(default_factory=lambda: ["*"])
    clearance: Clearance = SecurityLevel.RESTRICTED
