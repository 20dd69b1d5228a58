"""Scalar conversions shared by every area: enums, timestamps, structs, vectors."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, TypeVar

import numpy as np
from google.protobuf import duration_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.message import Message

from memoryd.domain.as_of import AsOf
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd.domain.limits import MAX_DURATION_SECONDS
from memoryd.domain.locator import locator_text
from memoryd.domain.models import (
    MemoryOrder,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    TagMatch,
    TrustFilter,
    Vector,
)
from memoryd.domain.requests import RecencyBasis, ScoringPreset
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb

E = TypeVar("E")
D = TypeVar("D", bound=Enum)
T = TypeVar("T")
M = TypeVar("M", bound=Message)
#: Integral doubles up to this are exact: they come out of a Value as ints.
_EXACT_INT = 2**53


def wire_enum(wire: EnumTypeWrapper, domain: type[D], prefix: str) -> dict[int, D]:
    """Wire value -> domain member, each member paired with the wire value named
    ``prefix`` + its name (``MEMORY_TYPE_FACT`` for ``MemoryType.FACT``); a member
    without one fails at import, so the two enums cannot drift apart silently."""
    return {wire.Value(prefix + member.name): member for member in domain}


MEMORY_TYPES = wire_enum(pb.MemoryType, MemoryType, "MEMORY_TYPE_")
SECURITY_LEVELS = wire_enum(pb.SecurityLevel, SecurityLevel, "SECURITY_LEVEL_")
PROVENANCE_KINDS = wire_enum(pb.ProvenanceKind, ProvenanceKind, "PROVENANCE_KIND_")
TAG_MATCHES = wire_enum(pb.TagMatch, TagMatch, "TAG_MATCH_")
SCORING_PRESETS = wire_enum(mpb.ScoringPreset, ScoringPreset, "SCORING_PRESET_")
MEMORY_ORDERS = wire_enum(mpb.MemoryOrder, MemoryOrder, "MEMORY_ORDER_")
RECENCY_BASES = wire_enum(mpb.RecencyBasis, RecencyBasis, "RECENCY_BASIS_")
REVERSE_MEMORY_TYPES = {v: k for k, v in MEMORY_TYPES.items()}
REVERSE_PROVENANCE_KINDS = {v: k for k, v in PROVENANCE_KINDS.items()}


def enum_value(
    value: int, mapping: dict[int, E], field: str, *, default: E | None = None
) -> E | None:
    """Map a wire enum number; 0 (UNSPECIFIED) gives ``default``; unknown numbers are invalid."""
    if value == 0:
        return default
    try:
        return mapping[value]
    except KeyError:
        raise InvalidArgument.field(field, f"unknown enum value {value}") from None


def enum_list(values: Sequence[int], mapping: dict[int, E], field: str) -> tuple[E, ...]:
    """Every wire value of a repeated enum field as its domain member (INVALID_ARGUMENT naming
    ``field[i]`` for one it does not know)."""
    out: list[E] = []
    for i, value in enumerate(values):
        if value not in mapping:
            raise InvalidArgument.field(
                f"{field}[{i}]", f"unknown or unspecified enum value {value}"
            )
        out.append(mapping[value])
    return tuple(out)


def timestamp_from(msg: Message, field: str, path: str | None = None) -> datetime | None:
    """The time in ``msg.field`` (None when unset); INVALID_ARGUMENT naming ``path`` outside
    years 1..9999."""
    if not msg.HasField(field):
        return None
    ts: timestamp_pb2.Timestamp = getattr(msg, field)
    try:
        return ts.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:
        raise InvalidArgument.field(path or field, f"invalid timestamp: {exc}") from None


def as_of_from(msg: Message) -> AsOf | None:
    """The request's ``as_of`` (None when unset): its time or its Watch cursor, as
    given; the service checks them (AsOfReads), an empty one included."""
    if not msg.HasField("as_of"):
        return None
    point = msg.as_of  # type: ignore[attr-defined]
    which = point.WhichOneof("point")
    if which == "time":
        return AsOf(instant=timestamp_from(point, "time", "as_of"))
    if which == "cursor":
        return AsOf(cursor=point.cursor)
    return AsOf()


def required_timestamp(msg: Message, field: str, path: str) -> datetime:
    """The time in ``msg.field``; INVALID_ARGUMENT naming ``path.field`` when it is unset
    or outside years 1..9999 (export records always carry their times)."""
    when = timestamp_from(msg, field, f"{path}.{field}")
    if when is None:
        raise InvalidArgument.field(f"{path}.{field}", "must be set")
    return when


def duration_from(msg: Message, field: str, path: str | None = None) -> timedelta | None:
    """A Duration field within protobuf's valid range (+-315,576,000,000 s, nanos of
    the same sign as the seconds); None when unset. ``ToTimedelta`` alone accepts far
    more, or raises OverflowError."""
    if not msg.HasField(field):
        return None
    d: duration_pb2.Duration = getattr(msg, field)
    where = path or field
    if abs(d.seconds) > MAX_DURATION_SECONDS:
        raise InvalidArgument.field(
            where, f"must be within +-{MAX_DURATION_SECONDS} seconds (protobuf Duration)"
        )
    if abs(d.nanos) > 999_999_999 or (d.seconds > 0 > d.nanos) or (d.seconds < 0 < d.nanos):
        raise InvalidArgument.field(
            where, "nanos must be within +-999,999,999 and of the same sign as seconds"
        )
    return d.ToTimedelta()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def add_each(
    repeated: RepeatedCompositeFieldContainer[M], items: Iterable[T], into: Callable[[T, M], object]
) -> None:
    """Each of ``items`` written by ``into`` into a message appended to ``repeated``."""
    for item in items:
        into(item, repeated.add())


def set_timestamp(target: timestamp_pb2.Timestamp, when: datetime | None) -> None:
    """``target.FromDatetime(when)`` (naive = UTC) in a sixth of its time: a Recall
    response sets 40 of them."""
    if when is None:
        return
    delta = (when if when.tzinfo is not None else when.replace(tzinfo=UTC)) - _EPOCH
    target.seconds = delta.days * 86_400 + delta.seconds
    target.nanos = delta.microseconds * 1000


def struct_to_dict(msg: Message, field: str, path: str | None = None) -> dict[str, Any]:
    """``msg.field`` (a Struct) as a dict ({} when unset); INVALID_ARGUMENT naming ``path``
    when it cannot be read."""
    if not msg.HasField(field):
        return {}
    try:
        value: dict[str, Any] = json_format.MessageToDict(getattr(msg, field))
    except (ValueError, json_format.Error) as exc:
        raise InvalidArgument.field(path or field, f"is not valid JSON: {exc}") from None
    return value


def json_from_value(value: struct_pb2.Value, path: str) -> Any:
    """Python JSON data from a Value; a Value without a kind (anywhere) is invalid.
    Integral numbers within 2**53 become ints (a double holds them exactly)."""
    kind = value.WhichOneof("kind")
    if kind == "null_value":
        return None
    if kind == "bool_value":
        return value.bool_value
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        if not math.isfinite(number):
            raise InvalidArgument.field(path, "must be a finite number (JSON has no NaN)")
        if number.is_integer() and abs(number) <= _EXACT_INT:
            return int(number)
        return number
    if kind == "struct_value":
        return struct_data(value.struct_value, path)
    if kind == "list_value":
        return [
            json_from_value(item, f"{path}[{i}]") for i, item in enumerate(value.list_value.values)
        ]
    raise InvalidArgument.field(path, "has no value: set a JSON value (null_value for null)")


def struct_data(struct: struct_pb2.Struct, path: str) -> dict[str, Any]:
    """A Struct as a dict (see :func:`json_from_value`)."""
    return {name: json_from_value(item, f"{path}.{name}") for name, item in struct.fields.items()}


def json_to_value(data: Any, out: struct_pb2.Value) -> None:
    """``data`` (any JSON value) into the protobuf Value ``out``."""
    if data is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(data, bool):
        out.bool_value = data
    elif isinstance(data, int | float):
        out.number_value = float(data)
    elif isinstance(data, str):
        out.string_value = data
    elif isinstance(data, dict):
        out.struct_value.SetInParent()
        for name, item in data.items():
            json_to_value(item, out.struct_value.fields[name])
    elif isinstance(data, list):
        out.list_value.SetInParent()
        for item in data:
            json_to_value(item, out.list_value.values.add())
    else:
        raise TypeError(f"not JSON data: {type(data).__name__}")


def json_object(
    msg: Message, text_field: str, struct_field: str, path: str = "", *, exclusive: bool = True
) -> Json | None:
    """A JSON object field given as text (``text_field``: stored and returned as
    written) or as a Struct, checked once (domain/json_text.py); None when neither is
    set. Both set is INVALID_ARGUMENT in a request (``exclusive``); a record the
    daemon wrote (an export) carries both, and the text is read."""
    text = getattr(msg, text_field)
    has_struct = msg.HasField(struct_field)
    if text:
        if exclusive and has_struct:
            raise InvalidArgument.field(
                f"{path}{text_field}",
                f"set either {text_field} (JSON text) or {struct_field}, not both",
            )
        return Json.from_text(text, f"{path}{text_field}", object_only=True)
    if not has_struct:
        return None
    where = f"{path}{struct_field}"
    return Json.from_value(struct_data(getattr(msg, struct_field), where), where)


def dict_to_struct(target: struct_pb2.Struct, data: dict[str, Any]) -> None:
    """Write ``data`` into the Struct ``target``."""
    target.update(data)


def vector_from(values: Sequence[float]) -> Vector | None:
    """A client-supplied embedding as a float32 vector (None when empty)."""
    if len(values) == 0:
        return None
    return np.asarray(values, dtype=np.float32)


def provenance_from(
    msg: Message, field: str = "source", path: str | None = None
) -> Provenance | None:
    """The source in ``msg.field`` (None when unset); its kind must be one memoryd knows."""
    if not msg.HasField(field):
        return None
    src: pb.Provenance = getattr(msg, field)
    kind = enum_value(
        src.kind, PROVENANCE_KINDS, f"{path or field}.kind", default=ProvenanceKind.USER
    )
    assert kind is not None
    return Provenance(
        kind=kind,
        name=src.name,
        retrieved_at=timestamp_from(src, "retrieved_at", f"{path or field}.retrieved_at"),
        locator=locator_text(src.locator, f"{path or field}.locator"),
    )


def set_provenance(target: pb.Provenance, source: Provenance) -> None:
    """``source`` into a Provenance message."""
    target.kind = REVERSE_PROVENANCE_KINDS[source.kind]  # type: ignore[assignment]
    target.name = source.name
    target.locator = source.locator
    set_timestamp(target.retrieved_at, source.retrieved_at)


def trust_from(msg: Message, field: str = "trust") -> TrustFilter | None:
    """The TrustFilter in ``msg.field`` (None when unset: any provenance); a kind that
    is unknown or UNSPECIFIED is INVALID_ARGUMENT naming ``trust.kinds[i]``."""
    if not msg.HasField(field):
        return None
    trust: pb.TrustFilter = getattr(msg, field)
    kinds = enum_list(trust.kinds, PROVENANCE_KINDS, f"{field}.kinds")
    return TrustFilter(kinds, unattributed=trust.unattributed)
