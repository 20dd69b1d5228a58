"""memoryctl's keyed-memory commands: `key set|get|history`, `ls` and `export-tree`.

`export-tree DIR` writes the layout of service/keyed/tree.py (the daemon's live
memory_root, on by default in <data_dir>/memory_root, keeps the same one up to date):
- ``DIR/log.jsonl``: one envelope per write, oldest first (tombstones included);
- ``DIR/state.jsonl``: the latest valid state of every key, in key order;
- ``DIR/index/<key path>.json``: one file per live key, names as written (UTF-8;
  service/keyed/keys.py decides what is %XX-encoded), so ``ls DIR/index/user/calendar/`` and
  ``jq .content.summary DIR/index/user/calendar/*.json`` work.
An envelope is ``{"key", "ts", "version", "valid", "source", "content"}``.

Values travel as JSON text (``content_json``): what ``key set`` is given is stored
and shown as written.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from memoryd.api.convert.lifecycle import key_entry_from
from memoryd.cli import render
from memoryd.cli.common import (
    AgentOption,
    JsonOption,
    WriteNamespaceOption,
    fail,
    pages,
    session,
    unary,
)
from memoryd.domain.keyed import KeyEntry
from memoryd.service.keyed import tree as key_tree
from memoryd.service.keyed.tree import INDEX_DIR, LOG_FILE, STATE_FILE
from memoryd_client import MemorydClient
from memoryd_client.errors import MemorydError
from memoryd_client.requests import provenance, security_level_value
from memoryd_client.tool_args import parse_source
from memoryd_client.tool_table import ToolArgumentError
from memoryd_proto.v1 import common_pb2, memory_service_pb2

key_app = typer.Typer(
    help="Keyed memory: one JSON value per path like /user/preference/style.",
    no_args_is_help=True,
)

#: Pages as large as the daemon allows by default (limits.max_page_size).
PAGE_SIZE = 500
PREVIEW_CHARS = 80

KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="The key, e.g. /user/name.")]


class Level(StrEnum):
    public = "public"
    internal = "internal"
    confidential = "confidential"
    restricted = "restricted"


# ---------------------------------------------------------------- conversions


def content_of(entry: memory_service_pb2.KeyEntry) -> Any:
    """The content, from its JSON text (exact numbers); None for a tombstone."""
    return json.loads(entry.content_json) if entry.content_json else None


def _read_content(raw: str) -> str:
    """The JSON text to send, as given ('-': stdin); checked here for a clear error."""
    text = sys.stdin.read() if raw == "-" else raw
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(
            f"not valid JSON ({exc}); quote strings, e.g. '\"Alice\"', and use null to delete",
            param_hint="JSON",
        ) from None
    return text


def _parse_time(raw: str, param: str) -> datetime:
    if raw == "now":
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter("must be an ISO 8601 time or 'now'", param_hint=param) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _source_dict(entry: memory_service_pb2.KeyEntry) -> dict[str, Any] | None:
    if not entry.HasField("source") or not entry.source.kind:
        return None
    s = entry.source
    kind = common_pb2.ProvenanceKind.Name(s.kind).removeprefix("PROVENANCE_KIND_").lower()
    retrieved = s.retrieved_at.ToJsonString() if s.HasField("retrieved_at") else None
    return {"kind": kind, "name": s.name, "retrieved_at": retrieved, "locator": s.locator}


def _source_option(raw: str, name: str, locator: str) -> common_pb2.Provenance:
    """--source (a short form or a JSON object) with --source-name and --locator."""
    try:
        value: Any = json.loads(raw) if raw.lstrip().startswith("{") else raw
        parsed = parse_source(value, field="--source")
        if parsed is None:
            raise ToolArgumentError("--source", "is required")
        if name:
            parsed["name"] = name
        if locator:
            parsed["locator"] = json.loads(locator) if locator.lstrip().startswith("{") else locator
        return provenance(parsed, "--source")
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc})", param_hint="--source") from None
    except (ToolArgumentError, MemorydError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--source") from None


def domain_entry(entry: memory_service_pb2.KeyEntry) -> KeyEntry:
    """The daemon's answer as the domain entry the tree layout is written from."""
    return key_entry_from(entry, "entry")


def envelope(entry: memory_service_pb2.KeyEntry) -> dict[str, Any]:
    """One write as export-tree (and the daemon's mirror) stores it."""
    data: dict[str, Any] = json.loads(key_tree.envelope_line(domain_entry(entry)))
    return data


def _preview(entry: memory_service_pb2.KeyEntry) -> Text:
    if not entry.valid:
        return Text("(deleted)", style="red")
    text = entry.content_json or json.dumps(content_of(entry), ensure_ascii=False)
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    return Text(text)


def _source_text(entry: memory_service_pb2.KeyEntry) -> Text:
    source = _source_dict(entry)
    if source is None:
        return Text("")
    return Text(" ".join(str(p) for p in (source["kind"], source["name"], source["locator"]) if p))


