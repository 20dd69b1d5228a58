"""memoryctl's LifecycleService commands: stats, archive / restore, prune, reset,
compact, maintenance, export / import and reembed.

Long operations show rich progress bars on stderr (none with ``--json``, which prints
only the final result). ``export FILE`` writes the ``memoryd.export.v1`` format: JSON
Lines, one ``ExportRecord`` per line as protobuf JSON, the header first; ``import
FILE`` reads it back ('-' is stdin / stdout).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.backup import export, import_
from memoryd.cli.common import (
    AgentOption,
    AllAgentsOption,
    JsonOption,
    OneAgentOption,
    TagsOption,
    TypesOption,
    unary,
)
from memoryd.cli.progress import run_long
from memoryd_proto.v1 import lifecycle_service_pb2

#: Deadline of unary calls that may take long (prune, reset), in seconds.
LONG_TIMEOUT = 3600.0

# ---------------------------------------------------------------- helpers


def parse_age(text: str) -> timedelta:
    """ "30d", "12h", "90m", or a number of days."""
    units = {"d": "days", "h": "hours", "m": "minutes"}
    try:
        if text and text[-1] in units:
            return timedelta(**{units[text[-1]]: float(text[:-1])})
        return timedelta(days=float(text))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not an age like 30d, 12h or 90m") from None


def _type_values(types: list[Any] | None) -> list[str]:
    """Wire enum names (protobuf accepts them for enum fields)."""
    return [f"MEMORY_TYPE_{t.value.upper()}" for t in types or []]


# ---------------------------------------------------------------- stats


def stats(ctx: typer.Context, agent: AgentOption, as_json: JsonOption = False) -> None:
    """Counts of an agent's memories, keys, sessions and working scopes.

    Memories by type, security level and embedding model; the store's size; when
    maintenance last ran.

    Example: memoryctl stats --agent demo
    """
    response = unary(
        ctx,
        lambda c: c.lifecycle.GetStats,
        lifecycle_service_pb2.GetStatsRequest(agent_id=agent),
        as_json,
    )
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("memories", f"{response.memories} ({response.archived} archived)")
    for title, counts in (
        ("by type", response.by_memory_type),
        ("by level", response.by_security_level),
        ("by model", response.by_embedding_model),
    ):
        table.add_row(title, ", ".join(f"{c.name} {c.count}" for c in counts))
    table.add_row("average importance", f"{response.average_importance:.2f}")
    table.add_row("keys", str(response.keys))
    table.add_row("sessions", str(response.sessions))
    table.add_row("working scopes", str(response.working_scopes))
    if response.store_bytes:
        table.add_row("store size", f"{response.store_bytes / 2**20:.1f} MiB")
    table.add_row("last maintenance", render.timestamp(response.last_maintenance_at) or "never")
    render.console().print(table)


# ---------------------------------------------------------------- archive / restore


def _selector(
    ids: list[str] | None,
    tags: list[str] | None,
    types: list[Any] | None,
    older_than: str | None,
    namespace: str | None,
) -> lifecycle_service_pb2.MemorySelector:
    selector = lifecycle_service_pb2.MemorySelector(
        ids=ids or [], tags=tags or [], memory_types=_type_values(types)
    )
    if older_than is not None:
        selector.created_before.FromDatetime(datetime.now(UTC) - parse_age(older_than))
    if namespace is not None:
        selector.namespace = namespace
    return selector


IdsArg = Annotated[
    list[str] | None, typer.Argument(metavar="[ID]...", help="Memory ids (or use a filter).")
]
OlderOption = Annotated[
    str | None,
    typer.Option("--older-than", metavar="AGE", help="Created before this long ago: 30d, 12h."),
]
NamespaceFilter = Annotated[
    str | None, typer.Option("--namespace", "-n", help="Only this namespace.")
]


def archive(
    ctx: typer.Context,
    agent: AgentOption,
    ids: IdsArg = None,
    tags: TagsOption = None,
    types: TypesOption = None,
    older_than: OlderOption = None,
    namespace: NamespaceFilter = None,
    as_json: JsonOption = False,
) -> None:
    """Archive memories by id or filter: they leave recall and snapshots.

    `memoryctl restore` brings them back.

    Example: memoryctl archive --tag old-project --older-than 90d --agent demo
    """
    request = lifecycle_service_pb2.ArchiveRequest(
        agent_id=agent, selector=_selector(ids, tags, types, older_than, namespace)
    )
    response = unary(ctx, lambda c: c.lifecycle.Archive, request, as_json)
    render.console().print(f"Archived {response.archived}.")


def restore(
    ctx: typer.Context,
    agent: AgentOption,
    ids: IdsArg = None,
    tags: TagsOption = None,
    types: TypesOption = None,
    older_than: OlderOption = None,
    namespace: NamespaceFilter = None,
    undo_consolidation: Annotated[
        bool,
        typer.Option(
            "--undo-consolidation",
            help="For consolidated memories: archive them and bring back their originals.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Restore archived memories by id or filter.

    Example: memoryctl restore 3f2a9c1e-... --agent demo
    """
    request = lifecycle_service_pb2.RestoreRequest(
        agent_id=agent,
        selector=_selector(ids, tags, types, older_than, namespace),
        undo_consolidation=undo_consolidation,
    )
    response = unary(ctx, lambda c: c.lifecycle.Restore, request, as_json)
    undone = response.consolidations_undone
    note = f" ({undone} consolidations undone)" if undo_consolidation else ""
    render.console().print(f"Restored {response.restored}{note}.")


