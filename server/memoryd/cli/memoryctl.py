"""`memoryctl`: talk to a running memoryd daemon from the shell.

Every command prints a readable table by default and the RPC's response message as
protobuf JSON with ``--json``. Failed calls print ``error: <CODE>: <message>`` (and
one line per invalid field) to stderr and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from grpc_health.v1 import health_pb2
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.agent_state import profile_app, session_app, wm_app
from memoryd.cli.common import (
    AGENT_ENV,
    TIMEOUT_ENV,
    AgentOption,
    Globals,
    JsonOption,
    MemoryctlGroup,
    NamespaceOption,
    TagsOption,
    TypesOption,
    WideOption,
    WriteNamespaceOption,
    joined_pages,
    parse_metadata,
    session,
    unary,
)
from memoryd.cli.consolidation import register as register_consolidation
from memoryd.cli.keys import export_tree, key_app, ls
from memoryd.cli.lifecycle import register as register_lifecycle
from memoryd.cli.session_log import register as register_session_log
from memoryd.cli.snapshot import default_read, snapshot, state_app
from memoryd.domain.models import MemoryOrder, MemoryType
from memoryd.domain.requests import ScoringPreset
from memoryd_client import TargetError, parse_target
from memoryd_client import requests as rq
from memoryd_client.client import DEFAULT_TIMEOUT
from memoryd_client.requests import MEMORY_TYPES
from memoryd_client.target import ADDRESS_ENV, DEFAULT_ADDRESS
from memoryd_client.transport import API_KEY_ENV
from memoryd_proto.v1 import memory_service_pb2

HELP = (
    "Talk to a running memoryd daemon: remember, recall, inspect and forget memories.\n\n"
    f"The daemon address comes from --address or ${ADDRESS_ENV} (default {DEFAULT_ADDRESS}): "
    "host:port, unix:/path/to/socket or a path ending in .sock. "
    f"The agent comes from --agent or ${AGENT_ENV}. "
    f"A daemon in api_key mode needs a key: memoryctl sends ${API_KEY_ENV} "
    "(as 'authorization: Bearer <key>'). "
    "Every command takes --json for machine-readable output and --help for its options.\n\n"
    "[bold]Example[/bold]\n\n"
    f"  $ export {AGENT_ENV}=demo\n"
    '  $ memoryctl remember "The user prefers a dark blue colour scheme for slides"\n'
    '  $ memoryctl recall "what colours does the user like?"\n'
    "  $ memoryctl list --all --json\n\n"
    "Start a daemon with [bold]make run[/bold] in the memoryd checkout "
    "(or [bold]memoryd serve[/bold])."
)

app = typer.Typer(
    name="memoryctl",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    cls=MemoryctlGroup,
)
app.add_typer(wm_app, name="wm")
app.add_typer(profile_app, name="profile")
register_session_log(session_app)
app.add_typer(session_app, name="session")
app.add_typer(key_app, name="key")
app.command("ls")(ls)
app.command("export-tree")(export_tree)
app.command("snapshot")(snapshot)
app.command("default-read")(default_read)
app.add_typer(state_app, name="state")
register_consolidation(app)
register_lifecycle(app)


@app.callback()
def main(
    ctx: typer.Context,
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            "-a",
            envvar=ADDRESS_ENV,
            show_envvar=True,
            help=f"Daemon address: host:port, unix:/path or a .sock path. Default {DEFAULT_ADDRESS}.",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(envvar=TIMEOUT_ENV, min=0.1, help="Seconds to wait for each call."),
    ] = DEFAULT_TIMEOUT,
) -> None:
    try:
        target = parse_target(address or DEFAULT_ADDRESS)
    except TargetError as exc:
        raise typer.BadParameter(str(exc), param_hint="--address") from None
    ctx.obj = Globals(address=target, timeout=timeout)


@app.command()
def remember(
    ctx: typer.Context,
    text: Annotated[
        str, typer.Argument(metavar="TEXT", help="What to remember; '-' reads it from stdin.")
    ],
    agent: AgentOption,
    memory_type: Annotated[
        MemoryType,
        typer.Option("--type", metavar="TYPE", help="Kind: " + ", ".join(MEMORY_TYPES) + "."),
    ] = MemoryType.FACT,
    tags: Annotated[
        list[str] | None, typer.Option("--tag", "-t", metavar="TAG", help="A tag (repeatable).")
    ] = None,
    importance: Annotated[
        float | None, typer.Option(help="0..1; the daemon's default is 0.5.")
    ] = None,
    namespace: WriteNamespaceOption = "",
    metadata: Annotated[
        str | None, typer.Option(help='A JSON object, e.g. \'{"source": "chat"}\'.')
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Store a long-term memory (a near-duplicate updates the existing one).

    Example: memoryctl remember "Prefers tea over coffee" --agent demo --type preference --tag drinks
    """
    content = sys.stdin.read().rstrip("\n") if text == "-" else text
    meta = parse_metadata(metadata)
    request = rq.remember_request(
        agent,
        content,
        memory_type=memory_type.value,
        tags=tags or (),
        importance=importance,
        namespace=namespace,
        metadata=meta,
    )
    response = unary(ctx, lambda c: c.memory.Remember, request, as_json)
    verb = "Updated near-duplicate" if response.deduplicated else "Remembered"
    render.console().print(Text(f"{verb} {response.memory.id}"))


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What to look for, in natural language.")
    ],
    agent: AgentOption,
    limit: Annotated[int, typer.Option("--limit", "-l", help="At most this many results.")] = 10,
    namespace: NamespaceOption = None,
    tags: TagsOption = None,
    types: TypesOption = None,
    scoring: Annotated[
        ScoringPreset | None,
        typer.Option(
            metavar="PRESET",
            help="Ranking: relevance (the default), similarity (cosine), decayed (by age) or weighted.",
        ),
    ] = None,
    wide: WideOption = False,
    as_json: JsonOption = False,
) -> None:
    """Find the memories that best match QUERY, best first, with their scores.

    Example: memoryctl recall "what colours does the user like?" --agent demo --limit 3
    """
    request = rq.recall_request(
        agent,
        query,
        limit=limit,
        namespace=namespace,
        tags=tags or (),
        memory_types=[t.value for t in types or ()],
        scoring=scoring.value if scoring else None,
    )
    response = unary(ctx, lambda c: c.memory.Recall, request, as_json)
    out = render.console()
    if not response.results:
        out.print("No matching memories.")
        return
    out.print(render.recall_table(response.results, wide=wide))