# ---------------------------------------------------------------- paging


def _all_keys(
    client: MemorydClient, agent: str, prefix: str, recursive: bool
) -> tuple[list[memory_service_pb2.KeyEntry], list[str]]:
    entries: list[memory_service_pb2.KeyEntry] = []
    dirs: list[str] = []
    for response in pages(
        client,
        client.memory.ListKeys,
        lambda t: memory_service_pb2.ListKeysRequest(
            agent_id=agent, prefix=prefix, recursive=recursive, page_size=PAGE_SIZE, page_token=t
        ),
    ):
        entries.extend(response.entries)
        dirs.extend(response.directories)
    return entries, dirs


def _history_pages(
    client: MemorydClient, agent: str, key: str
) -> Iterator[memory_service_pb2.KeyHistoryResponse]:
    return pages(
        client,
        client.memory.KeyHistory,
        lambda t: memory_service_pb2.KeyHistoryRequest(
            agent_id=agent, key=key, page_size=PAGE_SIZE, page_token=t
        ),
    )


# ---------------------------------------------------------------- key set / get / history


@key_app.command("set")
def key_set(
    ctx: typer.Context,
    key: KeyArg,
    content: Annotated[
        str,
        typer.Argument(
            metavar="JSON|null",
            help="The value as JSON ('-' reads stdin); null deletes the key (a tombstone).",
        ),
    ],
    agent: AgentOption,
    source: Annotated[
        str,
        typer.Option(
            "--source",
            metavar="SOURCE",
            help=(
                "Required: where the value comes from. A kind (user, agent, system), "
                '"tool:<name>", "web:<url>", "file:<path>", or a JSON object '
                '{"kind", "name", "retrieved_at", "locator"} (a locator may be an object).'
            ),
        ),
    ],
    source_name: Annotated[str, typer.Option(help="The source's name, e.g. a tool.")] = "",
    locator: Annotated[
        str, typer.Option(help="URL, path or id within the source, or a JSON object.")
    ] = "",
    retrieved_at: Annotated[
        str | None, typer.Option(metavar="TIME", help="ISO 8601 time, or 'now'.")
    ] = None,
    if_version: Annotated[
        int | None,
        typer.Option(help="Write only if the key is at this version (0: never written)."),
    ] = None,
    security_level: Annotated[
        Level | None, typer.Option("--security-level", help="Default: internal.")
    ] = None,
    namespace: WriteNamespaceOption = "",
    as_json: JsonOption = False,
) -> None:
    """Write KEY (last write wins); the JSON is stored as written. Every write names
    its --source, tombstones too; web, tool and file sources and keys under /kb/ also
    need a name, a retrieval time and a locator (--source-name, --retrieved-at and
    --locator fill or override those of --source).

    Example: memoryctl key set /user/prefs/drink '{"summary": "Prefers tea"}' --source user --agent demo
    """
    request = memory_service_pb2.SetMemoryRequest(
        agent_id=agent, key=key, content_json=_read_content(content), namespace=namespace
    )
    request.source.CopyFrom(_source_option(source, source_name, locator))
    if retrieved_at is not None:
        request.source.retrieved_at.FromDatetime(_parse_time(retrieved_at, "--retrieved-at"))
    if if_version is not None:
        request.if_version = if_version
    if security_level is not None:
        request.security_level = security_level_value(security_level.value)
    response = unary(ctx, lambda c: c.memory.SetMemory, request, as_json)
    verb = "Set" if response.entry.valid else "Deleted"
    render.console().print(Text(f"{verb} {response.entry.key} (version {response.entry.version})"))


@key_app.command("get")
def key_get(
    ctx: typer.Context, key: KeyArg, agent: AgentOption, as_json: JsonOption = False
) -> None:
    """Show KEY's current value and details.

    Example: memoryctl key get /user/prefs/drink --agent demo
    """
    response = unary(
        ctx,
        lambda c: c.memory.GetKey,
        memory_service_pb2.GetKeyRequest(agent_id=agent, key=key),
        as_json,
    )
    e = response.entry
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    rows: list[tuple[str, str | Text]] = [
        ("key", Text(e.key)),
        ("version", str(e.version)),
        ("updated", render.timestamp(e.updated_at)),
        ("security", render.security_name(e.security_level)),
        ("memory", e.memory_id),
    ]
    if e.namespace:
        rows.append(("namespace", Text(e.namespace)))
    if _source_dict(e) is not None:
        rows.append(("source", _source_text(e)))
    rows.append(("content", Text(json.dumps(content_of(e), ensure_ascii=False, indent=2))))
    rows.append(("as stored", Text(e.content_json)))
    for name, value in rows:
        table.add_row(name, value)
    render.console().print(table)