# ---------------------------------------------------------------- prune / reset


def prune(
    ctx: typer.Context,
    agent: AgentOption,
    older_than: OlderOption = None,
    tags: TagsOption = None,
    min_access_count: Annotated[
        int | None,
        typer.Option(help="Only memories accessed fewer times than this.", min=0),
    ] = None,
    types: TypesOption = None,
    namespace: NamespaceFilter = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would go.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete the memories matching every given criterion (admin); --namespace alone
    deletes a namespace.

    Keyed memories are left to their keys.

    Example: memoryctl prune --older-than 180d --min-access-count 1 --dry-run --agent demo
    Example: memoryctl prune --namespace kb-v1 --dry-run --agent demo
    """
    request = lifecycle_service_pb2.PruneRequest(
        agent_id=agent,
        tags=tags or [],
        memory_types=_type_values(types),
        dry_run=dry_run,
        namespace=namespace,
    )
    if older_than is not None:
        request.created_before.FromDatetime(datetime.now(UTC) - parse_age(older_than))
    if min_access_count is not None:
        request.min_access_count = min_access_count
    response = unary(ctx, lambda c: c.lifecycle.Prune, request, as_json, timeout=LONG_TIMEOUT)
    out = render.console()
    verb = "Would prune" if response.dry_run else "Pruned"
    out.print(f"{verb} {response.pruned}.")
    if response.dry_run:
        for memory_id in response.ids:
            out.print(Text(memory_id, style="dim"))


def reset(
    ctx: typer.Context,
    agent: AgentOption,
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: delete EVERYTHING of the agent.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete everything of an agent (admin).

    Every memory, key, working scope, profile, session and state. Asks for
    confirmation unless --yes.

    Example: memoryctl reset --agent demo --yes
    """
    if not yes:
        if not sys.stdin.isatty():
            raise typer.BadParameter("refusing to reset without --yes", param_hint="--yes")
        typer.confirm(f"Delete everything of agent {agent!r}?", abort=True)
    request = lifecycle_service_pb2.ResetRequest(agent_id=agent, confirm=True)
    response = unary(ctx, lambda c: c.lifecycle.Reset, request, as_json, timeout=LONG_TIMEOUT)
    render.console().print(f"Deleted {response.deleted} records of agent {agent}.")


# ---------------------------------------------------------------- long operations


def compact(
    ctx: typer.Context,
    agent: AgentOption,
    threshold: Annotated[
        int,
        typer.Option(min=0, help="Merge near-duplicates in tag groups above this (default 50)."),
    ] = 0,
    similarity: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Cosine similarity for merging.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Purge tombstones and expired items, merge near-duplicates, optimise the store.

    Example: memoryctl compact --agent demo
    """
    request = lifecycle_service_pb2.CompactRequest(agent_id=agent, merge_group_threshold=threshold)
    if similarity is not None:
        request.merge_similarity = similarity
    run_long(ctx, lambda c: c.lifecycle.Compact, request, as_json)


def maintenance(
    ctx: typer.Context,
    agent: AgentOption,
    max_entries: Annotated[
        int | None, typer.Option(min=1, help="Live memories to keep (default: server config).")
    ] = None,
    retention_days: Annotated[
        int | None, typer.Option(min=1, help="Delete memories older than this many days.")
    ] = None,
    consolidate: Annotated[
        bool | None,
        typer.Option(
            "--consolidate/--no-consolidate", help="Consolidate old memories (default: config)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run maintenance now.

    Expire, apply retention, archive the lowest-scored excess over max entries,
    compact when needed.

    Example: memoryctl maintenance --max-entries 5000 --agent demo
    """
    request = lifecycle_service_pb2.RunMaintenanceRequest(agent_id=agent)
    if max_entries is not None:
        request.max_entries = max_entries
    if retention_days is not None:
        request.retention_days = retention_days
    if consolidate is not None:
        request.consolidate = consolidate
    run_long(ctx, lambda c: c.lifecycle.RunMaintenance, request, as_json)


def reembed(
    ctx: typer.Context,
    agent: OneAgentOption = "",
    all_agents: AllAgentsOption = False,
    batch_size: Annotated[int, typer.Option(min=1, help="Memories per batch.")] = 256,
    as_json: JsonOption = False,
) -> None:
    """Re-embed memories whose embedding model is not the daemon's (admin); resumable.

    Example: memoryctl reembed --agent demo
    """
    request = lifecycle_service_pb2.ReembedRequest(
        agent_id=agent, all_agents=all_agents, batch_size=batch_size
    )
    run_long(ctx, lambda c: c.lifecycle.Reembed, request, as_json)


def register(app: typer.Typer) -> None:
    """Add these commands to memoryctl."""
    for name, command in (
        ("stats", stats),
        ("archive", archive),
        ("restore", restore),
        ("prune", prune),
        ("reset", reset),
        ("compact", compact),
        ("maintenance", maintenance),
        ("reembed", reembed),
        ("export", export),
        ("import", import_),
    ):
        app.command(name)(command)
