"""Memory as tools for a model: definitions in the OpenAI function-calling shape and a
dispatcher that runs the model's tool calls against a client.

The tools (the agent, session and working-memory scope come from a
:class:`ToolContext`, never from the model):

``remember``               store a long-term memory.
``recall``                 search long-term memory.
``set_memory``             write a keyed memory (``/user/preference/style``); null deletes.
``update_working_memory``  merge fields into the task's working memory.
``record``                 append messages to the current session (short-term memory).
``retrieve``               read back: ``source="session"`` the current session's window
                           (fixed zone, summary of older turns, recent turns);
                           ``source="memory"`` long-term memories matching ``query``.

>>> tools = MemoryTools(client, ToolContext(agent_id="demo", session_id="s1"))  # doctest: +SKIP
>>> response = llm.chat(messages, tools=tools.definitions)                     # doctest: +SKIP
>>> for call in response.tool_calls:                                           # doctest: +SKIP
...     output = tools.handle_tool_call(call.function.name, call.function.arguments)

``handle_tool_call`` returns a JSON string for the tool message. Bad arguments and
failed calls come back as ``{"error": ...}`` so the model can correct itself; an
unknown tool name raises :class:`UnknownToolError` (the framework routed wrongly).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memoryd_client.core import Unary
from memoryd_client.errors import MemorydError
from memoryd_client.ops import agent_state, keys, memories
from memoryd_client.results import Recalled, SessionWindow

if TYPE_CHECKING:
    from memoryd_client.aio import AsyncMemorydClient
    from memoryd_client.client import MemorydClient

JSON = dict[str, Any]
MEMORY_TYPES = ["preference", "fact", "pattern", "skill", "episode"]
ROLES = ["user", "assistant", "system", "tool"]


def _tool(name: str, description: str, properties: JSON, required: list[str]) -> JSON:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_TAGS = {"type": "array", "items": {"type": "string"}, "description": "Short labels."}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 20, "description": "Most results (5)."}

TOOLS: dict[str, JSON] = {
    "remember": _tool(
        "remember",
        "Store a fact, preference, pattern, skill or episode in long-term memory so it "
        "can be recalled in later conversations.",
        {
            "content": {"type": "string", "description": "One self-contained statement."},
            "memory_type": {"type": "string", "enum": MEMORY_TYPES},
            "tags": _TAGS,
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        ["content"],
    ),
    "recall": _tool(
        "recall",
        "Search long-term memory for what is relevant to a query; best matches first.",
        {"query": {"type": "string"}, "limit": _LIMIT, "tags": _TAGS},
        ["query"],
    ),
    "set_memory": _tool(
        "set_memory",
        "Write a value under a key path like /user/preference/style (last write wins). "
        "A null value deletes the key.",
        {
            "key": {"type": "string", "pattern": "^/", "description": "Starts with /."},
            "value": {"description": "Any JSON value; null deletes the key."},
        },
        ["key", "value"],
    ),
    "update_working_memory": _tool(
        "update_working_memory",
        "Update the current task's working memory (its state between steps): the given "
        "fields are merged in, or replace everything with replace=true.",
        {
            "updates": {"type": "object", "description": "Fields to set."},
            "replace": {"type": "boolean", "description": "Replace instead of merge."},
        },
        ["updates"],
    ),
    "record": _tool(
        "record",
        "Append messages to the current session's log (short-term memory).",
        {
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "role": {"type": "string", "enum": ROLES},
                        "content": {"type": "string"},
                    },
                    "required": ["role", "content"],
                    "additionalProperties": False,
                },
            }
        },
        ["messages"],
    ),
    "retrieve": _tool(
        "retrieve",
        'Read memory back. source="session": the current session (pinned instructions, '
        'a summary of older turns and the recent turns). source="memory": long-term '
        "memories matching query.",
        {
            "source": {"type": "string", "enum": ["session", "memory"]},
            "query": {"type": "string", "description": 'Required with source="memory".'},
            "limit": _LIMIT,
            "token_budget": {"type": "integer", "minimum": 16},
        },
        ["source"],
    ),
}
TOOL_NAMES = tuple(TOOLS)


def tool_definitions(names: Sequence[str] = TOOL_NAMES) -> list[JSON]:
    """The definitions to hand to a model (``tools=`` of an OpenAI-style chat call)."""
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise UnknownToolError(unknown[0])
    return [json.loads(json.dumps(TOOLS[n])) for n in names]  # copies: callers may edit


class UnknownToolError(KeyError):
    """A tool name that is not one of :data:`TOOL_NAMES`."""


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Whose memory the tools use; ``session_id`` is needed by record and retrieve."""

    agent_id: str
    session_id: str = ""
    thread_id: str = ""
    resource_id: str = ""
    namespace: str = ""


# ---------------------------------------------------------------------- planning


def _args(arguments: str | Mapping[str, Any]) -> JSON:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"arguments are not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ToolArgumentError("arguments must be a JSON object")
    return parsed


