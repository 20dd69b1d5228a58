"""JSON text as clients write it: checked, stored and returned without re-encoding.

JSON numbers that pass through ``google.protobuf.Value`` become doubles
(``12345678901234567`` -> ``1.2345678901234568e+16``, ``1`` -> ``1.0``). The ``*_json``
fields of the API carry JSON text instead; this module checks such text and brings it
to its stored form, which differs from what was sent only by the whitespace between
tokens (removed): every number, escape and member order stays as written.

``parse`` gives Python data for the places that need values (reserved fields of keyed
content, merges, schemas): integers of any size stay ``int``, so ``dumps(parse(t))``
is ``t`` for text without non-canonical number or escape spellings.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: A JSON value as Python data: dict, list, str, int, float, bool or None.
JsonValue = Any

#: A string token (kept as is) or a run of JSON whitespace (dropped).
_TOKENS = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\n\r]+', re.DOTALL)
#: A \uD800-\uDFFF escape: the text may encode a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class JsonTextError(ValueError):
    """Why a text is not acceptable JSON (the message completes "is ...")."""


def _no_constants(name: str) -> Any:
    raise JsonTextError(f"not JSON: {name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise JsonTextError(f"not JSON: {literal} is out of the range of a double")
    return value


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
    surrogate (it cannot be stored as UTF-8).
    """
    try:
        value = json.loads(
            text,
            parse_constant=_no_constants,
            parse_float=_finite,
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
    return _TOKENS.sub(lambda m: m.group(1) or "", text)


def normalise(text: str) -> tuple[str, JsonValue]:
    """The stored form of a client's JSON text and its value (JsonTextError if the
    text is not acceptable JSON)."""
    value = parse(text)
    return compact(text), value


def dumps(value: JsonValue) -> str:
    """Compact JSON text of Python data (UTF-8 characters kept, NaN refused)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
