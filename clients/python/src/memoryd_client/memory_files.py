"""The file-style ``memory`` tool (view, create, str_replace, insert, delete, rename
under ``/memories``) on keyed memory.

A file is a key (``/memories/notes.md``) whose value is the file's text; a directory is
a key prefix. Every change is one last-write-wins key write (edits are conditional on
the version read, so a concurrent change is reported, not overwritten), kept in the
key's history and searchable by recall like any keyed memory. Paths follow the key
rules: they start with ``/memories``, and ``..``, empty segments and control characters
are refused, so nothing escapes the root.

The logic is written once over :class:`KeyFiles`; the MCP server in the daemon and the
gRPC-backed tools of this package each supply one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memoryd_client.tool_table import ToolArgumentError

ROOT = "/memories"
MAX_LISTED = 500


@dataclass(frozen=True, slots=True)
class KeyFile:
    """A file as read: its text and version. A key holding a JSON value other than a
    string (written by ``set_memory``) reads as that value's JSON text, ``is_json``:
    an edit of it must leave JSON, and is stored as the JSON value it spells, never
    as a string."""

    text: str
    version: int
    is_json: bool = False


@dataclass(frozen=True, slots=True)
class FileWrite:
    """What to write at a key: ``text`` (None deletes), if the key is at
    ``if_version`` (0: never written; None: no check). ``is_json``: ``text`` is JSON
    text, stored as the value it spells. ``field`` is the argument the text came
    from, which an error names."""

    text: str | None
    if_version: int | None = None
    field: str = "file_text"
    is_json: bool = False


class KeyFiles(Protocol):
    """The keyed-memory calls the tool needs."""

    async def read(self, key: str) -> KeyFile | None:
        """The file at ``key``; None when absent or deleted."""

    async def write(self, key: str, file: FileWrite) -> int:
        """Write ``file`` at ``key``; returns the new version."""

    async def keys(self, prefix: str) -> list[str]:
        """Every live key below ``prefix`` (a directory ending in "/"), sorted."""


def _path(args: Mapping[str, Any], name: str = "path") -> str:
    raw = args.get(name)
    if not isinstance(raw, str) or not raw:
        raise ToolArgumentError(name, "is required")
    path = raw.rstrip("/") or "/"
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise ToolArgumentError(name, f"must be {ROOT} or below it")
    parts = path.split("/")[1:]
    for part in parts:
        if part in ("", ".", ".."):
            raise ToolArgumentError(name, "must not contain empty, '.' or '..' segments")
        if any(ord(c) < 32 or ord(c) == 127 for c in part):
            raise ToolArgumentError(name, "must not contain control characters")
    return path


def _text(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolArgumentError(name, "is required")
    return value


def _numbered(text: str, view_range: Sequence[int] | None) -> str:
    lines = text.split("\n")
    start, end = 1, len(lines)
    if view_range is not None:
        start, end = view_range[0], view_range[1] if view_range[1] != -1 else len(lines)
        if not 1 <= start <= max(len(lines), 1) or end < start:
            raise ToolArgumentError("view_range", f"must be within 1..{len(lines)}")
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, min(end, len(lines)) + 1))


async def run_memory_command(files: KeyFiles, args: Mapping[str, Any]) -> dict[str, Any]:
    """One command of the ``memory`` tool; the structured result of the table's schema.
    Raises ToolArgumentError for bad arguments or a command that cannot apply."""
    command = args.get("command")
    if command == "rename":
        return await _rename(files, _path(args, "old_path"), _path(args, "new_path"))
    path = _path(args)
    if command == "view":
        return await _view(files, path, args.get("view_range"))
    if path == ROOT:
        raise ToolArgumentError("path", f"{command} needs a file below {ROOT}")
    if command == "create":
        version = await files.write(path, FileWrite(_text(args, "file_text")))
        return {"result": f"File created successfully at {path}", "path": path, "version": version}
    if command == "delete":
        return await _delete(files, path)
    found = await files.read(path)
    if found is None:
        raise ToolArgumentError("path", f"{path} does not exist")
    text = found.text
    if command == "str_replace":
        old = _text(args, "old_str")
        count = text.count(old) if old else 0
        if count != 1:
            raise ToolArgumentError(
                "old_str", f"must occur exactly once in {path} (found {count} times)"
            )
        new_text, field = text.replace(old, args.get("new_str") or "", 1), "new_str"
    elif command == "insert":
        line = args.get("insert_line")
        lines = text.split("\n")
        if not isinstance(line, int) or isinstance(line, bool) or not 0 <= line <= len(lines):
            raise ToolArgumentError("insert_line", f"must be between 0 and {len(lines)}")
        new_text = "\n".join([*lines[:line], _text(args, "insert_text"), *lines[line:]])
        field = "insert_text"
    else:
        raise ToolArgumentError("command", f"{command!r} is not a memory command")
    if found.is_json:
        _still_json(new_text, field, path)
    edit = FileWrite(new_text, found.version, field, found.is_json)
    new_version = await files.write(path, edit)
    return {"result": f"The file {path} has been edited", "path": path, "version": new_version}


def _still_json(text: str, field: str, path: str) -> None:
    """ToolArgumentError naming ``field`` unless an edit of a JSON value is JSON."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        json.loads(text, parse_constant=constant)
    except ValueError as exc:
        raise ToolArgumentError(
            field, f"leaves {path} invalid JSON ({exc}): the key holds a JSON value, not text"
        ) from None


async def _view(files: KeyFiles, path: str, view_range: Any) -> dict[str, Any]:
    found = None if path == ROOT else await files.read(path)
    if found is not None:
        return {
            "result": _numbered(found.text, view_range),
            "path": path,
            "version": found.version,
        }
    keys = await files.keys(path + "/")
    if not keys and path != ROOT:
        raise ToolArgumentError("path", f"{path} does not exist")
    shown = keys[:MAX_LISTED]
    listing = "\n".join(f"- {k}" for k in shown) or "(empty)"
    more = f"\n... and {len(keys) - len(shown)} more" if len(keys) > len(shown) else ""
    return {"result": f"Directory {path}:\n{listing}{more}", "path": path}


async def _delete(files: KeyFiles, path: str) -> dict[str, Any]:
    if await files.read(path) is not None:
        version = await files.write(path, FileWrite(None))
        return {"result": f"Deleted {path}", "path": path, "version": version}
    keys = await files.keys(path + "/")
    if not keys:
        raise ToolArgumentError("path", f"{path} does not exist")
    for key in keys:
        await files.write(key, FileWrite(None))
    return {"result": f"Deleted {path} ({len(keys)} files)", "path": path}


async def _rename(files: KeyFiles, old: str, new: str) -> dict[str, Any]:
    found = await files.read(old)
    if found is None:
        raise ToolArgumentError("old_path", f"{old} does not exist")
    if await files.read(new) is not None:
        raise ToolArgumentError("new_path", f"{new} already exists")
    moved = FileWrite(found.text, None, "old_path", found.is_json)
    version = await files.write(new, moved)
    await files.write(old, FileWrite(None, found.version))
    return {"result": f"Renamed {old} to {new}", "path": new, "version": version}
