"""API keys: a ring of SHA-256 digests mapped to principals, loaded from config and a file.

Only digests are ever held. Lookup compares the caller's digest with every entry
using hmac.compare_digest and never exits early, so the time taken does not depend
on which key (if any) matched.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import TypeAdapter, ValidationError

from memoryd.domain.principal import Principal
from memoryd.security.settings import ApiKeyEntry, Grant

_ENTRIES = TypeAdapter(list[ApiKeyEntry])


class KeyFileError(ValueError):
    """The keys file is missing, unreadable or invalid; the message never quotes its content."""


def hash_key(raw_key: str) -> str:
    """The hex SHA-256 digest a config stores for ``raw_key``."""
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def principal_from(grant: Grant) -> Principal:
    return Principal(
        name=grant.name,
        tenant_id=grant.tenant_id,
        agents=frozenset(grant.agents),
        clearance=grant.clearance,
        roles=frozenset(grant.roles),
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    digest: bytes
    principal: Principal


class KeyRing:
    """An immutable set of keys; replace the whole ring to reload."""

    def __init__(self, entries: Iterable[ApiKeyEntry]) -> None:
        rows: list[_Entry] = []
        seen: set[str] = set()
        for entry in entries:
            if entry.sha256 in seen:
                raise KeyFileError(f"key {entry.name!r}: the same key digest is listed twice")
            seen.add(entry.sha256)
            rows.append(_Entry(bytes.fromhex(entry.sha256), principal_from(entry)))
        self._entries: tuple[_Entry, ...] = tuple(rows)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, raw_key: str) -> Principal | None:
        digest = hashlib.sha256(raw_key.encode("utf-8", "surrogatepass")).digest()
        found: Principal | None = None
        for entry in self._entries:
            # No early exit: every entry is compared whatever matched before.
            if hmac.compare_digest(entry.digest, digest):
                found = entry.principal
        return found


def load_key_file(path: Path) -> list[ApiKeyEntry]:
    """Entries of a YAML or JSON keys file: a list, or a mapping with a ``keys`` list."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KeyFileError(f"cannot read keys file {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) if text.strip() else []
    except yaml.YAMLError:
        raise KeyFileError(f"keys file {path} is not valid YAML or JSON") from None
    if isinstance(data, dict):
        data = data.get("keys", [])
    try:
        return _ENTRIES.validate_python(data)
    except ValidationError as exc:
        # Report where and why, never the offending value.
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
            for err in exc.errors(include_input=False)
        )
        raise KeyFileError(f"keys file {path} is invalid: {problems}") from None


def build_ring(config_keys: Sequence[ApiKeyEntry], keys_file: Path | None) -> KeyRing:
    """Config keys plus the file's keys; raises KeyFileError when the file is bad."""
    entries = list(config_keys)
    if keys_file is not None:
        entries.extend(load_key_file(keys_file))
    return KeyRing(entries)
