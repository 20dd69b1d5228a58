"""A tool call's arguments checked against the tool table, naming the field that is
wrong (:func:`check_arguments`), and a provenance read from an object or a short
string (:func:`parse_source`: ``"user"``, ``"tool:web_search"``, ``"web:https://..."``).
Used by the MCP server and the Python client's tools alike."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from memoryd_client.tool_table import (
    JSON,
    PROVENANCE_KINDS,
    SOURCE_SCHEMA,
    TOOLS,
    ToolArgumentError,
)

# ---------------------------------------------------------------------- arguments

#: A number argument without bounds of its own stays within what a double holds
#: exactly (the table bounds each integer argument; this is the floor under them).
_EXACT = 2**53 - 1

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _type_ok(value: Any, kind: str | list[str]) -> bool:
    kinds = [kind] if isinstance(kind, str) else kind
    for k in kinds:
        if isinstance(value, bool) and k in ("integer", "number"):
            continue
        if isinstance(value, _TYPES[k]):
            return True
    return False


def _check(value: Any, schema: Mapping[str, Any], path: str) -> None:
    """The subset of JSON Schema the table uses; raises ToolArgumentError naming ``path``."""
    if "oneOf" in schema:
        typed = [o for o in schema["oneOf"] if "type" in o and _type_ok(value, o["type"])]
        if len(typed) == 1:  # the value's type picks the option: name what is wrong in it
            _check(value, typed[0], path)
            return
        problems = []
        for option in schema["oneOf"]:
            try:
                _check(value, option, path)
                return
            except ToolArgumentError as exc:
                problems.append(exc.reason)
        raise ToolArgumentError(path, "; or ".join(problems))
    kind = schema.get("type")
    if kind is not None and not _type_ok(value, kind):
        raise ToolArgumentError(path, f"must be of type {kind} (got {type(value).__name__})")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolArgumentError(path, f"must be one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise ToolArgumentError(path, "must not be empty")
        if schema.get("pattern") == "^/" and not value.startswith("/"):
            raise ToolArgumentError(path, "must start with /")
    if isinstance(value, int | float) and not isinstance(value, bool) and _numeric(kind):
        _check_number(value, schema, path)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise ToolArgumentError(path, f"must have at least {schema['minItems']} items")
        if len(value) > schema.get("maxItems", len(value)):
            raise ToolArgumentError(path, f"must have at most {schema['maxItems']} items")
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{path}[{i}]")
    if isinstance(value, dict):
        _check_object(value, schema, path)


def _numeric(kind: str | list[str] | None) -> bool:
    """Whether a schema's type is a number (a JSON value of any type is not bounded
    here: the daemon checks it as JSON)."""
    kinds = [kind] if isinstance(kind, str) else kind or []
    return "integer" in kinds or "number" in kinds


def _check_number(value: float, schema: Mapping[str, Any], path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolArgumentError(path, "must be a finite number")
    low = schema.get("minimum", -_EXACT)
    high = schema.get("maximum", _EXACT)
    if value < low:
        raise ToolArgumentError(path, f"must be at least {low}")
    if value > high:
        raise ToolArgumentError(path, f"must be at most {high}")


def _check_object(value: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> None:
    properties = schema.get("properties")
    if len(value) < schema.get("minProperties", 0):
        raise ToolArgumentError(path, "must not be empty")
    for name in schema.get("required", ()):
        if name not in value or (value[name] is None and name != "value"):
            raise ToolArgumentError(f"{path}.{name}" if path else name, "is required")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}" if path else name
        if properties is not None and name in properties:
            if item is not None or name == "value":
                _check(item, properties[name], where)
        elif extra is False:
            known = sorted(properties or ())
            raise ToolArgumentError(where, f"is not an argument of this tool (expected {known})")
        elif isinstance(extra, Mapping):
            _check(item, extra, where)


#: Each tool's input schema, with and without the context fields (read-only copies).
_INPUTS = {
    (name, context): spec.input_schema(with_context=context)
    for name, spec in TOOLS.items()
    for context in (True, False)
}


def check_arguments(name: str, arguments: Mapping[str, Any], *, with_context: bool = True) -> JSON:
    """``arguments`` checked against tool ``name``'s schema: a copy without nulls for
    optional fields (``value`` keeps its null), an alias renamed to the argument it
    stands for (ToolSpec.aliases). Raises KeyError for an unknown tool and
    ToolArgumentError naming the first bad field."""
    schema = _INPUTS[name, with_context]
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError("", "arguments must be a JSON object")
    _check_object(arguments, schema, "")
    checked = {k: v for k, v in arguments.items() if v is not None or k == "value"}
    spec = TOOLS[name]
    for alias, canonical in spec.aliases.items():
        if alias in checked and canonical in checked:
            raise ToolArgumentError(alias, f"give {canonical} or {alias}, not both")
        if alias in checked:
            checked[canonical] = checked.pop(alias)
        elif canonical in spec.required and canonical not in checked:
            raise ToolArgumentError(canonical, f"is required (or {alias})")
    return checked


# ---------------------------------------------------------------------- provenance


def parse_source(value: Any, *, field: str = "source", now: datetime | None = None) -> JSON | None:
    """A provenance as ``{kind, name, locator, retrieved_at}`` from an object or a
    short string: ``"user"``, ``"agent"``, ``"system"`` (the kind alone);
    ``"tool:<name>"`` (the tool's name, also its locator); ``"web:<url>"`` (the URL as
    locator, its host as name); ``"file:<path>"`` (the path as locator, its last part as
    name). Short forms of tool, web and file are stamped ``retrieved_at`` now. None
    stays None."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        _check(value, SOURCE_SCHEMA["oneOf"][1], field)
        return dict(value)
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentError(field, "must be a non-empty string or a provenance object")
    text = value.strip()
    kind, sep, rest = text.partition(":")
    kind = kind.lower()
    if kind not in PROVENANCE_KINDS:
        raise ToolArgumentError(field, f"kind {kind!r} is not one of {PROVENANCE_KINDS}")
    if not sep:
        return {"kind": kind, "name": kind}
    rest = rest.strip()
    if not rest:
        raise ToolArgumentError(field, f'"{kind}:" must be followed by a name')
    stamp = (now or datetime.now(UTC)).isoformat().replace("+00:00", "Z")
    if kind == "web":
        host = urlsplit(rest).hostname
        if not host:
            raise ToolArgumentError(field, f"{rest!r} is not a URL (web:https://...)")
        return {"kind": kind, "name": host, "locator": rest, "retrieved_at": stamp}
    if kind == "file":
        return {
            "kind": kind,
            "name": rest.rstrip("/").rsplit("/", 1)[-1] or rest,
            "locator": rest,
            "retrieved_at": stamp,
        }
    return {"kind": kind, "name": rest, "locator": rest, "retrieved_at": stamp}


def as_of_point(args: Mapping[str, Any]) -> datetime | str | None:
    """A checked ``as_of`` argument (``{"time": ...}`` or ``{"cursor": ...}``) as a
    time or a Watch cursor; None when there is none."""
    as_of = args.get("as_of")
    if as_of is None:
        return None
    if ("time" in as_of) == ("cursor" in as_of):
        raise ToolArgumentError("as_of", "set exactly one of time or cursor")
    if "cursor" in as_of:
        return str(as_of["cursor"])
    try:
        when = datetime.fromisoformat(str(as_of["time"]).replace("Z", "+00:00"))
    except ValueError:
        raise ToolArgumentError("as_of", "time must be an RFC 3339 time") from None
    if when.tzinfo is None:
        raise ToolArgumentError("as_of", "time must have a time zone (Z or an offset)")
    return when


def trust_keywords(args: Mapping[str, Any]) -> dict[str, Any]:
    """A checked ``trust`` argument (``{"kinds": [...], "unattributed"?}``) as the
    client's keyword arguments of recall and build_snapshot; {} when there is none."""
    trust = args.get("trust")
    if trust is None:
        return {}
    return {"trust": trust["kinds"], "trust_unattributed": trust.get("unattributed", False)}
