"""Keyed memory: one slot per key path per partition, its write history, its queries.

A slot holds any JSON value; ``None`` (JSON null) is a tombstone. Every write gets a
version that is monotonic per partition, so versions order writes across keys too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memoryd.domain.as_of import AsOf
from memoryd.domain.json_text import Json, JsonValue, dumps
from memoryd.domain.models import Provenance, SecurityLevel
from memoryd.domain.records import Record

__all__ = [
    "Json",
    "JsonValue",
    "KeyEntry",
    "KeyHistoryPage",
    "KeyHistoryQuery",
    "KeyListQuery",
    "KeyListing",
    "KeyWrite",
]


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """The state of a key after one write (the latest one, or one from its history)."""

    key: str
    #: The JSON content; None for a tombstone.
    content: JsonValue
    #: False for a tombstone.
    valid: bool
    version: int
    updated_at: datetime
    source: Provenance | None = None
    security_level: SecurityLevel = SecurityLevel.INTERNAL
    #: The long-term memory mirroring the content ("" for a tombstone).
    memory_id: str = ""
    namespace: str = ""
    #: The content as stored: the writer's JSON text without whitespace between
    #: tokens ("null" for a tombstone). Left empty, it is made from ``content``.
    content_json: str = ""

    def __post_init__(self) -> None:
        if not self.content_json:
            object.__setattr__(self, "content_json", dumps(self.content))


@dataclass(frozen=True, slots=True)
class KeyWrite:
    """A SetMemory request. ``content`` JSON null writes a tombstone; its text is
    stored as written (whitespace between tokens removed)."""

    key: str
    content: Json
    #: Required (the service rejects a write without one); None only to be rejected.
    source: Provenance | None = None
    #: Expected current version (0: the key was never written); None: no check.
    if_version: int | None = None
    #: None: the server default.
    security_level: SecurityLevel | None = None
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class KeyListQuery:
    """What ListKeys lists: a directory, one level or every key below it, a page at a time."""

    #: A directory like "/user/" ("" or "/" is the root); a missing trailing "/" is implied.
    prefix: str = ""
    #: Every key below ``prefix`` instead of one level.
    recursive: bool = False
    page_size: int | None = None
    page_token: str = ""
    #: The keys as they were at a past moment (docs/as-of.md); None: now.
    as_of: AsOf | None = None


@dataclass(frozen=True, slots=True)
class KeyListing:
    """A page of keys and the directories directly below the prefix."""

    entries: list[KeyEntry]
    #: Directories directly below the prefix (one-level listings only), ending in "/".
    directories: list[str]
    next_page_token: str = ""


@dataclass(frozen=True, slots=True)
class KeyHistoryQuery:
    """Which key's (or directory's) history KeyHistory reads, a page at a time."""

    key: str
    page_size: int | None = None
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class KeyHistoryPage:
    """A page of a key's versions."""

    #: Oldest first; tombstones included.
    entries: list[KeyEntry]
    next_page_token: str = ""


def level_of(record: Record) -> SecurityLevel:
    """The security level of a KEY or KEY_EVENT record (its content left undecoded)."""
    return SecurityLevel(record.doc.get("security_level", SecurityLevel.INTERNAL))
