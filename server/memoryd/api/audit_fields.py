"""What a call touched, for the audit log: ids and keys, never content.

Read generically from field names so RPCs added later are covered: memory ids
(``id``, ``ids``, ``memory.id``, ``selector.ids``, ``forgotten_ids``,
``results[].memory.id``, ``entry.memory_id``), and one "key" naming the slot a call
addressed (a keyed-memory key, a session id, a working-memory scope).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

_ID_LISTS = ("ids", "forgotten_ids")
_NESTED = ("memory", "selector", "entry")
_MAX = 1000


def _has(message: Message, name: str) -> bool:
    return name in message.DESCRIPTOR.fields_by_name


@dataclass(frozen=True, slots=True)
class _Plan:
    """Which id-bearing fields one message type has (looked up once per type: a
    RememberBatch response walks a thousand results)."""

    id: bool
    memory_id: bool
    id_lists: tuple[str, ...]
    nested: tuple[str, ...]
    results: bool


@cache
def _plan(descriptor: Descriptor) -> _Plan:
    fields = descriptor.fields_by_name
    id_field = fields.get("id")
    return _Plan(
        id=id_field is not None and id_field.type == FieldDescriptor.TYPE_STRING,
        memory_id="memory_id" in fields,
        id_lists=tuple(n for n in _ID_LISTS if n in fields),
        nested=tuple(n for n in _NESTED if n in fields),
        results="results" in fields,
    )


def _ids(message: Message, out: list[str], depth: int = 0) -> None:
    if len(out) >= _MAX or depth > 2:
        return
    plan = _plan(message.DESCRIPTOR)
    if plan.id and message.id:  # type: ignore[attr-defined]
        out.append(message.id)  # type: ignore[attr-defined]
    if plan.memory_id and message.memory_id:  # type: ignore[attr-defined]
        out.append(message.memory_id)  # type: ignore[attr-defined]
    for name in plan.id_lists:
        out.extend(str(i) for i in getattr(message, name)[: _MAX - len(out)])
    for name in plan.nested:
        if message.HasField(name):
            _ids(getattr(message, name), out, depth + 1)
    if plan.results:
        for result in message.results:  # type: ignore[attr-defined]
            if len(out) >= _MAX:
                return
            if isinstance(result, Message):
                _ids(result, out, depth + 1)


def _key(message: Message) -> str:
    if _has(message, "key") and message.key:  # type: ignore[attr-defined]
        return str(message.key)[:1024]  # type: ignore[attr-defined]
    if _has(message, "entry") and message.HasField("entry"):
        return _key(message.entry)  # type: ignore[attr-defined]
    if _has(message, "session_id") and message.session_id:  # type: ignore[attr-defined]
        return f"session:{message.session_id}"[:1024]  # type: ignore[attr-defined]
    if _has(message, "scope") and message.HasField("scope"):
        scope = message.scope  # type: ignore[attr-defined]
        return f"scope:{scope.thread_id}/{scope.resource_id}"[:1024]
    return ""


def touched(request: Any, response: Any) -> tuple[list[str], str]:
    ids: list[str] = []
    key = ""
    for message in (request, response):
        if isinstance(message, Message):
            _ids(message, ids)
            key = key or _key(message)
    return list(dict.fromkeys(ids)), key


def _read_ids_of(message: Message, out: list[str]) -> None:
    """Ids a read returned: memory ids, keys, snapshot item ids, exported records'."""
    fields = message.DESCRIPTOR.fields_by_name
    if "results" in fields:  # RecallResponse
        out.extend(r.memory.id for r in message.results)  # type: ignore[attr-defined]
    if "memory" in fields and message.HasField("memory"):
        inner = message.memory  # type: ignore[attr-defined]
        if "memory" in inner.DESCRIPTOR.fields_by_name:  # ExportedMemory
            inner = inner.memory
        out.append(inner.id)
    if "items" in fields:  # BuildSnapshotResponse
        out.extend(i.id for i in message.items if i.id)  # type: ignore[attr-defined]
    if "lines" in fields:  # DefaultReadResponse
        out.extend(line.key for line in message.lines)  # type: ignore[attr-defined]
    if "record" in fields and message.HasField("record"):  # ExportResponse
        record = message.record  # type: ignore[attr-defined]
        kind = record.WhichOneof("record")
        if kind == "memory":
            out.append(record.memory.memory.id)
        elif kind == "key_event":
            out.append(record.key_event.entry.key)
        elif kind in ("session", "session_message", "state"):
            out.append(f"session:{getattr(record, kind).session_id}")


def read_ids(response: Any) -> list[str]:
    """What a read returned, for the read trail (ids and keys, never content)."""
    out: list[str] = []
    if isinstance(response, Message):
        _read_ids_of(response, out)
    return [i for i in out if i]
