"""JSON text as clients write it: checked, stored and returned without re-encoding.

JSON numbers that pass through ``google.protobuf.Value`` become doubles
(``12345678901234567`` -> ``1.2345678901234568e+16``, ``1`` -> ``1.0``). The ``*_json``
fields of the API carry JSON text instead; this module checks such text and brings it
to its stored form, which differs from what was sent only by the whitespace between
tokens (removed): every number, escape and member order stays as written.

``parse`` gives Python data for the places that need values (reserved fields of keyed
content, merges, schemas): integers stay ``int``, so ``dumps(parse(t))`` is ``t`` for
text without non-canonical number or escape spellings; a float such as
``1.50``, ``1e2`` or ``-0`` is not. Where a value is changed by the daemon (a working
memory MERGE, masking, metadata the daemon adds to), :func:`merge_objects` and
:func:`spelled` keep the writer's spelling of every part the change left alone.

:class:`Json` is the one type a JSON-bearing input becomes where it enters the daemon
(the gRPC and MCP adapters, Import): its text and value, checked once, so that what
is stored can always be read back and sent on every transport. Anything a double
cannot hold (NaN, infinities, integers past 1.8e308), repeated names, lone
surrogates and nesting deeper than ``MAX_JSON_DEPTH`` are refused there, naming the
field; a stored text that fails these checks (written before them) no longer decodes
(:func:`parse` raises), and readers skip it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.limits import MAX_JSON_DEPTH

#: A JSON value as Python data: dict, list, str, int, float, bool or None.
JsonValue = Any

#: A string token, unrolled (runs of plain characters, then one escape): an
#: alternation per character made it the larger part of a write's cost.
_STRING_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*"'
#: Splits a text into what lies between strings (even items) and strings (odd ones).
_STRINGS = re.compile(f"({_STRING_TOKEN})", re.DOTALL)
#: JSON whitespace, removed between tokens.
_WHITESPACE = " \t\n\r"
_NO_WHITESPACE = str.maketrans("", "", _WHITESPACE)
#: Finds where a value's text ends (its value is not kept).
_DECODER = json.JSONDecoder()
#: A \uD800-\uDFFF escape: the text may encode a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: Strings and everything but brackets: what is left of a text measures its nesting.
_NOT_BRACKETS = re.compile(f'{_STRING_TOKEN}|[^][{{}}"]+', re.DOTALL)
#: Digits (with a sign) from which an integer may lie beyond a double's range (1e308
#: has 309 digits): shorter ones need no check.
_DOUBLE_DIGITS = 309
#: A run of that many digits.
_LONG_DIGITS = re.compile(f"[0-9]{{{_DOUBLE_DIGITS}}}")


class JsonTextError(ValueError):
    """Why a text is not acceptable JSON (the message completes "is ...")."""


def _no_constants(name: str) -> Any:
    raise JsonTextError(f"not JSON: {name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise JsonTextError(f"not JSON: {literal} is out of the range of a double")
    return value


def _beyond_double(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _integer(literal: str) -> int:
    value = int(literal)
    if len(literal) >= _DOUBLE_DIGITS and _beyond_double(value):
        raise JsonTextError(
            f"not accepted: an integer of {len(literal.lstrip('-'))} digits is out of the "
            "range of a double (every JSON reader must be able to hold it)"
        )
    return value


def _too_deep() -> JsonTextError:
    return JsonTextError(f"not accepted: nested deeper than {MAX_JSON_DEPTH} arrays or objects")


def _check_nesting(text: str) -> None:
    """JsonTextError when ``text`` nests arrays and objects deeper than MAX_JSON_DEPTH
    (before parsing: a deep text would also cost the parser its recursion). With the
    strings and everything but brackets taken out, each round of removing the
    innermost empty pairs takes one level off."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    brackets = _NOT_BRACKETS.sub("", text)
    for _ in range(MAX_JSON_DEPTH):
        brackets = brackets.replace("[]", "").replace("{}", "")
        if not brackets:
            return
    raise _too_deep()


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise JsonTextError(f"not accepted: the object has the name {name!r} twice")
        out[name] = value
    return out


