"""Poison values for every JSON- and number-bearing input of every operation, drawn
from the operation table and the request descriptors (test_json_poison.py runs them).

For each operation (memoryd.operations.OPERATIONS) the request message of its gRPC
method is walked: JSON text fields (``*_json``), ``google.protobuf.Value`` / ``Struct``
fields, numbers, timestamps and durations, down into nested and repeated messages.
Each such field of a valid base request gets each poison value of its kind: numbers a
double cannot hold, NaN and infinities in every spelling, 2^64, nesting past the
daemon's limit and at it, a long string. An operation added later is walked too; one
with such fields and no base request fails the coverage test until it gets one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from google.protobuf import struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from memoryd.domain.limits import MAX_JSON_DEPTH

F = FieldDescriptor
_INTS = {F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_INT64, F.TYPE_SINT64}
_INTS |= {F.TYPE_SFIXED64, F.TYPE_UINT32, F.TYPE_FIXED32, F.TYPE_UINT64, F.TYPE_FIXED64}
_FLOATS = {F.TYPE_DOUBLE, F.TYPE_FLOAT}
_RANGES = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1),
    F.TYPE_SINT32: (-(2**31), 2**31 - 1),
    F.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    F.TYPE_UINT32: (0, 2**32 - 1),
    F.TYPE_FIXED32: (0, 2**32 - 1),
    F.TYPE_UINT64: (0, 2**64 - 1),
    F.TYPE_FIXED64: (0, 2**64 - 1),
}
#: Past the 1.8e308 a double holds: as an integer (309 digits) and as exponents.
HUGE_INT = "1" + "0" * 400
#: JSON values (as text) that must be refused: none of them round-trips as a double.
REFUSED_JSON = [
    "1e309",
    "-1e309",
    "1E400",
    HUGE_INT,
    "-" + HUGE_INT,
    "NaN",
    "-NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "inf",
    "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
]
#: JSON values (as text) a daemon may store: each reads back on every transport.
KEPT_JSON = [
    str(2**64),
    str(-(2**64)),
    "123456789012345678901234567890",
    "1e-400",
    "1.7976931348623157e308",
    "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1),  # the top object is the 24th
    '"' + "x" * 6000 + '"',
]


def wrapped(text: str) -> str:
    """A poison inside an object (every JSON field takes one)."""
    return '{"v": ' + text + "}"


def nested_value(depth: int) -> struct_pb2.Value:
    """A Value of ``depth`` nested lists."""
    value = struct_pb2.Value()
    cursor = value
    for _ in range(depth):
        cursor = cursor.list_value.values.add()
    cursor.number_value = 1
    return value


def _number(x: float) -> struct_pb2.Value:
    return struct_pb2.Value(number_value=x)


#: Value poisons (the message form of a JSON value: numbers are doubles).
VALUE_POISONS: list[tuple[str, struct_pb2.Value, bool]] = [
    ("NaN", _number(math.nan), False),
    ("Infinity", _number(math.inf), False),
    ("-Infinity", _number(-math.inf), False),
    ("max double", _number(1.7976931348623157e308), True),
    ("2^64", _number(float(2**64)), True),
    ("nested past the limit", nested_value(MAX_JSON_DEPTH + 1), False),
    ("no kind", struct_pb2.Value(), False),
]


@dataclass(frozen=True)
class Poison:
    """One poisoned request: which field, what value, and whether a daemon may keep it
    (True: OK or INVALID_ARGUMENT naming ``field``; False: INVALID_ARGUMENT naming it)."""

    field: str
    label: str
    apply: Callable[[Message], None]
    may_keep: bool


# ---------------------------------------------------------------------- walking


@dataclass(frozen=True)
class Leaf:
    """A JSON- or number-bearing field: its path in the request (as violations name
    it), its owner message's path of attribute steps and its descriptor."""

    path: str
    steps: tuple[tuple[str, int | None], ...]
    field: FieldDescriptor


_WELL_KNOWN = {"google.protobuf.Value", "google.protobuf.Struct"}
_TIMES = {"google.protobuf.Timestamp", "google.protobuf.Duration"}


def leaves(base: Message, max_depth: int = 4) -> list[Leaf]:
    """Every JSON- or number-bearing field of ``base``: descends into set messages
    (into the first item of a repeated one)."""
    out: list[Leaf] = []
    _walk(base, base.DESCRIPTOR, "", (), out, max_depth)
    return out


def _walk(
    msg: Message,
    desc: Descriptor,
    path: str,
    steps: tuple[tuple[str, int | None], ...],
    out: list[Leaf],
    depth: int,
) -> None:
    for field in desc.fields:
        where = f"{path}{field.name}"
        if field.type == F.TYPE_MESSAGE:
            name = field.message_type.full_name
            if name in _WELL_KNOWN or name in _TIMES:
                out.append(Leaf(where, steps, field))
                continue
            if depth == 0 or name.startswith("google.protobuf."):
                continue
            if field.is_repeated:
                items = getattr(msg, field.name)
                if len(items):
                    step = ((field.name, 0),)
                    _walk(
                        items[0], field.message_type, f"{where}[0].", steps + step, out, depth - 1
                    )
            elif msg.HasField(field.name):
                child = getattr(msg, field.name)
                step = ((field.name, None),)
                _walk(child, field.message_type, f"{where}.", steps + step, out, depth - 1)
        elif (
            field.type in _INTS
            or field.type in _FLOATS
            or (field.type == F.TYPE_STRING and field.name.endswith("_json"))
        ):
            out.append(Leaf(where, steps, field))


