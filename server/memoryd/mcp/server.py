"""memoryd's MCP server: the tool table's tools, the agent profile and default read as
resources, and the ``memory_context`` prompt, over a :class:`ToolBackend`.

Two backends serve it: the daemon's own (mcp/tools.py, every tool one or more
operations through the door, for the Streamable HTTP endpoint) and the stdio bridge's
(memoryd.cli.mcp_bridge, the Python client over gRPC). Arguments are checked against
the table first: a bad one is a tool error naming the field (``isError``), never a
protocol error, and nothing is stored. Errors of the call itself (not found, denied,
a failed precondition) are tool errors too, with their status.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from memoryd import __version__
from memoryd_client.tool_args import check_arguments
from memoryd_client.tool_table import MCP_TOOLS, TOOLS, ToolArgumentError

JSON = dict[str, Any]
PROFILE_URI = "memory://agents/{agent}/agent.md"
DEFAULT_READ_URI = "memory://agents/{agent}/default-read"
PROMPT = "memory_context"
#: W3C trace context read from a tool call's ``_meta``.
PROPAGATION_KEYS = ("traceparent", "tracestate")
INSTRUCTIONS = (
    "memoryd is this agent's memory. Call recall (or build_snapshot) before answering "
    "about the user or earlier work; remember durable facts and preferences; keep "
    "structured facts under keys with set_memory; keep task state in working memory."
)


@dataclass(frozen=True, slots=True)
class McpRequest:
    """What the transport tells about one MCP request."""

    #: HTTP headers, lower-case names (empty over stdio).
    headers: Sequence[tuple[str, str]] = ()
    peer: str = ""
    #: The request's ``_meta`` (traceparent, ...).
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def trace_parent(self) -> dict[str, str] | None:
        found = {
            k: str(self.meta[k]) for k in PROPAGATION_KEYS if isinstance(self.meta.get(k), str)
        }
        return found or None


class ToolFailure(Exception):
    """A tool call that failed for a reason the caller can act on."""

    def __init__(self, code: str, message: str, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = dict(fields or {})


class ToolBackend(Protocol):
    """Runs the table's tools for one server."""

    @property
    def default_agent(self) -> str: ...

    async def call(self, name: str, arguments: JSON, request: McpRequest) -> JSON:
        """The structured result of tool ``name``; raises ToolFailure or
        ToolArgumentError."""


def _error(
    code: str, message: str, fields: Mapping[str, str] | None = None
) -> types.CallToolResult:
    detail: JSON = {"error": code, "message": message}
    if fields:
        detail["fields"] = dict(fields)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(detail, ensure_ascii=False))],
        is_error=True,
    )


def _request_of(ctx: ServerRequestContext[Any, Any]) -> McpRequest:
    http = ctx.request
    headers: list[tuple[str, str]] = []
    peer = ""
    if http is not None and hasattr(http, "headers"):
        headers = [(k.lower(), v) for k, v in http.headers.items()]
        client = getattr(http, "client", None)
        if client is not None:
            peer = f"ipv4:{client.host}:{client.port}"
    return McpRequest(headers=headers, peer=peer, meta=dict(ctx.meta or {}))


async def run_tool(
    backend: ToolBackend, name: str, arguments: Mapping[str, Any] | None, request: McpRequest
) -> types.CallToolResult:
    """One tool call as its MCP result: structured content, or a tool error."""
    if name not in MCP_TOOLS:
        return _error("NOT_FOUND", f"unknown tool {name!r}")
    try:
        checked = check_arguments(name, arguments or {})
        result = await backend.call(name, checked, request)
    except ToolArgumentError as exc:
        fields = {exc.field: exc.reason} if exc.field else None
        return _error("INVALID_ARGUMENT", f"invalid argument: {exc}", fields)
    except ToolFailure as exc:
        return _error(exc.code, exc.message, exc.fields)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


def _tool(name: str) -> types.Tool:
    spec = TOOLS[name]
    hints = spec.annotations()
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema(),
        annotations=types.ToolAnnotations(
            title=hints["title"],
            read_only_hint=hints["readOnlyHint"],
            destructive_hint=hints["destructiveHint"],
            idempotent_hint=hints["idempotentHint"],
            open_world_hint=hints["openWorldHint"],
        ),
    )


def _agent_of(uri: str) -> tuple[str, str]:
    """("agent", "agent.md" | "default-read") of a memory:// resource URI."""
    prefix = "memory://agents/"
    if not uri.startswith(prefix):
        raise ToolFailure("NOT_FOUND", f"no resource {uri!r}")
    agent, _, leaf = uri[len(prefix) :].partition("/")
    if not agent or leaf not in ("agent.md", "default-read"):
        raise ToolFailure("NOT_FOUND", f"no resource {uri!r}")
    return unquote(agent), leaf


def build_server(backend: ToolBackend) -> Server[Any]:
    """The MCP server over ``backend`` (one per listener or bridge process)."""
    # Built once: the SDK also looks a tool's input schema up on every call.
    tools = types.ListToolsResult(tools=[_tool(n) for n in MCP_TOOLS])
    input_schemas = {n: TOOLS[n].input_schema() for n in MCP_TOOLS}

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return tools

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await run_tool(backend, params.name, params.arguments, _request_of(ctx))

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListResourcesResult:
        agent = backend.default_agent
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=PROFILE_URI.format(agent=agent),
                    name=f"{agent}/agent.md",
                    description="The agent's profile document (persona, rules, what it learned).",
                    mime_type="text/markdown",
                ),
                types.Resource(
                    uri=DEFAULT_READ_URI.format(agent=agent),
                    name=f"{agent}/default-read",
                    description="The agent's keyed memory, one compact line per key.",
                    mime_type="text/plain",
                ),
            ]
        )

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=PROFILE_URI, name="agent.md", mime_type="text/markdown"
                ),
                types.ResourceTemplate(
                    uri_template=DEFAULT_READ_URI, name="default read", mime_type="text/plain"
                ),
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        agent, leaf = _agent_of(uri)
        request = _request_of(ctx)
        if leaf == "agent.md":
            profile = await backend.call("read_agent_memory", {"agent_id": agent}, request)
            text, mime = str(profile["content"]), "text/markdown"
        else:
            read = await backend.call("default_read", {"agent_id": agent}, request)
            text, mime = str(read["text"]), "text/plain"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type=mime)]
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT,
                    title="Memory context",
                    description="What memoryd knows that is relevant to a message or task "
                    "(a token-budgeted snapshot), to put before the conversation.",
                    arguments=[
                        types.PromptArgument(
                            name="trigger", description="The message or task.", required=True
                        ),
                        types.PromptArgument(
                            name="agent_id", description="Whose memory.", required=False
                        ),
                        types.PromptArgument(
                            name="session_id", description="The session.", required=False
                        ),
                    ],
                )
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise ToolFailure("NOT_FOUND", f"no prompt {params.name!r}")
        arguments = {k: v for k, v in (params.arguments or {}).items() if v}
        checked = check_arguments("build_snapshot", arguments)
        snapshot = await backend.call("build_snapshot", checked, _request_of(ctx))
        return types.GetPromptResult(
            description="memoryd snapshot",
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=str(snapshot["text"]))
                )
            ],
        )

    server: Server[Any] = Server(
        "memoryd",
        version=__version__,
        title="memoryd",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    # memoryd traces a tool call itself (the door's spans, parented on the call's _meta
    # traceparent, exported only with tracing.enabled); the SDK's own span per message
    # would go to the global no-op provider and cost ~0.2 ms a call.
    server.middleware.clear()
    return server
