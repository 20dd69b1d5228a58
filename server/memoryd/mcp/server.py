"""memoryd's MCP server: the tool table's tools, the agent profile and default read as
resources, and the ``memory_context`` prompt, over a :class:`ToolBackend`.

Two backends serve it: the daemon's own (mcp/tools.py, every tool one or more
operations through the door, for the Streamable HTTP endpoint) and the stdio bridge's
(memoryd.cli.mcp_bridge, the Python client over gRPC). Arguments are checked against
the table first: a bad one is a tool error naming the field (``isError``), never a
protocol error, and nothing is stored. Errors of the call itself (not found, denied,
a failed precondition) are tool errors too, with their status. A failed resource read
or prompt is a JSON-RPC error with the code mcp/errors.py assigns its status.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.inbound import find_invalid_x_mcp_header, x_mcp_header_map

from memoryd import __version__
from memoryd.domain.changes import ChangeKind
from memoryd.mcp.errors import ToolFailure, invalid_params, jsonrpc_error
from memoryd.mcp.trace import PROMPTS_GET, RESOURCES_READ, TOOLS_CALL, request_span
from memoryd.observability.tracing import NO_TRACING, SERVER_FAULTS, Tracing
from memoryd_client.tool_args import check_arguments
from memoryd_client.tool_table import MCP_TOOLS, TOOLS, ToolArgumentError

JSON = dict[str, Any]
AGENTS_URI = "memory://agents/"
PROFILE_URI = AGENTS_URI + "{agent}/agent.md"
DEFAULT_READ_URI = AGENTS_URI + "{agent}/default-read"
#: The changes that update each resource a subscription follows, by URI template.
UPDATES: Mapping[str, frozenset[ChangeKind]] = {
    DEFAULT_READ_URI: frozenset({ChangeKind.KEY_SET, ChangeKind.KEY_DELETED}),
    PROFILE_URI: frozenset({ChangeKind.PROFILE_SET, ChangeKind.PROFILE_DELETED}),
}


def followed_resource(uri: str) -> tuple[str, frozenset[ChangeKind]] | None:
    """The agent of a resource subscriptions follow (``memory://agents/<agent>/
    default-read`` or ``.../agent.md``) and the changes that update it (None: not one)."""
    for template, kinds in UPDATES.items():
        prefix, suffix = template.split("{agent}")
        if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix + suffix):
            agent = uri[len(prefix) : -len(suffix)]
            return (agent, kinds) if "/" not in agent else None
    return None


PROMPT = "memory_context"
#: W3C trace context read from a tool call's ``_meta``.
PROPAGATION_KEYS = ("traceparent", "tracestate")
#: The ASGI scope extension holding the connection's verified client certificate, as
#: grpc's auth context properties (memoryd.mcp.tls fills it in mtls mode).
CLIENT_CERTIFICATE = "memoryd.client_certificate"
#: The ``subscriptions/listen`` handler (resource subscriptions).
Listen = Callable[
    [ServerRequestContext[Any, Any], types.SubscriptionsListenRequestParams],
    Awaitable[types.SubscriptionsListenResult],
]
#: grpc auth-context shape: property name -> values.
AuthContext = Mapping[str, Sequence[bytes]]
INSTRUCTIONS = (
    "memoryd is this agent's memory. Call recall (or build_snapshot) before answering "
    "about the user or earlier work; remember durable facts and preferences; keep "
    "structured facts under keys with set_memory; keep task state in working memory."
)


@dataclass(frozen=True, slots=True)
class _Resource:
    """A resource every agent has: its URI, what it is, and the tool that reads it."""

    uri_template: str
    #: Its name among the resource templates.
    template_name: str
    mime_type: str
    description: str
    #: The tool whose result holds it, and that result's field with its text.
    tool: str
    text_field: str

    @property
    def leaf(self) -> str:
        """The URI's last segment (``agent.md``)."""
        return self.uri_template.rpartition("/")[2]


