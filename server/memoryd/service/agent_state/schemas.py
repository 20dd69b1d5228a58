"""Client JSON Schemas (working memory), evaluated so that no schema can stall the daemon.

A schema comes from a caller and is run against content on every write of its scope.
Three things keep that bounded:

- **Patterns run on RE2** (``google-re2``: linear time, no backtracking). ``pattern``,
  ``patternProperties`` and the pattern matching of ``additionalProperties`` are
  replaced by RE2 versions; a pattern RE2 cannot run (backreferences, lookaround) is
  refused with INVALID_ARGUMENT naming where it is. ``unevaluatedProperties`` beside
  ``patternProperties`` is refused: jsonschema matches those with Python's ``re``.
- **Nothing is fetched**: a ``$ref`` to a remote document is unresolvable (the
  default would fetch it over HTTP, blocking, from inside the daemon).
- **Off the event loop, within a time budget**: checking and validating run in a
  small worker pool, one evaluation per tenant at a time, and are stopped once they
  have used more than ``working_memory.schema_time_budget_ms`` of CPU
  (INVALID_ARGUMENT).
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from types import FrameType
from typing import Any, TypeVar

import re2
import referencing.exceptions
from jsonschema import Draft202012Validator, SchemaError, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry

from memoryd.config import WorkingMemorySettings
from memoryd.domain.errors import InvalidArgument
from memoryd.service.common.validation import Violations

T = TypeVar("T")
#: Schema violations reported per write (the first ones by JSON path).
MAX_REPORTED_VIOLATIONS = 10
#: Characters kept of a violation's description (it may quote the content).
_DESCRIPTION_CHARS = 300
#: Schema keywords whose values are data, not schemas: not searched for patterns.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_WORKERS = 2
#: RE2 refuses patterns whose compiled program would need more memory than this.
_RE2_MAX_MEM = 8 << 20
#: No remote document is ever fetched: every ``$ref`` must point into the schema.
_NO_RETRIEVAL: Registry[Any] = Registry()


class OverBudget(Exception):
    """A schema check or validation ran past its time budget."""


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


def _pattern_problems(node: Any, path: str, found: dict[str, set[str]], v: Violations) -> None:
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
        if name in _DATA_KEYWORDS:
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


def check_schema(v: Violations, schema: dict[str, Any], field: str = "json_schema") -> None:
    """Add a violation when ``schema`` is not a valid schema memoryd can run."""
    found: dict[str, set[str]] = {}
    before = len(v.items)
    _pattern_problems(schema, field, found, v)
    if "unevaluatedProperties" in found and "patternProperties" in found:
        v.add(
            min(found["unevaluatedProperties"]),
            "cannot be combined with patternProperties in a working-memory schema",
        )
    if len(v.items) > before:
        return
    try:
        validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        v.add(field, f"is not a valid JSON Schema at {exc.json_path}: {_short(exc.message)}")


def content_violations(content: dict[str, Any], schema: dict[str, Any]) -> Violations:
    """The content's violations of ``schema`` (first ones by document order)."""
    validator = validator_class(schema)(schema, registry=_NO_RETRIEVAL)
    try:
        errors = sorted(validator.iter_errors(content), key=_path_order)
    except referencing.exceptions.Unresolvable as exc:
        raise InvalidArgument.field(
            "json_schema", f"has a reference that cannot be resolved (only local ones are): {exc}"
        ) from None
    v = Violations()
    for error in errors[:MAX_REPORTED_VIOLATIONS]:
        v.add(f"content.{error.json_path}", _short(error.message))
    return v


def _short(text: str) -> str:
    return text if len(text) <= _DESCRIPTION_CHARS else text[: _DESCRIPTION_CHARS - 1] + "…"


def _path_order(error: ValidationError) -> list[tuple[int, int, str]]:
    """Document order of the failing element: list indexes compare as numbers."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


# ---------------------------------------------------------------- budget and pool


#: Frames of these kinds are never where the budget stops work: a generator's frame
#: also runs when it is closed, and an exception raised there is "ignored" by the
#: finaliser (and the tracer is gone with it): the work would go on unbounded.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: Python calls between two looks at the thread's CPU clock (a system call each).
_CALLS_PER_LOOK = 64


def within_budget(seconds: float, work: Callable[[], T]) -> T:
    """Run ``work`` in this thread, stopping it (OverBudget) once it has used more than
    ``seconds`` of this thread's CPU time: a trace function looks at the clock every
    few Python calls. CPU time, not wall time: a busy machine (or the GIL held by
    other threads) must not fail a schema that is cheap to evaluate."""
    deadline = time.thread_time() + seconds
    previous = sys.gettrace()
    calls = 0
    stopped = False

    def trace(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls, stopped
        if event != "call" or frame.f_code.co_flags & _RESUMABLE:
            return None
        calls += 1
        if calls % _CALLS_PER_LOOK == 0 and time.thread_time() > deadline:
            stopped = True
            raise OverBudget
        return None

    sys.settrace(trace)
    try:
        result = work()
    finally:
        sys.settrace(previous)
    if stopped:  # raised where something caught it: the result is not to be trusted
        raise OverBudget
    return result


def over_budget(budget_s: float) -> InvalidArgument:
    return InvalidArgument.field(
        "json_schema",
        f"took more than {budget_s * 1000:.0f} ms of CPU to evaluate "
        "(working_memory.schema_time_budget_ms): simplify it",
    )


class SchemaRunner:
    """Schema checks and validations off the event loop: a small pool of its own
    (so they never hold up the store's threads), one evaluation per tenant at a time
    (so one tenant's schemas never take every worker), each within the budget."""

    def __init__(self, settings: WorkingMemorySettings) -> None:
        self.budget_s = settings.schema_time_budget_ms / 1000
        self._pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="memoryd-schema")
        self._gates: dict[str, asyncio.Lock] = {}
        self._waiting: Counter[str] = Counter()

    async def run(self, tenant_id: str, work: Callable[[], T]) -> T:
        """``work()`` in the pool within the budget; INVALID_ARGUMENT past it."""
        gate = self._gates.setdefault(tenant_id, asyncio.Lock())
        self._waiting[tenant_id] += 1
        try:
            async with gate:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(self._pool, within_budget, self.budget_s, work)
        except OverBudget:
            raise over_budget(self.budget_s) from None
        finally:
            self._waiting[tenant_id] -= 1
            if not self._waiting[tenant_id]:
                del self._waiting[tenant_id], self._gates[tenant_id]
