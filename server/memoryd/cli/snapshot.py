"""memoryctl's SnapshotService commands: `snapshot`, `default-read`, `state`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from google.protobuf import json_format
from rich.table import Table
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.common import AgentOption, JsonOption, NamespaceOption, SessionArg, unary
from memoryd.domain.snapshot import SnapshotFormat, SnapshotSection
from memoryd_proto.v1 import common_pb2, snapshot_service_pb2

state_app = typer.Typer(
    help="Saved component state of a session (SaveState / LoadState).", no_args_is_help=True
)


_FORMATS = {
    SnapshotFormat.MARKDOWN: snapshot_service_pb2.SNAPSHOT_FORMAT_MARKDOWN,
    SnapshotFormat.XML: snapshot_service_pb2.SNAPSHOT_FORMAT_XML,
    SnapshotFormat.USER_MEMORY: snapshot_service_pb2.SNAPSHOT_FORMAT_USER_MEMORY,
}


_SECTIONS = {
    SnapshotSection.PINNED: snapshot_service_pb2.SNAPSHOT_SECTION_PINNED,
    SnapshotSection.PROFILE: snapshot_service_pb2.SNAPSHOT_SECTION_PROFILE,
    SnapshotSection.WORKING: snapshot_service_pb2.SNAPSHOT_SECTION_WORKING,
    SnapshotSection.SEMANTIC: snapshot_service_pb2.SNAPSHOT_SECTION_SEMANTIC,
    SnapshotSection.RECENT: snapshot_service_pb2.SNAPSHOT_SECTION_RECENT,
    SnapshotSection.SESSION: snapshot_service_pb2.SNAPSHOT_SECTION_SESSION,
}


def section_name(value: int) -> str:
    name: str = snapshot_service_pb2.SnapshotSection.Name(value)
    return name.removeprefix("SNAPSHOT_SECTION_").lower()


def usage_table(response: snapshot_service_pb2.BuildSnapshotResponse) -> Table:
    table = Table(header_style="bold", title_justify="left")
    table.add_column("section")
    table.add_column("items", justify="right")
    table.add_column("tokens", justify="right")
    for usage in response.usage:
        table.add_row(section_name(usage.section), str(usage.items), str(usage.tokens))
    table.add_row(
        "total",
        str(len(response.items)),
        f"{response.tokens_used} / {response.token_budget}",
        style="bold",
    )
    return table


def snapshot(
    ctx: typer.Context,
    agent: AgentOption,
    trigger: Annotated[
        str, typer.Argument(metavar="TRIGGER", help="The event that starts the run.")
    ] = "",
    budget: Annotated[
        int | None,
        typer.Option("--budget", "-b", min=1, help="Token budget (the daemon's default: 500)."),
    ] = None,
    fmt: Annotated[
        SnapshotFormat,
        typer.Option(
            "--format", "-f", help="markdown, xml or user_memory (# USER MEMORY, memories by type)."
        ),
    ] = SnapshotFormat.MARKDOWN,
    sections: Annotated[
        list[SnapshotSection] | None,
        typer.Option("--section", "-s", help="A section to include (repeatable; default: all)."),
    ] = None,
    priority: Annotated[
        list[SnapshotSection] | None,
        typer.Option("--priority", "-p", help="Fill order (repeatable); the rest follow."),
    ] = None,
    focus: Annotated[str, typer.Option(help="What the run focuses on.")] = "",
    thread: Annotated[str, typer.Option("--thread", "-T", help="Working-memory thread_id.")] = "",
    resource: Annotated[
        str, typer.Option("--resource", "-R", help="Working-memory resource_id.")
    ] = "",
    session_id: Annotated[str, typer.Option("--session", help="The session to include.")] = "",
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Build the token-budgeted snapshot an agent run starts with.

    Prints its text, and on stderr the tokens per section and what was left out.

    Example: memoryctl snapshot "the dentist called" --budget 300 --session s1 --agent demo
    """
    request = snapshot_service_pb2.BuildSnapshotRequest(
        agent_id=agent,
        trigger=trigger,
        focus=focus,
        token_budget=budget or 0,
        sections=[_SECTIONS[s] for s in sections or []],
        priority=[_SECTIONS[s] for s in priority or []],
        format=_FORMATS[fmt],
        session_id=session_id,
    )
    if thread or resource:
        request.scope.CopyFrom(
            common_pb2.WorkingMemoryScope(thread_id=thread, resource_id=resource)
        )
    if namespace is not None:
        request.namespace = namespace
    response = unary(ctx, lambda c: c.snapshot.BuildSnapshot, request, as_json)
    typer.echo(response.text)
    err = render.console(stderr=True)
    err.print(usage_table(response))
    err.print(Text(f"token counter: {response.token_counter}", style="dim"))
    left_out: dict[str, int] = {}
    for omitted in response.omitted:
        left_out[omitted.reason] = left_out.get(omitted.reason, 0) + 1
    if left_out:
        err.print(
            Text(
                "left out: " + ", ".join(f"{n} ({r})" for r, n in sorted(left_out.items())),
                style="dim",
            )
        )


