"""Client JSON Schemas (working memory), evaluated so that no schema can stall the daemon.

A schema comes from a caller and is run against content on every write of its scope.
Four things keep that bounded:

- **Patterns run on RE2** (``google-re2``: linear time, no backtracking). ``pattern``,
  ``patternProperties`` and the pattern matching of ``additionalProperties`` are
  replaced by RE2 versions; a pattern RE2 cannot run (backreferences, lookaround) is
  refused with INVALID_ARGUMENT naming where it is. ``unevaluatedProperties`` beside
  ``patternProperties`` is refused: jsonschema matches those with Python's ``re``.
- **Nothing is fetched**: a ``$ref`` to a remote document is unresolvable (the
  default would fetch it over HTTP, blocking, from inside the daemon).
- **Bounded**: a ``$ref`` cycle that never descends into the content, or a schema
  nested deeper than :data:`MAX_SCHEMA_DEPTH`, is refused with INVALID_ARGUMENT naming
  where it is (validating it would recurse without end).
- **Out of the daemon's process, within CPU budgets**: checking and validating run in
  worker processes, per check and per tenant (schema_runner.py, schema_work.py).

This module is plain data in and out (no settings, no service): the worker processes
import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
import referencing.exceptions
from jsonschema import Draft202012Validator, SchemaError, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry

from memoryd.service.agent_state.schema_bounds import (
    DATA_KEYWORDS,
    MAX_SCHEMA_DEPTH,
    field_name,
    in_place_cycle,
    too_deep,
)

#: Schema violations reported per write (the first ones by JSON path).
MAX_REPORTED_VIOLATIONS = 10
#: Characters kept of a violation's description (it may quote the content).
_DESCRIPTION_CHARS = 300
#: RE2 refuses patterns whose compiled program would need more memory than this.
_RE2_MAX_MEM = 8 << 20
#: No remote document is ever fetched: every ``$ref`` must point into the schema.
_NO_RETRIEVAL: Registry[Any] = Registry()


class Problems(list[tuple[str, str]]):
    """What a check found, as (field, description) pairs: plain data, which the schema
    worker process sends back as it is (this module imports no settings or service)."""

    def add(self, field: str, description: str) -> None:
        self.append((field, description))


# ---------------------------------------------------------------- patterns on RE2


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the caller's error, not a log line
    options.max_mem = _RE2_MAX_MEM
    return options


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    """The compiled RE2 program of a pattern (re2.error when RE2 cannot run it)."""
    return re2.compile(pattern, _options())


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and _regex(pattern).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        regex = _regex(pattern)
        for name, value in instance.items():
            if regex.search(name) is not None:
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    """jsonschema's find_additional_properties, matching patternProperties on RE2."""
    properties = schema.get("properties", {})
    regexes = [_regex(p) for p in schema.get("patternProperties", {})]
    for name in instance:
        if name in properties or any(r.search(name) is not None for r in regexes):
            continue
        yield name


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = sorted(set(_additional(instance, schema)), key=str)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        yield ValidationError(
            f"Additional properties are not allowed ({', '.join(repr(e) for e in extras)} "
            f"{'was' if len(extras) == 1 else 'were'} unexpected)"
        )


_RE2_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


#: Each draft's validator class with RE2 keywords, made on first use.
_SAFE_CLASSES: dict[str, type[Validator]] = {}


def validator_class(schema: dict[str, Any]) -> type[Validator]:
    """The draft named by ``$schema`` (2020-12 when absent or unknown), matching
    patterns on RE2."""
    base: type[Validator] = validators.validator_for(schema, default=Draft202012Validator)
    name = base.__name__
    if name not in _SAFE_CLASSES:
        _SAFE_CLASSES[name] = validators.extend(base, _RE2_KEYWORDS)
    return _SAFE_CLASSES[name]


def _pattern_problems(node: Any, path: str, found: dict[str, set[str]], v: Problems) -> None:
    """Every pattern of a schema that RE2 refuses, and which keywords appear."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _pattern_problems(item, f"{path}[{i}]", found, v)
        return
    if not isinstance(node, dict):
        return
    for name, value in node.items():
        where = f"{path}.{name}"
        found.setdefault(name, set()).add(where)
        if name in DATA_KEYWORDS:
            continue
        patterns: list[tuple[str, str]] = []
        if name == "pattern" and isinstance(value, str):
            patterns.append((where, value))
        elif name == "patternProperties" and isinstance(value, dict):
            patterns.extend((f"{where}.{p}", p) for p in value)
        for at, pattern in patterns:
            try:
                _regex(pattern)
            except re2.error as exc:
                v.add(at, f"is not a pattern memoryd runs (RE2 syntax, linear time): {exc}")
        _pattern_problems(value, where, found, v)


# ---------------------------------------------------------------- checks


def shape_problems(schema: dict[str, Any], field: str = "json_schema") -> Problems:
    """The cheap structural check, before anything recurses through ``schema``: it
    must nest within MAX_SCHEMA_DEPTH."""
    v = Problems()
    deep = too_deep(schema)
    if deep is not None:
        v.add(field_name(field, deep), f"nests deeper than {MAX_SCHEMA_DEPTH} levels")
    return v


def schema_problems(schema: dict[str, Any], field: str = "json_schema") -> Problems:
    """Why ``schema`` is not a valid schema memoryd can run (empty: it is)."""
    v = shape_problems(schema, field)
    if v:
        return v
    found: dict[str, set[str]] = {}
    cycle = in_place_cycle(schema)
    if cycle is not None:
        v.add(
            field_name(field, cycle),
            "makes a reference cycle that never descends into the content (validation "
            "would recurse without end)",
        )
        return v
    _pattern_problems(schema, field, found, v)
    if "unevaluatedProperties" in found and "patternProperties" in found:
        v.add(
            min(found["unevaluatedProperties"]),
            "cannot be combined with patternProperties in a working-memory schema",
        )
    if v:
        return v
    try:
        validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        v.add(field, f"is not a valid JSON Schema at {exc.json_path}: {_short(exc.message)}")
    return v


def content_problems(content: dict[str, Any], schema: dict[str, Any]) -> Problems:
    """The content's violations of ``schema`` (first ones by document order); a
    reference that cannot be resolved is the schema's problem."""
    validator = validator_class(schema)(schema, registry=_NO_RETRIEVAL)
    v = Problems()
    try:
        errors = sorted(validator.iter_errors(content), key=_path_order)
    except referencing.exceptions.Unresolvable as exc:
        v.add(
            "json_schema", f"has a reference that cannot be resolved (only local ones are): {exc}"
        )
        return v
    for error in errors[:MAX_REPORTED_VIOLATIONS]:
        v.add(f"content.{error.json_path}", _short(error.message))
    return v


def _short(text: str) -> str:
    return text if len(text) <= _DESCRIPTION_CHARS else text[: _DESCRIPTION_CHARS - 1] + "…"


def _path_order(error: ValidationError) -> list[tuple[int, int, str]]:
    """Document order of the failing element: list indexes compare as numbers."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]
