"""Protobuf wire values as plain Python: enum names, timestamps, Structs and Values,
and the exact ``*_json`` text fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format, struct_pb2, timestamp_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

#: A JSON value as plain Python (dict, list, str, float, int, bool, None).
JSON = Any


def enum_name(wrapper: EnumTypeWrapper, value: int, prefix: str) -> str:
    """``MEMORY_TYPE_FACT`` -> ``"fact"``; 0 -> ``"unspecified"``; unknown -> the digits."""
    try:
        return wrapper.Name(value).removeprefix(prefix).lower()
    except ValueError:
        return str(value)


def when(ts: timestamp_pb2.Timestamp, present: bool = True) -> datetime | None:
    """A UTC datetime, or None for an unset timestamp."""
    if not present or (ts.seconds == 0 and ts.nanos == 0):
        return None
    return ts.ToDatetime(tzinfo=UTC)


def struct_dict(struct: struct_pb2.Struct) -> dict[str, JSON]:
    result: dict[str, JSON] = json_format.MessageToDict(struct)
    return result


def json_or(text: str, fallback: JSON) -> JSON:
    """The value of a ``*_json`` field (exact: integers keep every digit), or
    ``fallback`` (its Struct / Value form) when an older daemon left it empty."""
    return json.loads(text) if text else fallback


def locator_json(text: str) -> str | dict[str, Any]:
    """A ``Provenance.locator`` as JSON: an object locator's text (it starts with
    "{") as that object, any other as the string."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict):
            return value
    return text


def value_json(value: struct_pb2.Value) -> JSON:
    """A google.protobuf.Value as plain Python; an unset Value is None."""
    if value.WhichOneof("kind") is None:
        return None
    return json_format.MessageToDict(value)
