"""Schemas whose evaluation would never end, found before one is run.

Validation recurses through a schema's subschemas. Keywords such as ``properties`` or
``items`` descend into a *part* of the content, so even a recursive schema (a tree of
``{"$ref": "#"}`` under ``children``) ends with the content. The *in-place*
applicators (``allOf``, ``not``, ``if``, ``$ref``, ...) apply a subschema to the
*same* value: a cycle through them alone, such as ``{"$ref": "#"}`` or two ``$defs``
referring to each other under ``allOf``, recurses until Python's stack runs out.

:func:`in_place_cycle` finds such a cycle through local references (``#``, ``#/json/
pointer``, relative to the nearest ``$id``) and names a ``$ref`` on it;
:func:`too_deep` bounds how deeply a schema nests at all. What neither can see (a
cycle through anchors or dynamic references) still ends: the schema runner answers
the RecursionError as INVALID_ARGUMENT.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

#: Deepest nesting of objects and arrays in a schema (real ones stay far below).
MAX_SCHEMA_DEPTH = 64
#: Keywords whose values are data, not schemas.
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
#: Applicators whose subschema (or each of whose subschemas) applies to the same value.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf", "dependentSchemas")
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")

Pointer = tuple[str | int, ...]


def field_name(base: str, pointer: Pointer) -> str:
    """``pointer`` in a schema as the violations name it: ``json_schema.a[0].b``."""
    return base + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in pointer)


def too_deep(schema: Any, limit: int = MAX_SCHEMA_DEPTH) -> Pointer | None:
    """Where ``schema`` nests objects and arrays deeper than ``limit`` (None: it does
    not). Iterative: a deep document must not exhaust the stack it guards."""
    pending: list[tuple[Any, Pointer]] = [(schema, ())]
    while pending:
        node, at = pending.pop()
        if len(at) > limit:
            return at
        if isinstance(node, dict):
            pending.extend((value, (*at, key)) for key, value in node.items())
        elif isinstance(node, list):
            pending.extend((value, (*at, i)) for i, value in enumerate(node))
    return None


def _subschemas(schema: dict[str, Any]) -> Iterator[tuple[Pointer, dict[str, Any], Pointer]]:
    """Every object of the schema that may be a subschema: (pointer, object, pointer of
    the resource its local references resolve in)."""
    pending: list[tuple[Any, Pointer, Pointer]] = [(schema, (), ())]
    while pending:
        node, at, resource = pending.pop()
        if isinstance(node, list):
            pending.extend((v, (*at, i), resource) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        if at and isinstance(node.get("$id"), str):
            resource = at
        yield at, node, resource
        pending.extend((v, (*at, k), resource) for k, v in node.items() if k not in DATA_KEYWORDS)


def _target(root: dict[str, Any], reference: Any, resource: Pointer) -> Pointer | None:
    """Where in ``root`` a local reference points (None: not a local JSON pointer, or
    nothing there)."""
    if not isinstance(reference, str) or not reference.startswith("#"):
        return None
    fragment = unquote(reference[1:])
    if fragment and not fragment.startswith("/"):
        return None  # an anchor: left to the runner's backstop
    node: Any = root
    for step in resource:
        node = node[step]
    at = list(resource)
    for part in fragment.split("/")[1:] if fragment else []:
        name = part.replace("~1", "/").replace("~0", "~")
        key: str | int
        if isinstance(node, list) and name.isdigit() and int(name) < len(node):
            key = int(name)
        elif isinstance(node, dict) and name in node:
            key = name
        else:
            return None
        node = node[key]
        at.append(key)
    return tuple(at)


def _in_place_edges(
    root: dict[str, Any], at: Pointer, node: dict[str, Any], resource: Pointer
) -> Iterator[tuple[Pointer, Pointer | None]]:
    """(subschema applied to the same value, the reference keyword that leads there)."""
    for key in _IN_PLACE_ONE:
        if isinstance(node.get(key), dict):
            yield (*at, key), None
    for key in _IN_PLACE_MANY:
        value = node.get(key)
        named: list[tuple[str | int, Any]] = []
        if isinstance(value, list):
            named = list(enumerate(value))
        elif isinstance(value, dict):
            named = list(value.items())
        for name, sub in named:
            if isinstance(sub, dict):
                yield (*at, key, name), None
    for key in _REFERENCES:
        target = _target(root, node.get(key), resource)
        if target is not None:
            yield target, (*at, key)


def in_place_cycle(schema: dict[str, Any]) -> Pointer | None:
    """A reference keyword on a cycle of in-place applicators (None: there is none)."""
    graph: dict[Pointer, list[tuple[Pointer, Pointer | None]]] = {
        at: list(_in_place_edges(schema, at, node, resource))
        for at, node, resource in _subschemas(schema)
    }
    done: set[Pointer] = set()
    for start in graph:
        if start in done:
            continue
        # Depth-first, iteratively: the path holds (node, its next edge index, the
        # reference that led to it).
        path: list[tuple[Pointer, int, Pointer | None]] = [(start, 0, None)]
        on_path = {start}
        while path:
            at, index, via = path[-1]
            edges = graph.get(at, [])
            if index == len(edges):
                path.pop()
                on_path.discard(at)
                done.add(at)
                continue
            path[-1] = (at, index + 1, via)
            target, reference = edges[index]
            if target in on_path:
                entered = next(i for i, step in enumerate(path) if step[0] == target)
                on_cycle = [step[2] for step in path[entered + 1 :]] + [reference]
                return next(r for r in on_cycle if r is not None)
            if target in graph and target not in done:
                path.append((target, 0, reference))
                on_path.add(target)
    return None
