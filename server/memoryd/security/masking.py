"""Data masking: personal data and secrets replaced in what low-clearance callers read.

Rules (``masking.rules``): ``email``, ``phone``, ``national_id`` (US SSN, Chinese
resident id, UK NI number), ``card`` (13-19 digit card numbers), ``secret`` (API keys
and tokens of common providers, JWTs, ``password=...``-style assignments), plus
``masking.custom`` patterns. Every pattern runs on RE2 (google-re2), linear in the
text whatever the pattern, so a custom rule cannot stall the daemon.

Output is masked for principals whose clearance is below ``masking.unmasked_clearance``:
the operation door (operations/door.py) runs every outcome, stream item and error
through :class:`OutcomeMask` before any transport renders it, so every string and JSON
value of every operation is masked except the fields security/masked_fields.py declares
as identifiers. What is stored is never changed. An admin's Export is never masked: a
backup must restore exactly what was stored.

Masking is idempotent (no rule matches a replacement: MaskingSettings checks it when
the config is read): services that render text within a token budget (snapshots, the
default read) mask what they render before counting it, and the door's pass over the
rendered text leaves it as it is.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

import numpy as np
import re2

from memoryd.domain import json_text
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.relations import DERIVED_FROM_KEY, RESERVED_PREFIX, SUPERSEDED_BY_KEY
from memoryd.security.masked_fields import FIELD_KINDS, Kind
from memoryd.security.settings import BUILTIN_RULES, MaskingSettings

Mask = Callable[[str], str]
T = TypeVar("T")
#: Which strings of a JSON value are kept, by the member names on the way to them.
Keep = Callable[[tuple[str, ...]], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: Any
    replacement: str


class Masker:
    """Compiled masking rules; :meth:`for_principal` says whether a caller gets them."""

    def __init__(self, settings: MaskingSettings) -> None:
        self.settings = settings
        patterns: list[tuple[str, str, str]] = [
            (name, pattern, replacement)
            for name, (pattern, replacement) in BUILTIN_RULES.items()
            if name in settings.rules
        ]
        patterns += [(c.name, c.pattern, c.replacement) for c in settings.custom]
        self._rules = [_Rule(n, re2.compile(p), r) for n, p, r in patterns]
        #: Any rule's match: most strings have none, and one search costs a fifth of
        #: running every rule (a Recall of 10 memories masks some 80 strings).
        self._any = re2.compile("|".join(f"(?:{p})" for _, p, _ in patterns) or "$^")
        self._outcomes = OutcomeMask(self.mask, FIELD_KINDS)

    def mask(self, text: str) -> str:
        if not text or not self._any.search(text):
            return text
        for rule in self._rules:
            text = rule.pattern.sub(rule.replacement, text)
        return text

    def for_scope(self, scope: CallScope, *, export: bool = False) -> Mask | None:
        """The mask for this caller's output, or None when it reads unmasked."""
        return self.mask if self.applies(scope.principal, export=export) else None

    def for_principal(self, principal: Principal, *, export: bool = False) -> OutcomeMask | None:
        """The outcome mask for this caller, or None when it reads unmasked."""
        return self._outcomes if self.applies(principal, export=export) else None

    def applies(self, principal: Principal, *, export: bool = False) -> bool:
        """Whether ``principal`` reads masked output (``export``: an Export, which an
        admin reads unmasked whatever its clearance)."""
        s = self.settings
        if not s.enabled or not self._rules or principal.clearance >= s.unmasked_clearance:
            return False
        return not (export and Role.ADMIN in principal.roles)


# ---------------------------------------------------------------- JSON and paths


def _keep_nothing(_: tuple[str, ...]) -> bool:
    return False


def mask_json(value: Any, mask: Mask, keep: Keep = _keep_nothing) -> Any:
    """``value`` (a JSON value) with every string and member name in it masked, except
    the strings ``keep`` names; ``value`` itself when nothing changed."""
    return _json(value, mask, keep, ())


