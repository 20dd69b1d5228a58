"""memoryctl's `consolidate` command and the orders `list` offers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memoryd.cli import render
from memoryd.cli.common import AgentOption, JsonOption, TagsOption
from memoryd.cli.progress import long_call
from memoryd_proto.v1 import lifecycle_service_pb2


def consolidate(
    ctx: typer.Context,
    agent: AgentOption,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the groups and their merge; change nothing.")
    ] = False,
    min_age_days: Annotated[
        int | None,
        typer.Option(min=0, help="Only memories untouched this many days (default: config)."),
    ] = None,
    min_group_size: Annotated[
        int | None, typer.Option(min=2, help="Smallest group condensed (default: config).")
    ] = None,
    tags: TagsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Condense groups of related older memories into one each; the originals are
    archived (memoryctl restore ID --undo-consolidation brings them back).

    Example: memoryctl consolidate --dry-run --min-age-days 30 --agent demo
    """
    request = lifecycle_service_pb2.ConsolidateRequest(
        agent_id=agent, dry_run=dry_run, tags=tags or []
    )
    if min_age_days is not None:
        request.min_age_days = min_age_days
    if min_group_size is not None:
        request.min_group_size = min_group_size

    result: lifecycle_service_pb2.ConsolidateResult | None = long_call(
        ctx, lambda c: c.lifecycle.Consolidate, request, as_json=as_json
    )
    if result is None:
        return
    if as_json:
        render.print_json(result)
        return
    render.warn_degraded(result.degraded)
    out = render.console()
    verb = "would archive" if result.dry_run else "archived"
    out.print(f"{result.groups} groups; {verb} {result.consolidated} memories into them.")
    if result.details:
        table = Table("group", "memories", "method", "derived", "content")
        for g in result.details:
            table.add_row(
                g.group, str(len(g.source_ids)), g.method, g.derived_id[:8] or "-", g.content[:120]
            )
        out.print(table)


def register(app: typer.Typer) -> None:
    """Add these commands to memoryctl."""
    app.command("consolidate")(consolidate)
