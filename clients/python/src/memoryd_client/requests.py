"""Request building, shared by the sync and the async client (through ``memoryd_client.ops``).

Plain functions from Python values to ``memoryd.v1`` request messages. Enum-like
arguments take friendly names (``"fact"``, ``"internal"``, ``"weighted"``), their full
proto names (``"MEMORY_TYPE_FACT"``) or the numbers. Problems the daemon would only
misread (``limit=0`` means "default" on the wire) are rejected here as
INVALID_ARGUMENT with the field named, like the daemon's own errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NotRequired, TypedDict, TypeVar

from google.protobuf import duration_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from memoryd_client.errors import invalid_argument
from memoryd_client.tool_args import parse_source
from memoryd_client.tool_table import ToolArgumentError
from memoryd_proto.v1 import common_pb2, memory_service_pb2

MEMORY_TYPES: dict[str, common_pb2.MemoryType] = {
    "preference": common_pb2.MEMORY_TYPE_PREFERENCE,
    "fact": common_pb2.MEMORY_TYPE_FACT,
    "pattern": common_pb2.MEMORY_TYPE_PATTERN,
    "skill": common_pb2.MEMORY_TYPE_SKILL,
    "episode": common_pb2.MEMORY_TYPE_EPISODE,
}
SECURITY_LEVELS: dict[str, common_pb2.SecurityLevel] = {
    "public": common_pb2.SECURITY_LEVEL_PUBLIC,
    "internal": common_pb2.SECURITY_LEVEL_INTERNAL,
    "confidential": common_pb2.SECURITY_LEVEL_CONFIDENTIAL,
    "restricted": common_pb2.SECURITY_LEVEL_RESTRICTED,
}
SCORING_PRESETS: dict[str, memory_service_pb2.ScoringPreset] = {
    "relevance": memory_service_pb2.SCORING_PRESET_RELEVANCE,
    "similarity": memory_service_pb2.SCORING_PRESET_SIMILARITY,
    "decayed": memory_service_pb2.SCORING_PRESET_DECAYED,
    "weighted": memory_service_pb2.SCORING_PRESET_WEIGHTED,
    "blended": memory_service_pb2.SCORING_PRESET_BLENDED,
    "layered": memory_service_pb2.SCORING_PRESET_LAYERED,
}

EnumArg = str | int
E = TypeVar("E", bound=int)
StrSeq = Iterable[str] | str


@dataclass(frozen=True, slots=True)
class JsonText:
    """JSON text to send as written, wherever a JSON value goes (key content,
    metadata, working memory, saved state): the daemon stores the text, so
    ``JsonText('{"price": 1.50}')`` reads back as ``{"price":1.50}`` in the
    ``*_json`` fields of results (whitespace between tokens removed), where a Python
    float would be sent as ``1.5``. Checked to be JSON before it is sent."""

    text: str


#: A JSON object as Python data or as :class:`JsonText`.
JsonObjectArg = Mapping[str, Any] | JsonText


class RememberItem(TypedDict):
    """One item of :func:`remember_batch_request`; keys mirror ``remember``'s arguments."""

    content: str
    memory_type: NotRequired[EnumArg]
    tags: NotRequired[StrSeq]
    importance: NotRequired[float | None]
    namespace: NotRequired[str]
    metadata: NotRequired[JsonObjectArg | None]
    security_level: NotRequired[EnumArg | None]
    embedding: NotRequired[Sequence[float] | None]
    session_id: NotRequired[str]
    sequence: NotRequired[int]


def _enum(value: EnumArg, names: Mapping[str, E], prefix: str, field: str) -> E:
    if isinstance(value, bool):
        raise invalid_argument(field, f"must be one of {', '.join(names)}")
    if isinstance(value, int):
        for number in names.values():
            if number == value:
                return number
        raise invalid_argument(field, f"unknown value {value}")
    key = value.strip().lower().removeprefix(prefix.lower())
    if key in names:
        return names[key]
    raise invalid_argument(field, f"must be one of {', '.join(names)}, got {value!r}")


def memory_type_value(value: EnumArg, field: str = "memory_type") -> common_pb2.MemoryType:
    """``"fact"`` / ``"MEMORY_TYPE_FACT"`` / ``2`` -> ``MEMORY_TYPE_FACT``."""
    return _enum(value, MEMORY_TYPES, "MEMORY_TYPE_", field)


def security_level_value(value: EnumArg, field: str = "security_level") -> common_pb2.SecurityLevel:
    """``"internal"`` / ``"SECURITY_LEVEL_INTERNAL"`` / ``2`` -> ``SECURITY_LEVEL_INTERNAL``."""
    return _enum(value, SECURITY_LEVELS, "SECURITY_LEVEL_", field)


