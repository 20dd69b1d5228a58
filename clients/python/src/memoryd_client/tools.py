"""Memory as tools for a model: definitions in the OpenAI function-calling shape and a
dispatcher that runs the model's tool calls against a client.

The tools come from the one table of :mod:`memoryd_client.tool_table`, which the MCP
server (``memoryd mcp`` and the daemon's Streamable HTTP endpoint) serves too. The
default set (:data:`TOOL_NAMES`):

``remember``               store a long-term memory.
``recall``                 search long-term memory.
``set_memory``             write a keyed memory (``/user/preference/style``) with its
                           source (``"user"``, ``"tool:web_search"``, ...); null deletes.
``update_working_memory``  merge fields into the task's working memory (``ttl_seconds``).
``read_agent_memory``      read the agent's profile (agent.md) and its etag.
``update_agent_memory``    replace agent.md, conditional on that etag.
``record``                 keep messages in long-term memory (AgentScope's ``record``).
``retrieve``               read back: ``source="memory"`` long-term memories matching
                           ``query``; ``source="session"`` the current session's window.

AgentScope's agent_control pair, by its own names and parameters
(:data:`AGENT_CONTROL_TOOLS`):

``record_to_memory``       ``thinking`` and ``content[]``: each item kept as a fact.
``retrieve_from_memory``   ``keywords[]``: each recalled, the hits merged, best first.

Every other tool of the table (``forget``, ``get_memory_key``, ``list_memory_keys``,
``build_snapshot``, ``get_session_attachment``, ...) can be asked for by name. Whose memory they use (agent,
session, working-memory scope) comes from a :class:`ToolContext`, never from the model.

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
from typing import TYPE_CHECKING, Any

from memoryd_client.core import Unary
from memoryd_client.errors import MemorydError, NotFoundError
from memoryd_client.tool_args import check_arguments
from memoryd_client.tool_calls import AsyncToolRunner, ToolContext
from memoryd_client.tool_calls import plan_tool_call as _plan
from memoryd_client.tool_table import AGENT_CONTROL_TOOLS, TOOLS, ToolArgumentError

if TYPE_CHECKING:
    from memoryd_client.aio import AsyncMemorydClient
    from memoryd_client.client import MemorydClient

JSON = dict[str, Any]
TOOL_NAMES = (
    "remember",
    "recall",
    "set_memory",
    "update_working_memory",
    "read_agent_memory",
    "update_agent_memory",
    "record",
    "retrieve",
)
#: Tools that take several calls: served by AsyncMemoryTools (and MCP) only.
_ASYNC_ONLY = frozenset({"memory"})
#: Tools of more than one call: not one Unary (plan_tool_call), served by both
#: dispatchers.
_SEVERAL_CALLS = frozenset({"retrieve_from_memory"})


class UnknownToolError(KeyError):
    """A tool name that is not one of the table's (or not one this dispatcher serves)."""


def tool_definitions(names: Sequence[str] = TOOL_NAMES) -> list[JSON]:
    """The definitions to hand to a model (``tools=`` of an OpenAI-style chat call)."""
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise UnknownToolError(unknown[0])
    return [TOOLS[n].openai() for n in names]


def _args(arguments: str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(arguments, Mapping):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ToolArgumentError("", f"arguments are not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ToolArgumentError("", "arguments must be a JSON object")
    return parsed


def plan_tool_call(
    context: ToolContext, name: str, arguments: str | Mapping[str, Any]
) -> Unary[JSON]:
    """The call a model's tool call makes, with a JSON-ready result; raises
    ToolArgumentError or UnknownToolError (also for a tool of several calls). Pure:
    nothing is sent."""
    if name not in TOOLS or name in _ASYNC_ONLY or name in _SEVERAL_CALLS:
        raise UnknownToolError(name)
    checked = check_arguments(name, _args(arguments), with_context=False)
    return _plan(context, name, checked).call


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


def _checked_names(names: Sequence[str], *, sync: bool) -> tuple[str, ...]:
    for name in names:
        if name not in TOOLS or (sync and name in _ASYNC_ONLY):
            raise UnknownToolError(name)
    return tuple(names)


class MemoryTools:
    """The tools bound to a sync client and a context."""

    def __init__(
        self,
        client: MemorydClient,
        context: ToolContext,
        names: Sequence[str] = TOOL_NAMES,
    ) -> None:
        self.client, self.context = client, context
        self.names = _checked_names(names, sync=True)
        self.definitions = tool_definitions(self.names)

    def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run one tool call; returns the JSON string for the tool message."""
        if name not in self.names:
            raise UnknownToolError(name)
        try:
            checked = check_arguments(name, _args(arguments), with_context=False)
            plan = _plan(self.context, name, checked)
            try:
                return _dumps(plan.result([self.client.run(call) for call in plan.calls]))
            except NotFoundError:
                if plan.missing is None:
                    raise
                return _dumps(dict(plan.missing))
        except (ToolArgumentError, MemorydError) as error:
            return _dumps(error_result(error))


class AsyncMemoryTools:
    """The tools bound to an async client and a context (the ``memory`` file tool too)."""

    def __init__(
        self,
        client: AsyncMemorydClient,
        context: ToolContext,
        names: Sequence[str] = TOOL_NAMES,
    ) -> None:
        self.client, self.context = client, context
        self.names = _checked_names(names, sync=False)
        self.definitions = tool_definitions(self.names)
        self._runner = AsyncToolRunner(client, context)

    async def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any]) -> str:
        """Run one tool call; returns the JSON string for the tool message."""
        if name not in self.names:
            raise UnknownToolError(name)
        try:
            return _dumps(await self._runner.run(name, _args(arguments), with_context=False))
        except (ToolArgumentError, MemorydError) as error:
            return _dumps(error_result(error))


__all__ = [
    "AGENT_CONTROL_TOOLS",
    "TOOL_NAMES",
    "AsyncMemoryTools",
    "MemoryTools",
    "ToolArgumentError",
    "ToolContext",
    "UnknownToolError",
    "error_result",
    "plan_tool_call",
    "tool_definitions",
]
