"""memoryctl's `session messages`, `session delete` and `session clear`: every message
a session stores, summarised or not, until it expires."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.common import AgentOption, JsonOption, SessionArg, joined_pages, unary
from memoryd_proto.v1 import memory_service_pb2


def _print_message(m: memory_service_pb2.SessionMessage) -> None:
    role = memory_service_pb2.MessageRole.Name(m.role).removeprefix("MESSAGE_ROLE_").lower()
    who = f"{role}({m.name})" if m.name else role
    calls = " ".join(f"[tool call {c.name} #{c.id}]" for c in m.tool_calls)
    text = f"{m.content} {calls}".strip()
    render.console().print(Text(f"#{m.seq} {who}: ", style="bold"), Text(text), sep="")


def messages(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    from_seq: Annotated[int, typer.Option("--from", min=0, help="First seq (0: the first).")] = 0,
    to_seq: Annotated[int, typer.Option("--to", min=0, help="Last seq (0: the last).")] = 0,
    page_size: Annotated[int, typer.Option("--page-size", min=1, help="Messages per call.")] = 100,
    as_json: JsonOption = False,
) -> None:
    """Print every stored message of a session in seq order, summarised ones included.

    Example: memoryctl session messages run-1 --from 1 --to 40 --agent demo
    """
    first = memory_service_pb2.GetSessionMessagesRequest(
        agent_id=agent, session_id=session_id, from_seq=from_seq, to_seq=to_seq, page_size=page_size
    )
    response = joined_pages(ctx, lambda c: c.memory.GetSessionMessages, "messages", first)
    found = list(response.messages)
    if as_json:
        render.print_json([render.to_dict(m) for m in found])
        return
    for m in found:
        _print_message(m)
    render.console().print(
        Text(
            f"{len(found)} messages; the summary covers up to #{response.summarized_through_seq}",
            style="dim",
        )
    )


def delete(
    ctx: typer.Context,
    session_id: SessionArg,
    seqs: Annotated[list[int], typer.Argument(metavar="SEQ...", help="Message seqs.")],
    agent: AgentOption,
    as_json: JsonOption = False,
) -> None:
    """Delete messages by seq; a summary that covered one is rebuilt without it.

    Example: memoryctl session delete run-1 3 4 --agent demo
    """
    request = memory_service_pb2.DeleteMessagesRequest(
        agent_id=agent, session_id=session_id, seqs=seqs
    )
    response = unary(ctx, lambda c: c.memory.DeleteMessages, request, as_json)
    note = "; summary rebuilt" if response.summary_rebuilt else ""
    render.console().print(Text(f"{len(response.deleted_seqs)} messages deleted{note}."))


def clear(
    ctx: typer.Context,
    session_id: SessionArg,
    agent: AgentOption,
    fixed_zone: Annotated[
        bool, typer.Option("--fixed-zone", help="Clear the fixed zone as well.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete every message and the summary of a session (it stays open).

    Example: memoryctl session clear run-1 --yes --agent demo
    """
    if not yes:
        typer.confirm(f"Delete every message of session {session_id!r}?", abort=True)
    request = memory_service_pb2.ClearSessionRequest(
        agent_id=agent, session_id=session_id, fixed_zone=fixed_zone
    )
    response = unary(ctx, lambda c: c.memory.ClearSession, request, as_json)
    render.console().print(Text(f"{response.deleted} messages deleted."))


def register(session_app: typer.Typer) -> None:
    """Add these commands to `memoryctl session`."""
    for name, command in (("messages", messages), ("delete", delete), ("clear", clear)):
        session_app.command(name)(command)