ScoringArg = memory_service_pb2.Scoring | str | int


def scoring_message(scoring: ScoringArg, field: str = "scoring") -> memory_service_pb2.Scoring:
    """A ``Scoring`` message from a preset name, a preset number or a ``Scoring`` (as is)."""
    if isinstance(scoring, memory_service_pb2.Scoring):
        return scoring
    preset = _enum(scoring, SCORING_PRESETS, "SCORING_PRESET_", f"{field}.preset")
    return memory_service_pb2.Scoring(preset=preset)


def memory_type_name(value: int) -> str:
    """``MEMORY_TYPE_FACT`` -> ``"fact"`` (for display); unknown numbers as digits."""
    for name, number in MEMORY_TYPES.items():
        if number == value:
            return name
    return "unspecified" if value == 0 else str(value)


def enum_value(value: EnumArg, wrapper: EnumTypeWrapper, prefix: str, field: str) -> int:
    """Any ``memoryd.v1`` enum from a friendly name (``"user"`` for
    ``MESSAGE_ROLE_USER``), its full name or its number; UNSPECIFIED is not offered."""
    names = {
        name.removeprefix(prefix).lower(): number for name, number in wrapper.items() if number != 0
    }
    return _enum(value, names, prefix, field)


def trust_filter(kinds: Iterable[EnumArg], unattributed: bool) -> common_pb2.TrustFilter:
    """A ``TrustFilter``: the provenance kinds a read admits (``"user"``, ``"web"``...)
    and whether memories without a source pass too."""
    if isinstance(kinds, str):
        kinds = [kinds]
    message = common_pb2.TrustFilter(unattributed=unattributed)
    for i, kind in enumerate(kinds):
        message.kinds.append(
            enum_value(kind, common_pb2.ProvenanceKind, "PROVENANCE_KIND_", f"trust[{i}]")  # type: ignore[arg-type]
        )
    return message


def timestamp(value: datetime, field: str) -> timestamp_pb2.Timestamp:
    if value.tzinfo is None:
        raise invalid_argument(field, "must be timezone-aware (e.g. datetime.now(UTC))")
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value)
    return ts


#: A read's ``as_of`` (docs/as-of.md): a past time, or a position of the daemon's
#: log as a Watch cursor (a str: the state after the changes it delivered).
AsOfArg = datetime | str


def set_as_of(request: Any, as_of: AsOfArg | None) -> None:
    """Set ``request.as_of`` (a time or a Watch cursor); nothing for None."""
    if as_of is None:
        return
    if isinstance(as_of, datetime):
        request.as_of.time.CopyFrom(timestamp(as_of, "as_of"))
    elif isinstance(as_of, str) and as_of:
        request.as_of.cursor = as_of
    else:
        raise invalid_argument(
            "as_of", f"must be a datetime or a Watch cursor, not {type(as_of).__name__}"
        )


def duration(value: float | timedelta, field: str) -> duration_pb2.Duration:
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise invalid_argument(field, f"must be positive, got {seconds}")
    d = duration_pb2.Duration()
    d.FromTimedelta(timedelta(seconds=seconds))
    return d


def json_text(value: Any, field: str, *, object_only: bool = False) -> str:
    """JSON text of Python data for the ``*_json`` fields: integers keep every digit
    (``google.protobuf.Value`` would carry them as doubles); a :class:`JsonText` as
    written."""
    if isinstance(value, JsonText):
        try:
            parsed = json.loads(value.text)
        except ValueError as exc:
            raise invalid_argument(field, f"is not valid JSON: {exc}") from None
        if object_only and not isinstance(parsed, dict):
            raise invalid_argument(field, "must be a JSON object")
        return value.text
    if object_only and not isinstance(value, Mapping):
        raise invalid_argument(field, f"must be a JSON object, not {type(value).__name__}")
    try:
        return json.dumps(
            dict(value) if isinstance(value, Mapping) else value,
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError) as exc:
        raise invalid_argument(field, f"must be JSON: {exc}") from None


class SourceDict(TypedDict):
    """A source as a mapping: ``kind`` ("user", "agent", "tool", "web", "file",
    "system") and, for tool / web / file and keys under /kb/, the rest."""

    kind: EnumArg
    name: NotRequired[str]
    #: A datetime (timezone-aware) or RFC 3339 text ("2026-02-22T10:00:00Z").
    retrieved_at: NotRequired[datetime | str | None]
    #: A string (URL, path, tool query, event id, hash) or an object.
    locator: NotRequired[str | Mapping[str, Any]]