def owner(request: Message, leaf: Leaf) -> Message:
    msg = request
    for name, index in leaf.steps:
        msg = getattr(msg, name)[index] if index is not None else getattr(msg, name)
    return msg


def _sibling(msg: Message, name: str) -> str | None:
    """The other form of a JSON field pair (content / content_json)."""
    other = name[: -len("_json")] if name.endswith("_json") else f"{name}_json"
    return other if other in msg.DESCRIPTOR.fields_by_name else None


def _set(leaf: Leaf, set_value: Callable[[Message, str], None]) -> Callable[[Message], None]:
    def apply(request: Message) -> None:
        msg = owner(request, leaf)
        other = _sibling(msg, leaf.field.name)
        if other is not None:
            msg.ClearField(other)
        set_value(msg, leaf.field.name)

    return apply


def poisons(leaf: Leaf) -> Iterator[Poison]:
    """Each poison of ``leaf``'s kind."""
    field = leaf.field
    if field.type == F.TYPE_STRING:
        for text in REFUSED_JSON:
            yield Poison(leaf.path, text[:24], _set(leaf, _text(wrapped(text))), False)
        for text in KEPT_JSON:
            yield Poison(leaf.path, text[:24], _set(leaf, _text(wrapped(text))), True)
        return
    if field.type == F.TYPE_MESSAGE:
        yield from _message_poisons(leaf)
        return
    if field.is_repeated:
        for value in _scalars(field):
            yield Poison(leaf.path, repr(value), _set(leaf, _append(value)), True)
        return
    for value in _scalars(field):
        yield Poison(leaf.path, repr(value), _set(leaf, _assign(value)), True)


def _text(text: str) -> Callable[[Message, str], None]:
    return lambda msg, name: setattr(msg, name, text)


def _assign(value: float) -> Callable[[Message, str], None]:
    return lambda msg, name: setattr(msg, name, value)


def _append(value: float) -> Callable[[Message, str], None]:
    def apply(msg: Message, name: str) -> None:
        items = getattr(msg, name)
        del items[:]
        items.append(value)

    return apply


def _scalars(field: FieldDescriptor) -> list[float]:
    if field.type in _FLOATS:
        return [math.nan, math.inf, -math.inf, 1.7976931348623157e308, -1.0]
    low, high = _RANGES.get(field.type, (-(2**63), 2**63 - 1))
    return sorted({low, high, min(high, 2**53), -1 if low < 0 else 0})


def _message_poisons(leaf: Leaf) -> Iterator[Poison]:
    name = leaf.field.message_type.full_name
    if name == "google.protobuf.Value":
        for label, value, keep in VALUE_POISONS:
            yield Poison(leaf.path, label, _set(leaf, _copy(value)), keep)
    elif name == "google.protobuf.Struct":
        for label, value, keep in VALUE_POISONS:
            yield Poison(leaf.path, label, _set(leaf, _struct_with(value)), keep)
    else:  # Timestamp, Duration: the extremes of their int64 seconds, bad nanos
        for seconds, nanos in ((2**63 - 1, 0), (-(2**63), 0), (253_402_300_800, 0), (1, 10**9)):
            yield Poison(
                leaf.path, f"{seconds}s {nanos}ns", _set(leaf, _time(seconds, nanos)), True
            )


def _copy(value: Message) -> Callable[[Message, str], None]:
    return lambda msg, name: getattr(msg, name).CopyFrom(value)


def _struct_with(value: struct_pb2.Value) -> Callable[[Message, str], None]:
    def apply(msg: Message, name: str) -> None:
        struct = getattr(msg, name)
        struct.Clear()
        struct.fields["v"].CopyFrom(value)

    return apply


def _time(seconds: int, nanos: int) -> Callable[[Message, str], None]:
    def apply(msg: Message, name: str) -> None:
        target = getattr(msg, name)
        target.seconds = seconds
        target.nanos = nanos

    return apply


def names_field(violations: list[tuple[str, str]], path: str) -> bool:
    """Whether a violation names ``path``, something inside it or the field it is in
    (``metadata`` and ``metadata_json`` are two spellings of one field)."""
    paths = {path, path.removesuffix("_json")}
    return any(_names(violations, p) for p in paths)


def _names(violations: list[tuple[str, str]], path: str) -> bool:
    for field, _ in violations:
        field = field.removesuffix("_json")
        if field == path or field.startswith((f"{path}.", f"{path}[")):
            return True
        if path.startswith((f"{field}.", f"{field}[")):
            return True
    return False