def default_read(
    ctx: typer.Context,
    agent: AgentOption,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-l", min=1, help="Token limit (the daemon's default: 300)."),
    ] = None,
    tags: Annotated[
        list[str] | None,
        typer.Option("--tag", "-t", help="Rank entries with this tag higher (repeatable)."),
    ] = None,
    prefix: Annotated[str, typer.Option(help='Only keys under this prefix, e.g. "/user/".')] = "",
    at: Annotated[
        str | None,
        typer.Option(help="Treat this ISO 8601 time as now for expiry (default: now)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Passive retrieval over keyed memory: one compact line per valid, unexpired key.

    Example: memoryctl default-read --limit 200 --tag travel --agent demo
    """
    request = snapshot_service_pb2.DefaultReadRequest(
        agent_id=agent, token_limit=limit or 0, tags=tags or [], prefix=prefix
    )
    if at is not None:
        try:
            when = datetime.fromisoformat(at)
        except ValueError:
            raise typer.BadParameter("not an ISO 8601 time", param_hint="--at") from None
        request.current_time.FromDatetime(when if when.tzinfo else when.replace(tzinfo=UTC))
    response = unary(ctx, lambda c: c.snapshot.DefaultRead, request, as_json)
    typer.echo(response.text)
    render.console(stderr=True).print(
        Text(f"{response.tokens_used} tokens ({response.token_counter})", style="dim")
    )


def _json_text(text: str) -> str:
    """A JSON object's text, as typed (numbers are not re-encoded); checked here."""
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON: {exc}", param_hint="STATE") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="STATE")
    return text


def _components_table(components: Any) -> Table:
    table = Table(header_style="bold")
    table.add_column("name")
    table.add_column("version", justify="right")
    table.add_column("updated", no_wrap=True)
    table.add_column("state", overflow="fold", ratio=1)
    for c in components:
        # The JSON text as stored (1.50 stays 1.50; the Struct carries doubles).
        state = c.state_json or json.dumps(json_format.MessageToDict(c.state), ensure_ascii=False)
        table.add_row(Text(c.name), str(c.version), render.timestamp(c.updated_at), Text(state))
    return table


@state_app.command("save")
def state_save(
    ctx: typer.Context,
    session_id: SessionArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The component's name.")],
    state: Annotated[str, typer.Argument(metavar="STATE", help="A JSON object.")],
    agent: AgentOption,
    as_json: JsonOption = False,
) -> None:
    """Save one component's state (a JSON object) under a session.

    Example: memoryctl state save s1 planner '{"step": 3}' --agent demo
    """
    request = snapshot_service_pb2.SaveStateRequest(
        agent_id=agent,
        session_id=session_id,
        components=[snapshot_service_pb2.StateComponent(name=name, state_json=_json_text(state))],
    )
    response = unary(ctx, lambda c: c.snapshot.SaveState, request, as_json)
    render.console().print(_components_table(response.components))


@state_app.command("load")
def state_load(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    names: Annotated[
        list[str] | None, typer.Option("--name", "-n", help="Only this component (repeatable).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Load a session's saved component state.

    Example: memoryctl state load s1 --agent demo
    """
    request = snapshot_service_pb2.LoadStateRequest(
        agent_id=agent, session_id=session_id, names=names or []
    )
    response = unary(ctx, lambda c: c.snapshot.LoadState, request, as_json)
    render.console().print(_components_table(response.components))