def _json(value: Any, mask: Mask, keep: Keep, path: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return value if keep(path) else mask(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        changed = False
        for name, item in value.items():
            masked_item = _json(item, mask, keep, (*path, name))
            masked_name = mask(name)
            if masked_name in out:  # two names masked alike: both stay, told apart
                masked_name = _unused(masked_name, out)
            out[masked_name] = masked_item
            changed = changed or masked_name != name or masked_item is not item
        return out if changed else value
    if isinstance(value, list):
        items = [_json(item, mask, keep, path) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _unused(name: str, taken: Mapping[str, Any]) -> str:
    n = 2
    while f"{name}~{n}" in taken:
        n += 1
    return f"{name}~{n}"


def mask_json_text(text: str, mask: Mask, keep: Keep = _keep_nothing) -> str:
    """JSON text with its strings and member names masked (:func:`mask_json`), still
    valid JSON, the writer's spelling kept wherever nothing was masked; text that is not
    JSON is masked as text."""
    try:
        value = json.loads(text)
    except ValueError:
        return mask(text)
    masked = mask_json(value, mask, keep)
    if masked is value:
        return text
    try:
        return json_text.spelled(masked, text)
    except ValueError:  # a number a double cannot hold, in a part that changed
        return mask(text)


def mask_path(path: str, mask: Mask) -> str:
    """A key path with each segment masked: still a path ("/" kept, none added)."""
    return "/".join(mask(segment).replace("/", "_") for segment in path.split("/"))


#: The daemon's metadata members that hold ids (relations.py), and the members of its
#: records whose strings are ids, kinds and times. Any other string in a ``memoryd:``
#: member (a relation's reason, a deduplicated memory's previous content) is masked.
_RESERVED_IDS = frozenset({DERIVED_FROM_KEY, SUPERSEDED_BY_KEY})
_RESERVED_ID_MEMBERS = frozenset({"memory_id", "kind", "at", "undone_at", "method"})


def _daemon_ids(path: tuple[str, ...]) -> bool:
    if not path or not path[0].startswith(RESERVED_PREFIX):
        return False
    return path[0] in _RESERVED_IDS or path[-1] in _RESERVED_ID_MEMBERS


# ---------------------------------------------------------------- outcomes

#: Values that are never text.
_NOT_TEXT = (bool, int, float, datetime, timedelta, bytes, enum.Enum, np.ndarray, np.generic)
_Plan = tuple[tuple[str, Kind, bool], ...]


class OutcomeMask:
    """Masks every string and JSON value of an outcome (dataclasses, lists, tuples and
    dicts, walked all the way down) by its field's :class:`Kind` (TEXT unless
    ``kinds`` declares otherwise). Returns copies; the value itself when nothing was
    masked, so a caller can tell whether anything was."""

    def __init__(self, mask: Mask, kinds: Mapping[type, Mapping[str, Kind]]) -> None:
        self._mask = mask
        self._kinds = kinds
        #: Per dataclass: (field, kind, passed to __init__), built on first use.
        self._plans: dict[type, _Plan] = {}

    def __call__(self, value: T, kind: Kind = Kind.TEXT) -> T:
        return cast(T, self._value(value, kind))

    def _value(self, value: Any, kind: Kind) -> Any:
        if value is None or kind is Kind.KEEP or isinstance(value, _NOT_TEXT):
            return value
        if isinstance(value, str):
            return self._text(value, kind)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self._dataclass(value)
        if kind is Kind.METADATA:
            return mask_json(value, self._mask, _daemon_ids)
        if isinstance(value, list | tuple | frozenset | set):
            items = [self._value(item, kind) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else type(value)(items)
        if isinstance(value, dict):
            return mask_json(value, self._mask)
        # Fail closed: an outcome holding something this walk does not know could
        # carry text past it (the call ends INTERNAL; a unit test walks every outcome).
        raise TypeError(f"cannot mask a {type(value).__name__} of an outcome")

    def _text(self, text: str, kind: Kind) -> str:
        if kind is Kind.PATH:
            return mask_path(text, self._mask)
        if kind is Kind.JSON_TEXT:
            return mask_json_text(text, self._mask)
        if kind is Kind.METADATA_TEXT:
            return mask_json_text(text, self._mask, _daemon_ids) if text else text
        return self._mask(text)

    def _dataclass(self, value: Any) -> Any:
        plan = self._plans.get(type(value))
        if plan is None:
            plan = self._plans[type(value)] = self._plan(type(value))
        changes: dict[str, Any] = {}
        late: dict[str, Any] = {}
        for name, kind, init in plan:
            item = getattr(value, name)
            masked = self._value(item, kind)
            if masked is not item:
                (changes if init else late)[name] = masked
        if not changes and not late:
            return value
        out = dataclasses.replace(value, **changes)
        for name, masked in late.items():
            object.__setattr__(out, name, masked)
        return out

    def _plan(self, cls: type) -> _Plan:
        """The fields to walk: all but those declared KEEP and those whose type holds
        no text (numbers, times, enums, vectors), which are most of them."""
        declared = self._kinds.get(cls, {})
        hints = typing.get_type_hints(cls)
        return tuple(
            (f.name, declared.get(f.name, Kind.TEXT), f.init)
            for f in dataclasses.fields(cls)
            if declared.get(f.name) is not Kind.KEEP and not _textless(hints[f.name])
        )


def _textless(hint: Any) -> bool:
    """Whether a value of type ``hint`` can hold no text."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        return all(_textless(arg) for arg in typing.get_args(hint))
    if hint is type(None) or typing.get_origin(hint) is np.ndarray:
        return True
    return isinstance(hint, type) and issubclass(hint, (*_NOT_TEXT, type(None)))