SourceArg = common_pb2.Provenance | SourceDict | Mapping[str, Any] | str


def provenance(source: SourceArg, field: str = "source") -> common_pb2.Provenance:
    """A ``Provenance`` from a mapping (``{"kind": "web", "name": ..., "retrieved_at":
    datetime or RFC 3339 text, "locator": url or an object}``), a short form as the
    tools take it (``"user"``, ``"tool:web_search"``, ``"web:https://..."``,
    ``"file:notes.md"``: tool_args.parse_source) or a ``Provenance`` message (as is)."""
    if isinstance(source, common_pb2.Provenance):
        return source
    if isinstance(source, str):
        try:
            parsed = parse_source(source, field=field)
        except ToolArgumentError as exc:
            raise invalid_argument(exc.field, exc.reason) from None
        assert parsed is not None  # a string is never None
        source = parsed
    if not isinstance(source, Mapping) or "kind" not in source:
        raise invalid_argument(
            field, "must be a Provenance or a mapping with a kind (e.g. {'kind': 'user'})"
        )
    unknown = set(source) - {"kind", "name", "retrieved_at", "locator"}
    if unknown:
        raise invalid_argument(field, f"has unknown fields {sorted(unknown)}")
    out = common_pb2.Provenance(
        kind=enum_value(  # type: ignore[arg-type]
            source["kind"], common_pb2.ProvenanceKind, "PROVENANCE_KIND_", f"{field}.kind"
        ),
        name=source.get("name", ""),
        locator=locator_wire(source.get("locator", ""), f"{field}.locator"),
    )
    retrieved = source.get("retrieved_at")
    if isinstance(retrieved, str):
        retrieved = rfc3339(retrieved, f"{field}.retrieved_at")
    if retrieved is not None:
        out.retrieved_at.CopyFrom(timestamp(retrieved, f"{field}.retrieved_at"))
    return out


def locator_wire(value: Any, field: str = "source.locator") -> str:
    """A locator as ``Provenance.locator`` carries it: a string as it is, an object
    (a mapping) as its compact JSON text (the daemon returns it as that object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        try:
            return json.dumps(
                dict(value), ensure_ascii=False, allow_nan=False, separators=(",", ":")
            )
        except (TypeError, ValueError) as exc:
            raise invalid_argument(field, f"must be JSON: {exc}") from None
    raise invalid_argument(field, f"must be a string or a JSON object (got {type(value).__name__})")


def rfc3339(text: str, field: str) -> datetime:
    """An RFC 3339 time ("Z" or an offset) as an aware datetime."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_argument(field, f"must be an RFC 3339 time, got {text!r}") from None
    if when.tzinfo is None:
        raise invalid_argument(field, "must have a time zone (Z or an offset)")
    return when


def json_value(value: Any, field: str) -> struct_pb2.Value:
    """Any JSON value (None, bool, number, str, list, dict) as a google.protobuf.Value."""
    out = struct_pb2.Value()
    try:
        json_format.ParseDict(value, out)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise invalid_argument(field, f"must be JSON: {exc}") from None
    return out


def struct(value: Mapping[str, Any], field: str) -> struct_pb2.Struct:
    """A JSON object as a google.protobuf.Struct."""
    if not isinstance(value, Mapping):
        raise invalid_argument(field, f"must be a JSON object, not {type(value).__name__}")
    return _struct(value, field)


def positive_or_unset(value: int | None, field: str) -> int:
    """0 (the daemon's default) for None, else a positive int."""
    return 0 if value is None else _positive(value, field)


def _strings(values: StrSeq) -> list[str]:
    # A bare string is one tag, not a sequence of one-letter tags.
    return [values] if isinstance(values, str) else list(values)


def _struct(metadata: Mapping[str, Any], field: str) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    try:
        struct.update(dict(metadata))
    except (TypeError, ValueError) as exc:
        raise invalid_argument(field, f"must be a JSON object: {exc}") from None
    return struct