def parse(text: str) -> JsonValue:
    """The value of a JSON text; JsonTextError says what is wrong.

    Stricter than ``json.loads``: no NaN / Infinity, no number beyond a double's
    range, no repeated member name (readers disagree on which one wins), no lone
    surrogate (it cannot be stored as UTF-8), no nesting deeper than MAX_JSON_DEPTH
    (protobuf readers stop there). Also the check of a stored text as it is read.
    """
    _check_nesting(text)
    try:
        value = json.loads(
            text,
            parse_constant=_no_constants,
            parse_float=_finite,
            parse_int=_integer,  # a call per integer costs less than a scan for long ones
            object_pairs_hook=_unique,
        )
    except JsonTextError:
        raise
    except RecursionError:
        raise JsonTextError("nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, int digit limits
        raise JsonTextError(f"not valid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            dumps(value).encode("utf-8")
        except UnicodeEncodeError:
            raise JsonTextError("not accepted: it encodes a lone surrogate") from None
    return value


def compact(text: str) -> str:
    """``text`` without whitespace between tokens (strings untouched). ``text`` must
    be valid JSON (see :func:`normalise`)."""
    if not any(ch in text for ch in _WHITESPACE):
        return text
    parts = _STRINGS.split(text)
    parts[::2] = [between.translate(_NO_WHITESPACE) for between in parts[::2]]
    return "".join(parts)


def normalise(text: str) -> tuple[str, JsonValue]:
    """The stored form of a client's JSON text and its value (JsonTextError if the
    text is not acceptable JSON)."""
    value = parse(text)
    return compact(text), value


def dumps(value: JsonValue) -> str:
    """Compact JSON text of Python data (UTF-8 characters kept, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _check_integers(value: Any) -> None:
    """JsonTextError for an integer in ``value`` (JSON data) beyond a double's range."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and item.bit_length() > 1000 and _beyond_double(item):
            raise JsonTextError(
                f"not accepted: an integer of about {int(item.bit_length() * 0.30103) + 1} "
                "digits is out of the range of a double (every JSON reader must be able "
                "to hold it)"
            )


def data_text(value: Any) -> str:
    """The compact JSON text of ``value`` if it is JSON data :func:`parse` would
    accept; JsonTextError says what is wrong (encoding does the type and NaN checks in
    C; integers are looked at only when the text has a run of 309 digits). Object
    names are strings in data a JSON or protobuf parser made (an int name would be
    encoded as its digits)."""
    try:
        text = dumps(value)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        raise JsonTextError(f"not JSON: {exc} (NaN and infinities are not JSON numbers)") from None
    except TypeError as exc:
        raise JsonTextError(f"not JSON data: {exc}") from None
    _check_nesting(text)
    if _LONG_DIGITS.search(text):
        _check_integers(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise JsonTextError("not accepted: it holds a lone surrogate") from None
    return text


@dataclass(frozen=True, slots=True)
class Json:
    """A JSON value accepted at the door: its stored ``text`` (the writer's text
    without whitespace between tokens, or the compact encoding of data) and its
    ``value``. Made only by :meth:`parse` / :meth:`of` (or their ``from_*`` forms
    that name the request field), so holding one means the checks of :func:`parse`
    passed: services take it and never parse the text again."""

    text: str
    value: JsonValue

    @classmethod
    def parse(cls, text: str) -> Json:
        """A client's JSON text; JsonTextError says what is wrong."""
        stored, value = normalise(text)
        return cls(stored, value)

    @classmethod
    def of(cls, value: Any) -> Json:
        """Python JSON data (from a protobuf Value, an MCP argument); JsonTextError
        says what is wrong."""
        return cls(data_text(value), value)

    @classmethod
    def from_text(cls, text: str, field: str, *, object_only: bool = False) -> Json:
        """:meth:`parse`, INVALID_ARGUMENT naming ``field`` when the text is refused."""
        return cls._checked(cls.parse, text, field, object_only)

    @classmethod
    def from_value(cls, value: Any, field: str, *, object_only: bool = False) -> Json:
        """:meth:`of`, INVALID_ARGUMENT naming ``field`` when the value is refused."""
        return cls._checked(cls.of, value, field, object_only)

    @staticmethod
    def _checked(build: Callable[[Any], Json], source: Any, field: str, object_only: bool) -> Json:
        """``build(source)``, INVALID_ARGUMENT naming ``field`` when it is refused (or,
        with ``object_only``, when it is not an object)."""
        try:
            out = build(source)
        except JsonTextError as exc:
            raise InvalidArgument.field(field, f"is {exc}") from None
        return out.required_object(field) if object_only else out

    def required_object(self, field: str) -> Json:
        """This value when it is an object; INVALID_ARGUMENT naming ``field`` else."""
        if not isinstance(self.value, dict):
            raise InvalidArgument.field(field, "must be a JSON object")
        return self

    @property
    def members(self) -> dict[str, Any]:
        """The value of an object (see :meth:`required_object`); {} for anything else."""
        return self.value if isinstance(self.value, dict) else {}


#: The empty object.
EMPTY_OBJECT = Json("{}", {})


def _skip(text: str, i: int) -> int:
    """The index of the first non-whitespace character at or after ``i``."""
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def _parts(text: str) -> Iterator[tuple[str, str]]:
    """The (name token, value text) of each member of an object text, or ("", item
    text) of each item of an array text, in order; ``text`` must be valid JSON."""
    is_object = text[0] == "{"
    i = _skip(text, 1)
    if text[i] in "]}":
        return
    while True:
        name = ""
        if is_object:
            _, after = _DECODER.raw_decode(text, i)
            name = text[i:after]
            i = _skip(text, _skip(text, after) + 1)  # past the colon
        _, after = _DECODER.raw_decode(text, i)
        yield name, text[i:after]
        i = _skip(text, after)
        if text[i] != ",":
            return
        i = _skip(text, i + 1)


def members(text: str) -> dict[str, tuple[str, str]]:
    """Each member of a JSON object text by name: (its name as written, its value's
    text as written), in the text's order."""
    return {json.loads(name): (name, value) for name, value in _parts(text)}


def _object_text(parts: Iterator[tuple[str, str]] | list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{name}:{value}" for name, value in parts) + "}"


def merge_objects(base: str, update: str) -> str:
    """The text of ``{**parse(base), **parse(update)}`` (both JSON object texts):
    ``base``'s members in place and as written, ``update``'s replacing or following
    them as written."""
    merged = members(base)
    merged.update(members(update))
    return _object_text(list(merged.values()))


def _same(a: JsonValue, b: JsonValue) -> bool:
    """Equal and of the same JSON types all the way down (1, 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def spelled(value: JsonValue, text: str) -> str:
    """JSON text of ``value`` that keeps ``text``'s spelling (numbers, escapes) of
    every part ``value`` still holds unchanged; ``text`` is an earlier text of the
    value, "" or invalid when there is none (then this is ``dumps(value)``)."""
    if not text:
        return dumps(value)
    try:
        earlier = json.loads(text)
    except ValueError:
        return dumps(value)
    return _respelled(value, earlier, text)


def _respelled(value: JsonValue, earlier: JsonValue, text: str) -> str:
    if _same(value, earlier):
        return text
    if isinstance(value, dict) and isinstance(earlier, dict):
        written = members(text)
        out = []
        for name, item in value.items():
            if name in written:
                token, item_text = written[name]
                out.append((token, _respelled(item, earlier[name], item_text)))
            else:
                out.append((dumps(name), dumps(item)))
        return _object_text(out)
    if isinstance(value, list) and isinstance(earlier, list) and len(value) == len(earlier):
        items = [item for _, item in _parts(text)]
        return "[" + ",".join(map(_respelled, value, earlier, items)) + "]"
    return dumps(value)
