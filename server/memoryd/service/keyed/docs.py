"""How keyed memory is laid out in the record store, and the long-term memory that
mirrors a key. Pure functions: no I/O.

Record layout (one partition):
- ``KEY`` "<key>": the latest write, tombstones included (so versions and
  ``if_version`` stay meaningful after a delete); its document holds the content as
  the writer's JSON text (``content_json``), so numbers are never re-encoded
  (records written before hold the parsed value in ``content``: both are read);
- ``KEY_EVENT`` "<key>\\x00<version:020d>": every write, oldest first in key order;
- ``COUNTER`` "keys": the partition's last version.
The three are written in one ``put_records`` batch: one store commit.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memoryd.config import LimitsSettings
from memoryd.domain import json_text
from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.keyed import JsonValue, KeyEntry, level_of
from memoryd.domain.locator import locator_value
from memoryd.domain.models import (
    Memory,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    Vector,
)
from memoryd.domain.records import Record, RecordKind, UndecodableRecord, stored_json
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations, check_tags

COUNTER_KEY = "keys"
EVENT_SEPARATOR = "\x00"
#: uuid5 namespace of the memories mirroring keys: the id is a function of
#: (partition, key), so rewriting a key replaces its mirror.
MIRROR_NAMESPACE = uuid.UUID("5b0d6f1e-4c1a-5a8e-9f57-6b0c2d1e7a10")
CONTENT_FIELD = "content"
CONTENT_JSON_FIELD = "content_json"
#: ``importance`` above 1 and up to this is on the design's 0-10 scale (divided by 10).
IMPORTANCE_SCALE = 10.0
_MEMORY_TYPES = frozenset(t.value for t in MemoryType)


def event_key(key: str, version: int) -> str:
    return f"{key}{EVENT_SEPARATOR}{version:020d}"


def history_prefix(key: str) -> str:
    return key + EVENT_SEPARATOR


def mirror_id(tenant_id: str, agent_id: str, key: str) -> str:
    return str(uuid.uuid5(MIRROR_NAMESPACE, f"{tenant_id}\x00{agent_id}\x00{key}"))


def compact_json(value: JsonValue) -> str:
    return json_text.dumps(value)


def source_summary(source: Provenance | None) -> str:
    """A source for logs: "kind" or "kind:name" (never a locator or content)."""
    if source is None:
        return "none"
    return f"{source.kind.value}:{source.name}" if source.name else source.kind.value


# ---------------------------------------------------------------- records


def source_doc(source: Provenance | None) -> dict[str, Any] | None:
    """A source as stored in key documents (the locator as its text)."""
    if source is None:
        return None
    return {
        "kind": source.kind.value,
        "name": source.name,
        "retrieved_at": None if source.retrieved_at is None else source.retrieved_at.isoformat(),
        "locator": source.locator,
    }


def envelope_source(source: Provenance | None) -> dict[str, Any] | None:
    """A source as the file tree's envelopes show it: an object locator as that object
    (the design's ``"locator": {"conversation_id": ..., "message_id": ...}``)."""
    doc = source_doc(source)
    if doc is not None and source is not None:
        doc["locator"] = locator_value(source.locator)
    return doc


def _source_from(doc: dict[str, Any] | None) -> Provenance | None:
    if not doc:
        return None
    retrieved = doc.get("retrieved_at")
    return Provenance(
        kind=ProvenanceKind(doc["kind"]),
        name=doc.get("name", ""),
        retrieved_at=None if retrieved is None else datetime.fromisoformat(retrieved),
        locator=doc.get("locator", ""),
    )


def entry_records(entry: KeyEntry, expires_at: datetime | None) -> list[Record]:
    """The slot, the history event and the counter for one write."""
    doc = {
        "key": entry.key,
        CONTENT_JSON_FIELD: entry.content_json,
        "valid": entry.valid,
        "source": source_doc(entry.source),
        "security_level": int(entry.security_level),
        "memory_id": entry.memory_id,
        "namespace": entry.namespace,
    }
    return [
        Record(RecordKind.KEY, entry.key, doc, entry.version, entry.updated_at, expires_at),
        Record(
            RecordKind.KEY_EVENT,
            event_key(entry.key, entry.version),
            doc,
            entry.version,
            entry.updated_at,
            expires_at,
        ),
        Record(RecordKind.COUNTER, COUNTER_KEY, {}, entry.version, entry.updated_at),
    ]


def is_live(record: Record) -> bool:
    """Whether a KEY or KEY_EVENT record holds a value (False for a tombstone)."""
    return bool(record.doc.get("valid"))


def visible_slot(clearance: SecurityLevel, slot: Record | None) -> Record | None:
    """The slot as a caller of ``clearance`` sees it: one above its clearance does not
    exist to it, on writes as on reads (same answers, same quota check): the write
    becomes the key's value at the caller's level; the hidden value stays in its
    history. The content is not decoded: a value that no longer decodes can be
    overwritten."""
    if slot is not None and level_of(slot) > clearance:
        return None
    return slot


def check_if_version(if_version: int | None, current: Record | None) -> None:
    """FailedPrecondition unless ``if_version`` (if given) is the slot's version."""
    current_version = 0 if current is None else current.version
    if if_version is not None and if_version != current_version:
        # No number: a key's version is the partition's write counter, which also
        # counts writes the caller may not see.
        raise FailedPrecondition(
            f"if_version {if_version} does not match the key's current version"
            + (" (the key does not exist: use 0)" if current is None else "")
        )


def entry_from(record: Record) -> KeyEntry:
    """A KeyEntry from a KEY or KEY_EVENT record; UndecodableRecord (DATA_LOSS) when
    its content no longer decodes (see service/common/undecodable.py)."""
    doc = record.doc
    key = doc.get("key") or record.key.split(EVENT_SEPARATOR, 1)[0]
    what = f"value of key {key!r} (version {record.version})"
    text = doc.get(CONTENT_JSON_FIELD)
    if not isinstance(text, str):  # written before content_json
        try:
            text = json_text.dumps(doc.get(CONTENT_FIELD))
        except (TypeError, ValueError) as exc:
            raise UndecodableRecord(what, f"not JSON: {exc}") from None
    content = stored_json(text, what)
    return KeyEntry(
        key=key,
        content=content.value,
        content_json=content.text,
        valid=is_live(record),
        version=record.version,
        updated_at=record.updated_at,
        source=_source_from(doc.get("source")),
        security_level=level_of(record),
        memory_id=doc.get("memory_id", ""),
        namespace=doc.get("namespace", ""),
    )


def decoded_entry(record: Record) -> KeyEntry | None:
    """The entry of a KEY_EVENT record; None (reported) when it no longer decodes."""
    found = decodable([record], entry_from)
    return found[0] if found else None


# ---------------------------------------------------------------- mirror


@dataclass(frozen=True, slots=True)
class MirrorFields:
    """What a key's content contributes to its long-term memory."""

    text: str
    memory_type: MemoryType = MemoryType.FACT
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None


def _text_of(content: JsonValue) -> str:
    """The summary, else the text, else compact JSON (a string is its own text)."""
    if isinstance(content, dict):
        for name in ("summary", "text"):
            value = content.get(name)
            if isinstance(value, str) and value.strip():
                return value
    if isinstance(content, str) and content.strip():
        return content
    return compact_json(content)


def _truncate_utf8(text: str, max_bytes: int) -> str:
    """At most ``max_bytes`` of UTF-8, cut on a character boundary."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def _parse_time(value: str) -> datetime:
    when = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def scaled_importance(raw: object) -> float | None:
    """``importance`` on 0..1: values up to 1 as they are, values above 1 up to 10 on
    the design's 0-10 scale (divided by 10: 6 -> 0.6); None when out of range or not
    a number."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    value = float(raw)
    if not math.isfinite(value) or not 0.0 <= value <= IMPORTANCE_SCALE:
        return None
    return value if value <= 1.0 else value / IMPORTANCE_SCALE


def mirror_fields(content: JsonValue, limits: LimitsSettings, v: Violations) -> MirrorFields:
    """The mirror's fields from a valid content; reserved fields with a wrong type are
    reported to ``v`` as ``content.<name>``. ``type`` is used only when it names a
    memory type: content may well use "type" for something of its own."""
    # The memory content has its own (smaller) limit; the embedder truncates anyway.
    text = _truncate_utf8(_text_of(content), limits.max_content_bytes)
    if not isinstance(content, dict):
        return MirrorFields(text=text)
    memory_type = MemoryType.FACT
    kind = content.get("type")
    if isinstance(kind, str) and kind.strip().lower() in _MEMORY_TYPES:
        memory_type = MemoryType(kind.strip().lower())

    importance = 0.5
    raw_importance = content.get("importance")
    if raw_importance is not None:
        scaled = scaled_importance(raw_importance)
        if scaled is None:
            v.add(
                f"{CONTENT_FIELD}.importance",
                "must be a number between 0 and 1, or between 0 and 10 (divided by 10 "
                f"when above 1), got {raw_importance!r}",
            )
        else:
            importance = scaled

    tags: tuple[str, ...] = ()
    raw_tags = content.get("tags")
    if raw_tags is not None:
        if not isinstance(raw_tags, list) or not all(isinstance(t, str) for t in raw_tags):
            v.add(f"{CONTENT_FIELD}.tags", "must be a list of strings")
        else:
            check_tags(v, raw_tags, limits, f"{CONTENT_FIELD}.tags")
            tags = tuple(dict.fromkeys(t.strip() for t in raw_tags))

    expires_at = None
    raw_expiry = content.get("expired_at")
    if raw_expiry is not None:
        try:
            if not isinstance(raw_expiry, str):
                raise ValueError(raw_expiry)
            expires_at = _parse_time(raw_expiry)
        except ValueError:
            v.add(
                f"{CONTENT_FIELD}.expired_at",
                "must be an ISO 8601 time, e.g. 2026-02-23T10:00:00Z",
            )
    return MirrorFields(text, memory_type, importance, tags, expires_at)


def mirror_memory(
    partition: Partition,
    entry: KeyEntry,
    fields: MirrorFields,
    embedded: tuple[Vector, str],
    dimension: int,
) -> Memory:
    """The long-term memory of a valid key version: ``fields`` from its content and
    its vector with the embedding space it is in (``embedded``)."""
    vector, space = embedded
    return Memory(
        id=entry.memory_id,
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        content=fields.text,
        created_at=entry.updated_at,
        updated_at=entry.updated_at,
        namespace=entry.namespace,
        memory_type=fields.memory_type,
        tags=fields.tags,
        security_level=entry.security_level,
        importance=fields.importance,
        source=entry.source,
        # The key's version: a mirror older than its slot is detectable.
        version=entry.version,
        expires_at=fields.expires_at,
        key=entry.key,
        embedding_model=space,
        embedding_dimension=dimension,
        vector=vector,
    )
