"""The generated parts of the documentation, from the code they describe: the MCP tool
table (README.md, from memoryd_client.tool_table) and the settings reference
(docs/configuration.md, from memoryd.config.Settings and the ``#:`` comments on its
fields). ``make docs`` (``python -m tests.docs.generate``) rewrites them;
tests/docs/test_docs.py fails when they are stale."""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from memoryd.config import Settings
from memoryd_client.tool_table import MCP_TOOLS, TOOLS

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONFIGURATION = REPO / "docs" / "configuration.md"
ENV_PREFIX = "MEMORYD_"


# ---------------------------------------------------------------- markers


_MARKERS = r"(<!-- {name}:begin[^>]*-->\n)(.*?)(<!-- {name}:end -->)"


def section(text: str, name: str) -> str:
    """What stands between ``<!-- name:begin ... -->`` and ``<!-- name:end -->``."""
    match = re.search(_MARKERS.format(name=name), text, re.S)
    if match is None:
        raise ValueError(f"no generated section {name!r}")
    return match.group(2)


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the section ``name`` holding ``body``."""
    section(text, name)  # it must be there
    return re.sub(
        _MARKERS.format(name=name), lambda m: m.group(1) + body + m.group(3), text, flags=re.S
    )


# ---------------------------------------------------------------- MCP tools


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?\.)(?:\s+[A-Z(\"]|$)", text, re.S)
    return (match.group(1) if match else text).strip()


def _bounds(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" {low}..{high}"
    if low is not None:
        return f" ≥ {low}"
    return ""


def argument_type(schema: dict[str, Any]) -> str:
    """A short description of an argument's JSON Schema, as the tool table shows it."""
    if "enum" in schema:
        return "\\|".join(str(v) for v in schema["enum"])
    if "oneOf" in schema:
        return " or ".join(argument_type(s) for s in schema["oneOf"])
    kind = schema.get("type")
    if kind is None:
        return "any JSON"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array":
        return f"[{argument_type(schema.get('items', {}))}]"
    if kind == "string" and schema.get("pattern") == "^/":
        return "string starting with /"
    if kind in ("integer", "number"):
        return f"{kind}{_bounds(schema)}"
    return str(kind)


def mcp_tools_table() -> str:
    """Every MCP tool: its arguments (required ones in bold) and what it does."""
    rows = ["| tool | arguments | what it does |", "|---|---|---|"]
    for name in MCP_TOOLS:
        spec = TOOLS[name]
        arguments = []
        for arg, schema in spec.properties.items():
            label = f"**`{arg}`**" if arg in spec.required else f"`{arg}`"
            arguments.append(f"{label} {argument_type(schema)}")
        rows.append(f"| `{name}` | {', '.join(arguments)} | {_first_sentence(spec.description)} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------- settings


def _field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The ``#:`` comment lines standing right above each field of ``model``."""
    source = textwrap.dedent(inspect.getsource(model))
    lines = source.splitlines()
    out: dict[str, str] = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            comment: list[str] = []
            i = node.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#:"):
                comment.insert(0, lines[i].strip()[2:].strip())
                i -= 1
            out[node.target.id] = " ".join(comment)
    return out


def _section_model(annotation: Any) -> type[BaseModel] | None:
    return annotation if inspect.isclass(annotation) and issubclass(annotation, BaseModel) else None


def _type_text(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f"`{v}`" for v in get_args(annotation))
    if origin in (Union, getattr(__import__("types"), "UnionType", None)):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(_type_text(a) for a in parts)
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        inner = _section_model(item)
        return "JSON list of objects" if inner else f"JSON list of {_type_text(item)}"
    if origin is dict:
        return "JSON object"
    if get_origin(annotation) is not None and hasattr(annotation, "__metadata__"):
        return _type_text(get_args(annotation)[0])
    if inspect.isclass(annotation) and issubclass(annotation, Enum):
        return " \\| ".join(f"`{m.name.lower()}`" for m in annotation)
    if annotation is SecretStr:
        return "secret"
    name = getattr(annotation, "__name__", str(annotation))
    return {
        "str": "text",
        "int": "integer",
        "float": "number",
        "bool": "true/false",
        "Path": "path",
    }.get(name, name)


def _constraints(info: FieldInfo) -> str:
    found = []
    for item in info.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                found.append(f"{sign} {value}")
    return ", ".join(found)


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if value is None:
        return "unset"
    if isinstance(value, Enum):
        return f"`{value.name.lower() if isinstance(value.value, int) else value.value}`"
    if isinstance(value, (list, dict)):
        return f"`{json.dumps(value, default=str)}`" if value else "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def settings_rows(model: type[BaseModel] = Settings, prefix: str = ENV_PREFIX) -> list[str]:
    """One table row per setting below ``model``: variable, default, type, meaning."""
    rows: list[str] = []
    comments = _field_comments(model)
    sections: list[tuple[str, type[BaseModel]]] = []
    for name, info in model.model_fields.items():
        env = f"{prefix}{name.upper()}"
        inner = _section_model(info.annotation)
        if inner is not None:
            sections.append((f"{env}__", inner))
            continue
        kind = _type_text(info.annotation)
        limits = _constraints(info)
        kind = f"{kind} ({limits})" if limits else kind
        meaning = comments.get(name, "").replace("|", "\\|")
        rows.append(f"| `{env}` | {_default(info)} | {kind} | {meaning} |")
    for sub_prefix, inner in sections:
        rows.extend(settings_rows(inner, sub_prefix))
    return rows


def config_reference() -> str:
    """The table of every setting, as environment variables."""
    header = ["| variable | default | type | meaning |", "|---|---|---|---|"]
    return "\n".join(header + settings_rows()) + "\n"


# ---------------------------------------------------------------- main


GENERATED = ((README, "mcp-tools", mcp_tools_table), (CONFIGURATION, "settings", config_reference))


def stale() -> list[str]:
    """The generated sections whose text differs from what the code gives now."""
    return [
        f"{path.relative_to(REPO)}: {name}"
        for path, name, make in GENERATED
        if section(path.read_text(encoding="utf-8"), name) != make()
    ]


def main() -> None:
    """Rewrite every generated section."""
    for path, name, make in GENERATED:
        text = path.read_text(encoding="utf-8")
        path.write_text(replace_section(text, name, make()), encoding="utf-8")


if __name__ == "__main__":
    main()