_RESOURCES = {
    r.leaf: r
    for r in (
        _Resource(
            PROFILE_URI,
            "agent.md",
            "text/markdown",
            "The agent's profile document (persona, rules, what it learned).",
            "read_agent_memory",
            "content",
        ),
        _Resource(
            DEFAULT_READ_URI,
            "default read",
            "text/plain",
            "The agent's keyed memory, one compact line per key.",
            "default_read",
            "text",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class McpRequest:
    """What the transport tells about one MCP request."""

    #: HTTP headers, lower-case names (empty over stdio).
    headers: Sequence[tuple[str, str]] = ()
    peer: str = ""
    #: The request's ``_meta`` (traceparent, ...).
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: The connection's verified client certificate (mtls), as grpc's auth context.
    auth_context: AuthContext = field(default_factory=dict)
    #: The JSON-RPC request id and the session's protocol version (for its span).
    rpc_id: str = ""
    protocol_version: str = ""

    @property
    def trace_parent(self) -> dict[str, str] | None:
        found = {
            k: str(self.meta[k]) for k in PROPAGATION_KEYS if isinstance(self.meta.get(k), str)
        }
        return found or None


class ToolBackend(Protocol):
    """Runs the table's tools for one server."""

    @property
    def default_agent(self) -> str: ...

    async def call(self, name: str, arguments: JSON, request: McpRequest) -> JSON:
        """The structured result of tool ``name``; raises ToolFailure or
        ToolArgumentError."""


def _result(content: JSON, *, error: bool = False) -> JSON:
    """A CallToolResult as its wire dict. The SDK validates and shapes every result for
    the wire anyway; a model built here would be validated, dumped, validated and dumped
    again (a tenth of the endpoint's CPU per call, measured)."""
    text = {"type": "text", "text": json.dumps(content, ensure_ascii=False)}
    # resultType: required from protocol 2026-07-28; the SDK drops it for older ones.
    if error:
        return {"content": [text], "isError": True, "resultType": "complete"}
    return {
        "content": [text],
        "structuredContent": content,
        "isError": False,
        "resultType": "complete",
    }


def _error(code: str, message: str, fields: Mapping[str, str] | None = None) -> JSON:
    detail: JSON = {"error": code, "message": message}
    if fields:
        detail["fields"] = dict(fields)
    return _result(detail, error=True)


def client_certificate(scope: Mapping[str, Any]) -> AuthContext:
    """The client certificate an ASGI ``scope`` carries (empty without one)."""
    extensions = scope.get("extensions") or {}
    found: AuthContext = extensions.get(CLIENT_CERTIFICATE) or {}
    return found


def request_of(ctx: ServerRequestContext[Any, Any]) -> McpRequest:
    """What the transport tells about the request ``ctx`` serves."""
    # The HTTP request's ASGI scope (None over stdio), read as it is: names are lower
    # case, and Starlette's header views cost more than the tool's own work.
    scope: Mapping[str, Any] = getattr(ctx.request, "scope", None) or {}
    client = scope.get("client")
    return McpRequest(
        headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", ())],
        peer=f"ipv4:{client[0]}:{client[1]}" if client else "",
        meta=dict(ctx.meta or {}),
        auth_context=client_certificate(scope),
        rpc_id="" if ctx.request_id is None else str(ctx.request_id),
        protocol_version=ctx.protocol_version or "",
    )


def _traced(
    tracing: Tracing, request: McpRequest, method: str, target: str = "", uri: str = ""
) -> AbstractContextManager[None]:
    """The request's span around the block (nothing with tracing off)."""
    if not tracing.enabled:
        return _UNTRACED
    return _span(tracing, request, method, target, uri)


_UNTRACED = nullcontext()


@contextmanager
def _span(
    tracing: Tracing, request: McpRequest, method: str, target: str, uri: str
) -> Iterator[None]:
    """A tool failure or a bad argument escaping the block is recorded by its status
    code (an ERROR status only for a server fault); anything else as the span records
    an exception."""
    caught: ToolFailure | ToolArgumentError | None = None
    with request_span(
        tracing,
        method,
        target=target,
        parent=request.trace_parent,
        rpc_id=request.rpc_id,
        protocol_version=request.protocol_version,
        resource_uri=uri,
    ) as span:
        try:
            yield
        except (ToolFailure, ToolArgumentError) as exc:
            code = exc.code if isinstance(exc, ToolFailure) else "INVALID_ARGUMENT"
            span.fail(code, fault=code in SERVER_FAULTS)
            caught = exc
    if caught is not None:
        raise caught


async def run_tool(
    backend: ToolBackend,
    name: str,
    arguments: Mapping[str, Any] | None,
    request: McpRequest,
    tracing: Tracing = NO_TRACING,
) -> JSON:
    """One tool call as its MCP result (a CallToolResult's wire dict): structured
    content, or a tool error. With ``tracing`` on, the call is one span (mcp/trace.py)
    and the operations the backend runs for it are its children. An unknown tool is
    a protocol error (Invalid params, as the specification's example)."""
    if name not in MCP_TOOLS:
        raise invalid_params(f"Unknown tool: {name!r}")
    try:
        with _traced(tracing, request, TOOLS_CALL, name):
            checked = check_arguments(name, arguments or {})
            result = await backend.call(name, checked, request)
    except ToolArgumentError as exc:
        fields = {exc.field: exc.reason} if exc.field else None
        return _error("INVALID_ARGUMENT", f"invalid argument: {exc}", fields)
    except ToolFailure as exc:
        return _error(exc.code, exc.message, exc.fields)
    return _result(result)


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


@contextmanager
def _as_jsonrpc_errors(uri: str = "") -> Iterator[None]:
    """A resource read's or prompt's failure as its JSON-RPC error (mcp/errors.py)."""
    try:
        yield
    except (ToolFailure, ToolArgumentError) as exc:
        raise jsonrpc_error(exc, uri=uri) from None


def _resource_of(uri: str) -> tuple[str, _Resource]:
    """The agent and the resource a memory:// resource URI names."""
    if not uri.startswith(AGENTS_URI):
        raise ToolFailure("NOT_FOUND", f"no resource {uri!r}")
    agent, _, leaf = uri[len(AGENTS_URI) :].partition("/")
    resource = _RESOURCES.get(leaf)
    if not agent or resource is None:
        raise ToolFailure("NOT_FOUND", f"no resource {uri!r}")
    return unquote(agent), resource


def header_schemas(schemas: Mapping[str, JSON]) -> dict[str, JSON]:
    """Of tools' input ``schemas``, those declaring ``Mcp-Param-*`` headers (none of the
    table's do).

    The SDK looks a called tool's input schema up only to check those headers against
    the arguments, walking the whole schema twice on every call; for a tool without
    ``x-mcp-header`` annotations there is nothing to check, so none is handed over.
    """
    return {
        name: schema
        for name, schema in schemas.items()
        if find_invalid_x_mcp_header(schema) is None and x_mcp_header_map(schema)
    }


def build_server(
    backend: ToolBackend, *, tracing: Tracing = NO_TRACING, on_listen: Listen | None = None
) -> Server[Any]:
    """The MCP server over ``backend`` (one per listener or bridge process). With
    ``tracing`` on, each tool call, resource read and prompt is a span (the parent of the
    operations it runs; ``backend`` must run them under the current span).
    ``on_listen`` serves ``subscriptions/listen`` (resource subscriptions: the stdio
    bridge's, memoryd.cli.mcp_subscriptions); None: not offered."""
    # Built once: the SDK also looks a tool's input schema up on every call.
    tools = types.ListToolsResult(tools=[_tool(n) for n in MCP_TOOLS])
    with_headers = header_schemas({n: TOOLS[n].input_schema() for n in MCP_TOOLS})

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return tools

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> JSON:
        return await run_tool(backend, params.name, params.arguments, request_of(ctx), tracing)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListResourcesResult:
        agent = backend.default_agent
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri_template.format(agent=agent),
                    name=f"{agent}/{r.leaf}",
                    description=r.description,
                    mime_type=r.mime_type,
                )
                for r in _RESOURCES.values()
            ]
        )

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=r.uri_template, name=r.template_name, mime_type=r.mime_type
                )
                for r in _RESOURCES.values()
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        request = request_of(ctx)
        with _as_jsonrpc_errors(uri), _traced(tracing, request, RESOURCES_READ, uri=uri):
            agent, resource = _resource_of(uri)
            read = await backend.call(resource.tool, {"agent_id": agent}, request)
            text = str(read[resource.text_field])
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type=resource.mime_type)]
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
            raise invalid_params(f"Unknown prompt: {params.name!r}")
        arguments = {k: v for k, v in (params.arguments or {}).items() if v}
        if not arguments.get("trigger"):  # required by the prompt, optional for the tool
            raise invalid_params("invalid argument: trigger is required", {"trigger": "required"})
        request = request_of(ctx)
        with _as_jsonrpc_errors(), _traced(tracing, request, PROMPTS_GET, PROMPT):
            checked = check_arguments("build_snapshot", arguments)
            snapshot = await backend.call("build_snapshot", checked, request)
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
        get_tool_input_schema=with_headers.get,
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_subscriptions_listen=on_listen,
    )
    # memoryd traces a tool call itself (its span and the door's below it, exported only
    # with tracing.enabled); the SDK's own span per message would go to the global
    # no-op provider and cost ~0.2 ms a call.
    server.middleware.clear()
    # Registered apart: on_call_tool is typed to return a CallToolResult model, and
    # call_tool returns its wire dict (see _result).
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return server