@app.command()
def get(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's full id.")],
    agent: AgentOption,
    as_json: JsonOption = False,
) -> None:
    """Show one memory with all its fields.

    Example: memoryctl get 7eb920d3-9fb2-4db3-944d-fe6ae66581b5 --agent demo
    """
    response = unary(ctx, lambda c: c.memory.GetMemory, rq.get_request(agent, memory_id), as_json)
    render.console().print(render.memory_detail(response.memory))


@app.command("list")
def list_(
    ctx: typer.Context,
    agent: AgentOption,
    limit: Annotated[
        int,
        typer.Option("--limit", "-l", help="Memories per page (with --all: per request)."),
    ] = 50,
    all_pages: Annotated[
        bool, typer.Option("--all", help="Follow pages to list every memory.")
    ] = False,
    page_token: Annotated[
        str, typer.Option(help="Continue from a previous page's next_page_token.")
    ] = "",
    namespace: NamespaceOption = None,
    tags: TagsOption = None,
    types: TypesOption = None,
    order: Annotated[
        MemoryOrder, typer.Option(help="created_desc (newest first), created_asc, ...")
    ] = MemoryOrder.CREATED_DESC,
    wide: WideOption = False,
    as_json: JsonOption = False,
) -> None:
    """List memories, newest first, one page at a time (or every one with --all);
    --order access_count_desc or importance_desc lists the most used or important first.

    Example: memoryctl list --agent demo --all --json
    """

    request = rq.list_request(
        agent,
        page_size=limit,
        page_token=page_token,
        namespace=namespace,
        tags=tags or (),
        memory_types=[t.value for t in types or ()],
    )
    request.order = memory_service_pb2.MemoryOrder.Value(  # type: ignore[assignment]
        f"MEMORY_ORDER_{order.value.upper()}"
    )
    listing = joined_pages(
        ctx, lambda c: c.memory.ListMemories, "memories", request, follow=all_pages
    )
    if as_json:
        render.print_json(listing)
        return
    out = render.console()
    if not listing.memories:
        out.print("No memories.")
    else:
        out.print(render.memories_table(listing.memories, wide=wide))
    if listing.next_page_token:
        out.print(
            Text(f"More memories: rerun with --page-token {listing.next_page_token}", style="dim")
        )


@app.command()
def forget(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Full ids of the memories.")],
    agent: AgentOption,
    as_json: JsonOption = False,
) -> None:
    """Delete memories by id; ids that do not exist are reported, not an error.

    Example: memoryctl forget 7eb920d3-9fb2-4db3-944d-fe6ae66581b5 --agent demo
    """
    response = unary(ctx, lambda c: c.memory.ForgetMemories, rq.forget_request(agent, ids), as_json)
    forgotten = set(response.forgotten_ids)
    out = render.console()
    out.print(Text(f"Forgot {len(forgotten)} of {len(ids)}."))
    for memory_id in ids:
        if memory_id not in forgotten:
            render.console(stderr=True).print(Text(f"not found: {memory_id}", style="yellow"))


@app.command()
def health(
    ctx: typer.Context,
    service: Annotated[
        str,
        typer.Option(help='One service, e.g. "memoryd.v1.MemoryService"; default: the daemon.'),
    ] = "",
    as_json: JsonOption = False,
) -> None:
    """Ask the daemon whether it is serving (grpc.health.v1). Exits 1 unless SERVING.

    Example: memoryctl health --address unix:/run/memoryd.sock
    """
    with session(ctx) as client:
        status = client.health(service)
    if as_json:
        render.print_json({"status": status})
    else:
        typer.echo(status)
    if status != health_pb2.HealthCheckResponse.ServingStatus.Name(
        health_pb2.HealthCheckResponse.SERVING
    ):
        raise typer.Exit(1)


def run() -> None:
    app(prog_name="memoryctl")


if __name__ == "__main__":
    run()