@key_app.command("history")
def key_history(
    ctx: typer.Context, key: KeyArg, agent: AgentOption, as_json: JsonOption = False
) -> None:
    """Every write of KEY, oldest first, deletions included. A directory ("/user/",
    "/" for all) lists the writes of every key below it.

    Example: memoryctl key history /user/prefs/drink --agent demo
    """
    entries: list[memory_service_pb2.KeyEntry] = []
    with session(ctx) as client:
        for page in _history_pages(client, agent, key):
            entries.extend(page.entries)
    if as_json:
        render.print_json(memory_service_pb2.KeyHistoryResponse(entries=entries))
        return
    table = Table(header_style="bold")
    table.add_column("version", justify="right")
    table.add_column("updated", no_wrap=True)
    if key.endswith("/"):
        table.add_column("key")
    table.add_column("source")
    table.add_column("content", overflow="fold", ratio=1)
    for e in entries:
        cells: list[str | Text] = [str(e.version), render.timestamp(e.updated_at)]
        if key.endswith("/"):
            cells.append(Text(e.key))
        table.add_row(*cells, _source_text(e), _preview(e))
    render.console().print(table)


# ---------------------------------------------------------------- ls


def ls(
    ctx: typer.Context,
    agent: AgentOption,
    prefix: Annotated[
        str, typer.Argument(metavar="PREFIX", help="A directory like /user/ (default: /).")
    ] = "/",
    recursive: Annotated[
        bool, typer.Option("--recursive", "-r", help="Every key below PREFIX.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List keys like `ls`: the keys and directories directly under PREFIX (every key
    below it with -r). Deleted keys are not listed.

    Example: memoryctl ls /user/calendar/ --agent demo
    """
    with session(ctx) as client:
        entries, dirs = _all_keys(client, agent, prefix, recursive)
    if as_json:
        render.print_json(memory_service_pb2.ListKeysResponse(entries=entries, directories=dirs))
        return
    out = render.console()
    if not entries and not dirs:
        out.print("No keys.")
        return
    base = prefix.rstrip("/") + "/"
    rows: list[tuple[str, Text, str, str, Text]] = [
        (d, Text(d.removeprefix(base) or d, style="bold blue"), "", "", Text("")) for d in dirs
    ]
    rows += [
        (
            e.key,
            Text(e.key.removeprefix(base) or e.key),
            str(e.version),
            render.timestamp(e.updated_at),
            _preview(e),
        )
        for e in entries
    ]
    rows.sort(key=lambda row: row[0].encode("utf-8"))
    table = Table(header_style="bold")
    table.add_column("name")
    table.add_column("version", justify="right")
    table.add_column("updated", no_wrap=True)
    table.add_column("content", overflow="fold", ratio=1)
    for _, name, version, updated, preview in rows:
        table.add_row(name, version, updated, preview)
    out.print(table)


# ---------------------------------------------------------------- export-tree


def _prepare(root: Path, overwrite: bool) -> None:
    mine = [root / LOG_FILE, root / STATE_FILE, root / INDEX_DIR]
    if root.exists() and not root.is_dir():
        raise typer.BadParameter(f"{root} exists and is not a directory", param_hint="DIR")
    if root.exists() and any(root.iterdir()):
        if not overwrite:
            raise typer.BadParameter(
                f"{root} is not empty; pass --overwrite to replace a previous export",
                param_hint="DIR",
            )
        others = [p for p in root.iterdir() if p not in mine]
        if others:
            raise typer.BadParameter(
                f"{root} holds files export-tree did not write ({others[0].name}); "
                "choose an empty directory",
                param_hint="DIR",
            )
        for path in mine:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    (root / INDEX_DIR).mkdir(parents=True, exist_ok=True)


def export_tree(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Where to write the tree.")],
    agent: AgentOption,
    overwrite: Annotated[
        bool, typer.Option(help="Replace a previous export in DIR (only its own files).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Write the agent's keys as files: DIR/log.jsonl (every write), DIR/state.jsonl
    (the latest value of every key) and DIR/index/<key path>.json (one per key).

    Example: memoryctl export-tree ./demo-keys --agent demo && ls ./demo-keys/index/user/
    """
    root = directory.resolve()
    _prepare(root, overwrite)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=render.console(stderr=True),
        disable=as_json,
        transient=True,
    )
    with session(ctx) as client, progress:
        reading = progress.add_task("reading history", total=None)
        writes: list[memory_service_pb2.KeyEntry] = []
        for page in _history_pages(client, agent, "/"):
            writes.extend(page.entries)
            progress.update(reading, completed=len(writes))
        entries, _ = _all_keys(client, agent, "/", recursive=True)
        progress.update(reading, total=len(writes))
        refused = key_tree.write_tree(
            root, [domain_entry(e) for e in writes], [domain_entry(e) for e in entries]
        )
    if refused:
        fail([f"error: not written to {INDEX_DIR}/: {reason}" for reason in refused])
    summary = {"dir": str(root), "writes": len(writes), "keys": len(entries)}
    if as_json:
        render.print_json(summary)
        return
    render.console().print(Text(f"Exported {len(entries)} keys ({len(writes)} writes) to {root}"))


__all__ = ["envelope", "export_tree", "key_app", "ls"]
