"""memoryctl's `wm`, `profile` and `session` commands: an agent's working state."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from google.protobuf import duration_pb2, json_format, struct_pb2
from google.protobuf.message import Message
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.common import (
    AgentOption,
    JsonOption,
    SessionArg,
    Stub,
    WideOption,
    joined_pages,
    unary,
)
from memoryd.domain.agent_state import FixedZoneKind, MessageRole
from memoryd_client import MemorydError
from memoryd_client.ops.agent_state import session_message
from memoryd_proto.v1 import common_pb2, memory_service_pb2

wm_app = typer.Typer(
    help="Working memory: a JSON object of task state per (thread, resource) scope.",
    no_args_is_help=True,
)
profile_app = typer.Typer(help="The agent profile: its agent.md document.", no_args_is_help=True)
session_app = typer.Typer(
    help="Sessions: the message log of a run, its fixed zone and summary.", no_args_is_help=True
)

ThreadOption = Annotated[str, typer.Option("--thread", "-T", help="The scope's thread_id.")]
ResourceOption = Annotated[str, typer.Option("--resource", "-R", help="The scope's resource_id.")]


def _read(source: str) -> str:
    """The text of a file, or of stdin for '-'."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {source}: {exc.strerror}") from None


def _json_object(text: str, param: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON: {exc}", param_hint=param) from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint=param)
    return value


def _struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


def _duration(seconds: float) -> duration_pb2.Duration:
    out = duration_pb2.Duration()
    out.FromTimedelta(timedelta(seconds=seconds))
    return out


def _scope(thread: str, resource: str) -> common_pb2.WorkingMemoryScope:
    return common_pb2.WorkingMemoryScope(thread_id=thread, resource_id=resource)


def _compact(struct: struct_pb2.Struct) -> str:
    return json.dumps(json_format.MessageToDict(struct), ensure_ascii=False, sort_keys=True)


def _working_detail(wm: memory_service_pb2.WorkingMemory) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    table.add_row("thread", Text(wm.scope.thread_id))
    table.add_row("resource", Text(wm.scope.resource_id))
    table.add_row("version", str(wm.version))
    table.add_row("updated", render.timestamp(wm.updated_at))
    if wm.HasField("expires_at"):
        table.add_row("expires", render.timestamp(wm.expires_at))
    if wm.HasField("json_schema"):
        table.add_row("schema", Text(_compact(wm.json_schema)))
    # The JSON text as stored (1.50 stays 1.50; the Struct carries doubles).
    content = wm.content_json or json.dumps(json_format.MessageToDict(wm.content))
    table.add_row("content", Text(content))
    return table


# ---------------------------------------------------------------- wm


@wm_app.command("set")
def wm_set(
    ctx: typer.Context,
    content: Annotated[
        str, typer.Argument(metavar="JSON", help="A JSON object; '-' reads it from stdin.")
    ],
    agent: AgentOption,
    thread: ThreadOption = "",
    resource: ResourceOption = "",
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the object instead of merging fields.")
    ] = False,
    ttl: Annotated[
        float | None,
        typer.Option(min=0, help="Seconds until it expires, counted from this write (0: never)."),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            metavar="JSON|@FILE",
            help="A JSON Schema every later write must match ('{}' removes it).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write the working memory of a scope (merging top-level fields by default).

    Example: memoryctl wm set '{"step": 2, "goal": "book dentist"}' --thread t1 --agent demo
    """
    text = _read("-") if content == "-" else content
    _json_object(text, "JSON")
    request = memory_service_pb2.SetWorkingMemoryRequest(
        agent_id=agent,
        scope=_scope(thread, resource),
        content_json=text,  # as typed: numbers are not re-encoded
        mode=memory_service_pb2.WORKING_MEMORY_MODE_REPLACE
        if replace
        else memory_service_pb2.WORKING_MEMORY_MODE_MERGE,
    )
    if ttl is not None:
        request.ttl.CopyFrom(_duration(ttl))
    if schema is not None:
        text = _read(schema[1:]) if schema.startswith("@") else schema
        request.json_schema.CopyFrom(_struct(_json_object(text, "--schema")))
    response = unary(ctx, lambda c: c.memory.SetWorkingMemory, request, as_json)
    render.console().print(_working_detail(response.working_memory))


def _scope_command(
    name: str,
    help_text: str,
    request_type: Callable[..., Message],
    stub: Stub,
    show: Callable[[Any], RenderableType],
) -> None:
    """Register ``wm <name>``: one RPC on the scope --thread / --resource names, whose
    response ``show`` renders (get and delete differ only in these)."""

    @wm_app.command(name, help=help_text)
    def command(
        ctx: typer.Context,
        agent: AgentOption,
        thread: ThreadOption = "",
        resource: ResourceOption = "",
        as_json: JsonOption = False,
    ) -> None:
        request = request_type(agent_id=agent, scope=_scope(thread, resource))
        response = unary(ctx, stub, request, as_json)
        render.console().print(show(response))


_scope_command(
    "get",
    "Show the working memory of a scope.\n\nExample: memoryctl wm get --thread t1 --agent demo",
    memory_service_pb2.GetWorkingMemoryRequest,
    lambda c: c.memory.GetWorkingMemory,
    lambda response: _working_detail(response.working_memory),
)
_scope_command(
    "delete",
    "Delete the working memory of a scope (reports whether it existed).\n\n"
    "Example: memoryctl wm delete --thread t1 --agent demo",
    memory_service_pb2.DeleteWorkingMemoryRequest,
    lambda c: c.memory.DeleteWorkingMemory,
    lambda response: "Deleted." if response.deleted else "Nothing to delete.",
)


@wm_app.command("ls")
def wm_ls(
    ctx: typer.Context,
    agent: AgentOption,
    thread: Annotated[str, typer.Option("--thread", "-T", help="Only this thread_id.")] = "",
    resource: Annotated[str, typer.Option("--resource", "-R", help="Only this resource_id.")] = "",
    limit: Annotated[int, typer.Option("--limit", "-l", help="Scopes per page.")] = 50,
    all_pages: Annotated[bool, typer.Option("--all", help="Follow every page.")] = False,
    page_token: Annotated[str, typer.Option(help="Continue from a next_page_token.")] = "",
    as_json: JsonOption = False,
) -> None:
    """List working-memory scopes, ordered by thread then resource.

    Example: memoryctl wm ls --resource doc-9 --agent demo
    """
    listing = joined_pages(
        ctx,
        lambda c: c.memory.ListWorkingMemoryScopes,
        "scopes",
        memory_service_pb2.ListWorkingMemoryScopesRequest(
            agent_id=agent,
            thread_id=thread,
            resource_id=resource,
            page_size=limit,
            page_token=page_token,
        ),
        follow=all_pages,
    )
    if as_json:
        render.print_json(listing)
        return
    out = render.console()
    if not listing.scopes:
        out.print("No working memory.")
    else:
        table = Table(header_style="bold")
        for column in ("thread", "resource", "version", "updated", "expires"):
            table.add_column(column, no_wrap=True)
        table.add_column("content", overflow="fold", ratio=1)
        for wm in listing.scopes:
            table.add_row(
                Text(wm.scope.thread_id),
                Text(wm.scope.resource_id),
                str(wm.version),
                render.timestamp(wm.updated_at),
                render.timestamp(wm.expires_at),
                Text(_compact(wm.content)),
            )
        out.print(table)
    if listing.next_page_token:
        out.print(
            Text(f"More scopes: rerun with --page-token {listing.next_page_token}", style="dim")
        )


# ---------------------------------------------------------------- profile


@profile_app.command("get")
def profile_get(ctx: typer.Context, agent: AgentOption, as_json: JsonOption = False) -> None:
    """Print the agent.md document (its etag goes to stderr).

    Example: memoryctl profile get --agent demo > agent.md
    """
    request = memory_service_pb2.GetProfileRequest(agent_id=agent)
    response = unary(ctx, lambda c: c.memory.GetProfile, request, as_json)
    p = response.profile
    typer.echo(p.content, nl=not p.content.endswith("\n"))
    render.console(stderr=True).print(
        Text(f"etag {p.etag}, updated {render.timestamp(p.updated_at)}", style="dim")
    )


@profile_app.command("set")
def profile_set(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="FILE", help="The agent.md file; '-' reads stdin.")
    ],
    agent: AgentOption,
    if_match: Annotated[
        str,
        typer.Option(
            "--if-match",
            metavar="ETAG",
            help="Write only if the current etag is ETAG ('none': only if there is no profile).",
        ),
    ] = "",
    as_json: JsonOption = False,
) -> None:
    """Replace the agent.md document, optionally only if it is unchanged.

    Example: memoryctl profile set agent.md --agent demo --if-match 3f2a...
    """
    request = memory_service_pb2.SetProfileRequest(
        agent_id=agent, content=_read(source), if_match=if_match
    )
    response = unary(ctx, lambda c: c.memory.SetProfile, request, as_json)
    render.console().print(Text(f"Saved profile (etag {response.profile.etag})."))


# ---------------------------------------------------------------- sessions


def _jsonl_messages(text: str) -> list[memory_service_pb2.SessionMessage]:
    messages = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            item.setdefault("role", "user")
            messages.append(session_message(item, f"line {number}"))
        except (json.JSONDecodeError, AttributeError, MemorydError) as exc:
            raise typer.BadParameter(f"line {number}: {exc}", param_hint="--jsonl") from None
    return messages


def _message(
    role: MessageRole, content: str, extra: dict[str, Any]
) -> memory_service_pb2.SessionMessage:
    value = memory_service_pb2.MessageRole.Value(f"MESSAGE_ROLE_{role.value.upper()}")
    return memory_service_pb2.SessionMessage(
        role=value,  # type: ignore[arg-type]
        content=content,
        name=str(extra.get("name", "")),
        tool_call_id=str(extra.get("tool_call_id", "")),
    )


@session_app.command("append")
def session_append(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    content: Annotated[
        str | None,
        typer.Argument(metavar="[CONTENT]", help="One message; '-' reads it from stdin."),
    ] = None,
    role: Annotated[MessageRole, typer.Option(help="Who said it.")] = MessageRole.USER,
    name: Annotated[str, typer.Option(help="Name of the speaker or tool.")] = "",
    tool_call_id: Annotated[str, typer.Option(help="The tool call this answers.")] = "",
    jsonl: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help='Messages as JSON lines in the chat shape {"role", "content", "name", '
            '"tool_call_id", "tool_calls"}; "-": stdin.',
        ),
    ] = None,
    ttl: Annotated[
        float | None, typer.Option(min=1, help="Session TTL in seconds from this append.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Append messages to a session (created on first use).

    Example: memoryctl session append run-1 "Book me a dentist on Monday" --agent demo
    """
    if (content is None) == (jsonl is None):
        raise typer.BadParameter("give either CONTENT or --jsonl")
    if jsonl is not None:
        messages = _jsonl_messages(_read(jsonl))
    else:
        assert content is not None
        text = sys.stdin.read().rstrip("\n") if content == "-" else content
        messages = [_message(role, text, {"name": name, "tool_call_id": tool_call_id})]
    request = memory_service_pb2.AppendMessagesRequest(
        agent_id=agent, session_id=session_id, messages=messages
    )
    if ttl is not None:
        request.ttl.CopyFrom(_duration(ttl))
    response = unary(ctx, lambda c: c.memory.AppendMessages, request, as_json)
    note = "; older turns summarised" if response.compressed else ""
    render.console().print(Text(f"{response.message_count} messages{note}."))


@session_app.command("inject")
def session_inject(
    ctx: typer.Context,
    session_id: SessionArg,
    content: Annotated[str, typer.Argument(metavar="CONTENT", help="The text; '-': stdin.")],
    agent: AgentOption,
    kind: Annotated[
        FixedZoneKind,
        typer.Option(help="instruction (accumulates), trigger or focus (replace)."),
    ] = FixedZoneKind.INSTRUCTION,
    as_json: JsonOption = False,
) -> None:
    """Add to a session's fixed zone, which is never summarised away.

    Example: memoryctl session inject run-1 "Answer in French" --agent demo
    """
    text = sys.stdin.read().rstrip("\n") if content == "-" else content
    value = memory_service_pb2.FixedZoneKind.Value(f"FIXED_ZONE_KIND_{kind.value.upper()}")
    request = memory_service_pb2.InjectInstructionRequest(
        agent_id=agent,
        session_id=session_id,
        kind=value,  # type: ignore[arg-type]
        content=text,
    )
    response = unary(ctx, lambda c: c.memory.InjectInstruction, request, as_json)
    _print_zone(response.fixed_zone)


def _zone_name(kind: int) -> str:
    name: str = memory_service_pb2.FixedZoneKind.Name(kind)
    return name.removeprefix("FIXED_ZONE_KIND_").lower()


def _print_zone(zone: Any) -> None:
    out = render.console()
    for entry in zone:
        out.print(Text(f"[{_zone_name(entry.kind)}] ", style="bold"), Text(entry.content), sep="")


@session_app.command("window")
def session_window(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    budget: Annotated[
        int, typer.Option("--budget", "-b", min=0, help="Token budget; 0: the daemon's default.")
    ] = 0,
    as_json: JsonOption = False,
) -> None:
    """Show what fits in a token budget: fixed zone, summary, then the newest turns.

    Example: memoryctl session window run-1 --budget 2000 --agent demo
    """
    request = memory_service_pb2.GetSessionWindowRequest(
        agent_id=agent, session_id=session_id, token_budget=budget
    )
    response = unary(ctx, lambda c: c.memory.GetSessionWindow, request, as_json)
    out = render.console()
    _print_zone(response.fixed_zone)
    if response.summary:
        out.print(Text(f"summary ({response.summarizer}):", style="bold"))
        out.print(Text(response.summary))
    for m in response.recent:
        role = memory_service_pb2.MessageRole.Name(m.role).removeprefix("MESSAGE_ROLE_").lower()
        who = f"{role}({m.name})" if m.name else role
        out.print(Text(f"#{m.seq} {who}: ", style="bold"), Text(m.content), sep="")
    out.print(Text(f"{response.tokens_used} tokens ({response.token_counter})", style="dim"))


@session_app.command("end")
def session_end(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    extract: Annotated[
        bool, typer.Option("--extract", help="Keep long-term memories from the session.")
    ] = False,
    wide: WideOption = False,
    as_json: JsonOption = False,
) -> None:
    """End a session (no more appends) and print its summary.

    Example: memoryctl session end run-1 --extract --agent demo
    """
    request = memory_service_pb2.EndSessionRequest(
        agent_id=agent, session_id=session_id, extract_memories=extract
    )
    response = unary(ctx, lambda c: c.memory.EndSession, request, as_json)
    out = render.console()
    out.print(Text(response.summary or "(no summary)"))
    if response.extracted:
        out.print(render.memories_table(response.extracted, wide=wide))