def _positive(value: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid_argument(field, f"must be at least 1, got {value!r}")
    return value


def remember_request(
    agent_id: str,
    content: str,
    *,
    memory_type: EnumArg = "fact",
    tags: StrSeq = (),
    importance: float | None = None,
    namespace: str = "",
    metadata: JsonObjectArg | None = None,
    security_level: EnumArg | None = None,
    embedding: Sequence[float] | None = None,
    session_id: str = "",
    sequence: int = 0,
    field_prefix: str = "",
) -> memory_service_pb2.RememberRequest:
    """A ``RememberRequest``. Leaves content checks (empty, too long) to the daemon."""
    request = memory_service_pb2.RememberRequest(
        agent_id=agent_id,
        content=content,
        memory_type=memory_type_value(memory_type, f"{field_prefix}memory_type"),
        tags=_strings(tags),
        namespace=namespace,
        session_id=session_id,
        sequence=sequence,
    )
    if importance is not None:
        request.importance = float(importance)
    if metadata is not None:
        request.metadata_json = json_text(metadata, f"{field_prefix}metadata", object_only=True)
    if security_level is not None:
        request.security_level = security_level_value(
            security_level, f"{field_prefix}security_level"
        )
    if embedding is not None:
        request.embedding.extend(float(x) for x in embedding)
    return request


BatchItem = str | RememberItem | memory_service_pb2.RememberRequest


def remember_batch_request(
    agent_id: str, items: Iterable[BatchItem]
) -> memory_service_pb2.RememberBatchRequest:
    """A ``RememberBatchRequest`` from contents, :class:`RememberItem` dicts or requests."""
    batch = memory_service_pb2.RememberBatchRequest(agent_id=agent_id)
    for i, item in enumerate(items):
        if isinstance(item, memory_service_pb2.RememberRequest):
            batch.items.append(item)
        elif isinstance(item, str):
            batch.items.append(remember_request("", item))
        elif isinstance(item, Mapping):
            fields: dict[str, Any] = dict(item)
            content = fields.pop("content", "")
            try:
                batch.items.append(
                    remember_request("", content, field_prefix=f"items[{i}].", **fields)
                )
            except TypeError as exc:  # unknown key in the item dict
                raise invalid_argument(f"items[{i}]", str(exc)) from None
        else:
            raise invalid_argument(
                f"items[{i}]",
                f"must be a str, a dict or a RememberRequest, not {type(item).__name__}",
            )
    return batch


def recall_request(
    agent_id: str,
    query: str,
    *,
    limit: int = 10,
    namespace: str | None = None,
    tags: StrSeq = (),
    memory_types: Iterable[EnumArg] = (),
    scoring: ScoringArg | None = None,
    query_embedding: Sequence[float] | None = None,
) -> memory_service_pb2.RecallRequest:
    """A ``RecallRequest``; ``namespace=None`` searches every namespace."""
    request = memory_service_pb2.RecallRequest(
        agent_id=agent_id,
        query=query,
        limit=_positive(limit, "limit"),
        tags=_strings(tags),
        memory_types=[
            memory_type_value(t, f"memory_types[{i}]") for i, t in enumerate(memory_types)
        ],
    )
    if namespace is not None:
        request.namespace = namespace
    if scoring is not None:
        request.scoring.CopyFrom(scoring_message(scoring))
    if query_embedding is not None:
        request.query_embedding.extend(float(x) for x in query_embedding)
    return request


def get_request(agent_id: str, memory_id: str) -> memory_service_pb2.GetMemoryRequest:
    return memory_service_pb2.GetMemoryRequest(agent_id=agent_id, id=memory_id)


def list_request(
    agent_id: str,
    *,
    page_size: int = 50,
    page_token: str = "",
    namespace: str | None = None,
    tags: StrSeq = (),
    memory_types: Iterable[EnumArg] = (),
) -> memory_service_pb2.ListMemoriesRequest:
    """A ``ListMemoriesRequest`` (newest first)."""
    request = memory_service_pb2.ListMemoriesRequest(
        agent_id=agent_id,
        page_size=_positive(page_size, "page_size"),
        page_token=page_token,
        tags=_strings(tags),
        memory_types=[
            memory_type_value(t, f"memory_types[{i}]") for i, t in enumerate(memory_types)
        ],
    )
    if namespace is not None:
        request.namespace = namespace
    return request


def forget_request(agent_id: str, ids: StrSeq) -> memory_service_pb2.ForgetMemoriesRequest:
    return memory_service_pb2.ForgetMemoriesRequest(agent_id=agent_id, ids=_strings(ids))


__all__ = [
    "MEMORY_TYPES",
    "SCORING_PRESETS",
    "SECURITY_LEVELS",
    "AsOfArg",
    "BatchItem",
    "RememberItem",
    "ScoringArg",
    "duration",
    "enum_value",
    "forget_request",
    "get_request",
    "json_value",
    "list_request",
    "memory_type_name",
    "memory_type_value",
    "positive_or_unset",
    "recall_request",
    "remember_batch_request",
    "remember_request",
    "scoring_message",
    "security_level_value",
    "set_as_of",
    "struct",
    "timestamp",
]
