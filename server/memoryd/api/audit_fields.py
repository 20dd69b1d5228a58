"""What a call touched, for the audit log: ids and keys, never content.

Read generically from field names so RPCs added later are covered: memory ids
(``id``, ``ids``, ``memory.id``, ``selector.ids``, ``forgotten_ids``,
``results[].memory.id``, ``entry.memory_id``), and one "key" naming the slot a call
addressed (a keyed-memory key, a session id, a working-memory scope).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

_ID_LISTS = ("ids", "forgotten_ids")
_NESTED = ("memory", "selector", "entry")
_MAX = 1000


def _has(message: Message, name: str) -> bool:
    return name in message.DESCRIPTOR.fields_by_name


def _ids(message: Message, out: list[str], depth: int = 0) -> None:
    if len(out) >= _MAX or depth > 2:
        return
    if _has(message, "id") and isinstance(message.id, str) and message.id:  # type: ignore[attr-defined]
        out.append(message.id)  # type: ignore[attr-defined]
    if _has(message, "memory_id") and message.memory_id:  # type: ignore[attr-defined]
        out.append(message.memory_id)  # type: ignore[attr-defined]
    for name in _ID_LISTS:
        if _has(message, name):
            out.extend(str(i) for i in getattr(message, name)[: _MAX - len(out)])
    for name in _NESTED:
        if _has(message, name) and message.HasField(name):
            _ids(getattr(message, name), out, depth + 1)
    if _has(message, "results"):
        for result in message.results:  # type: ignore[attr-defined]
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