def _get(args: JSON, name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    if name not in args or args[name] is None:
        if default is _REQUIRED:
            raise ToolArgumentError(f"{name} is required")
        return default
    value = args[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ToolArgumentError(f"{name} has the wrong type ({type(value).__name__})")
    return value


_REQUIRED: Any = object()


def _hits(hits: Recalled) -> JSON:
    return {
        "memories": [
            {
                "id": h.memory.id,
                "content": h.memory.content,
                "memory_type": h.memory.memory_type,
                "tags": list(h.memory.tags),
                "score": round(h.score, 4),
            }
            for h in hits
        ]
    }


def _window(w: SessionWindow) -> JSON:
    return {
        "pinned": [{"kind": e.kind, "content": e.content} for e in w.fixed_zone],
        "summary": w.summary,
        "messages": [{"role": m.role, "content": m.content} for m in w.recent],
        "tokens_used": w.tokens_used,
    }


def _mapped(call: Unary[Any], render: Any) -> Unary[JSON]:
    return Unary(
        call.service,
        call.method,
        call.request,
        lambda r: render(call.parse(r)),
        idempotent=call.idempotent,
    )


def plan_tool_call(
    context: ToolContext, name: str, arguments: str | Mapping[str, Any]
) -> Unary[JSON]:
    """The call a tool call makes, with a JSON-ready result; raises ToolArgumentError or
    UnknownToolError. Pure: nothing is sent."""
    if name not in TOOLS:
        raise UnknownToolError(name)
    args = _args(arguments)
    known = set(TOOLS[name]["function"]["parameters"]["properties"])
    extra = sorted(set(args) - known)
    if extra:
        raise ToolArgumentError(f"unknown argument {extra[0]!r}; expected {sorted(known)}")
    agent, ns = context.agent_id, context.namespace
    call: Unary[Any]
    if name == "remember":
        call = memories.remember(
            agent,
            _get(args, "content", str, _REQUIRED),
            memory_type=_get(args, "memory_type", str, "fact"),
            tags=_get(args, "tags", list, []),
            importance=_get(args, "importance", (int, float)),
            namespace=ns,
        )
        return _mapped(call, lambda r: {"id": r.memory.id, "deduplicated": r.deduplicated})
    if name == "recall" or (name == "retrieve" and args.get("source") == "memory"):
        query = _get(args, "query", str, _REQUIRED)
        limit = _get(args, "limit", int, 5)
        tags = _get(args, "tags", list, []) if name == "recall" else []
        return _mapped(
            memories.recall(agent, query, limit=limit, tags=tags, namespace=ns or None), _hits
        )
    if name == "set_memory":
        if "value" not in args:
            raise ToolArgumentError("value is required (null deletes the key)")
        # The model decided this write: its source is the agent (a source is required).
        call = keys.set_memory(
            agent, _get(args, "key", str, _REQUIRED), args["value"], source={"kind": "agent"}
        )
        return _mapped(call, lambda e: {"key": e.key, "version": e.version, "deleted": not e.valid})
    if name == "update_working_memory":
        call = agent_state.set_working_memory(
            agent,
            _get(args, "updates", dict, _REQUIRED),
            thread_id=context.thread_id,
            resource_id=context.resource_id,
            replace=_get(args, "replace", bool, False),
        )
        return _mapped(call, lambda w: {"working_memory": w.content, "version": w.version})
    if not context.session_id:
        raise ToolArgumentError(f"{name} needs a session: the ToolContext has no session_id")
    if name == "record":
        messages = _get(args, "messages", list, _REQUIRED)
        call = agent_state.append_messages(agent, context.session_id, messages)
        return _mapped(
            call, lambda a: {"message_count": a.message_count, "compressed": a.compressed}
        )
    source = _get(args, "source", str, _REQUIRED)
    if source != "session":
        raise ToolArgumentError('source must be "session" or "memory"')
    call = agent_state.get_session_window(
        agent, context.session_id, token_budget=_get(args, "token_budget", int)
    )
    return _mapped(call, _window)


def error_result(error: Exception) -> JSON:
    """What the model sees when a tool call fails."""
    if isinstance(error, MemorydError):
        detail: JSON = {"error": error.code_name, "message": error.message}
        if error.field_violations:
            detail["fields"] = {v.field: v.description for v in error.field_violations}
        return detail
    return {"error": "INVALID_ARGUMENT", "message": str(error)}


def _dumps(result: JSON) -> str:
    return json.dumps(result, ensure_ascii=False, default=str)


class MemoryTools:
    """The tools bound to a sync client and a context."""

    def __init__(
        self,
        client: MemorydClient,
        context: ToolContext,
        names: Sequence[str] = TOOL_NAMES,
    ) -> None:
        self.client, self.context = client, context
        self.definitions = tool_definitions(names)
        self.names = tuple(names)

    def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run one tool call; returns the JSON string for the tool message."""
        if name not in self.names:
            raise UnknownToolError(name)
        try:
            return _dumps(self.client.run(plan_tool_call(self.context, name, arguments)))
        except (ToolArgumentError, MemorydError) as error:
            return _dumps(error_result(error))


class AsyncMemoryTools:
    """The tools bound to an async client and a context."""

    def __init__(
        self,
        client: AsyncMemorydClient,
        context: ToolContext,
        names: Sequence[str] = TOOL_NAMES,
    ) -> None:
        self.client, self.context = client, context
        self.definitions = tool_definitions(names)
        self.names = tuple(names)

    async def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run one tool call; returns the JSON string for the tool message."""
        if name not in self.names:
            raise UnknownToolError(name)
        try:
            return _dumps(await self.client.run(plan_tool_call(self.context, name, arguments)))
        except (ToolArgumentError, MemorydError) as error:
            return _dumps(error_result(error))
