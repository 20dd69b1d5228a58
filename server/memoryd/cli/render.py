"""Output of memoryctl: rich tables for people, protobuf JSON for programs.

Every ``--json`` output is the RPC's response message as protobuf JSON
(``json_format.MessageToDict`` with the .proto field names), printed plainly to stdout.
Table cells are :class:`rich.text.Text` so memory content is never read as markup.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC
from typing import Any

import typer
from google.protobuf import json_format, timestamp_pb2
from google.protobuf.message import Message
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memoryd_client.requests import memory_type_name
from memoryd_proto.v1 import common_pb2, memory_service_pb2

SHORT_ID = 8


def console(*, stderr: bool = False) -> Console:
    """A console on the current stdout/stderr (CliRunner swaps them per invocation).

    When the output is not a terminal (a pipe, a file, a test) and ``COLUMNS`` is unset,
    lines are not wrapped at 80 columns: tables keep one row per line.
    """
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(
        file=stream,
        width=1000 if wide else None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def to_dict(message: Message) -> dict[str, Any]:
    result: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return result


def print_json(data: Any) -> None:
    """A protobuf message (or plain JSON data) as indented JSON on stdout."""
    if isinstance(data, Message):
        data = to_dict(data)
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def short_id(memory_id: str, wide: bool = False) -> str:
    return memory_id if wide else memory_id[:SHORT_ID]


def timestamp(ts: timestamp_pb2.Timestamp) -> str:
    """A Timestamp as ``2026-01-31 12:00:00Z`` (UTC); "" when unset."""
    if not ts.seconds and not ts.nanos:
        return ""
    when = ts.ToDatetime(tzinfo=UTC)
    return str(when.strftime("%Y-%m-%d %H:%M:%SZ"))


def security_name(value: int) -> str:
    name: str = common_pb2.SecurityLevel.Name(value)
    return name.removeprefix("SECURITY_LEVEL_").lower()


def tags_text(tags: Iterable[str]) -> Text:
    return Text(", ".join(tags), style="cyan")


def warn_degraded(degraded: Iterable[common_pb2.Degradation]) -> None:
    err = console(stderr=True)
    for d in degraded:
        err.print(Text(f"warning: degraded ({d.component}): {d.reason}", style="yellow"))


def recall_table(results: Sequence[memory_service_pb2.RecallResult], *, wide: bool) -> Table:
    table = Table(title=None, show_lines=False, header_style="bold")
    table.add_column("#", justify="right", style="dim")
    table.add_column("score", justify="right", style="green")
    table.add_column("content", overflow="fold", ratio=1)
    table.add_column("type")
    table.add_column("tags")
    table.add_column("id", style="dim", no_wrap=True)
    for rank, result in enumerate(results, start=1):
        m = result.memory
        table.add_row(
            str(rank),
            f"{result.score:.3f}",
            Text(m.content.strip()),
            memory_type_name(m.memory_type),
            tags_text(m.tags),
            short_id(m.id, wide),
        )
    return table


def memories_table(memories: Sequence[common_pb2.Memory], *, wide: bool) -> Table:
    table = Table(header_style="bold")
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("type")
    table.add_column("importance", justify="right")
    table.add_column("tags")
    table.add_column("namespace")
    table.add_column("content", overflow="fold", ratio=1)
    for m in memories:
        table.add_row(
            short_id(m.id, wide),
            timestamp(m.created_at),
            memory_type_name(m.memory_type),
            f"{m.importance:.2f}",
            tags_text(m.tags),
            Text(m.namespace),
            Text(m.content.strip()),
        )
    return table


def memory_detail(m: common_pb2.Memory) -> Table:
    """One memory, field by field."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    rows: list[tuple[str, str | Text]] = [
        ("id", m.id),
        ("agent", m.agent_id),
        ("namespace", Text(m.namespace)),
        ("type", memory_type_name(m.memory_type)),
        ("tags", tags_text(m.tags)),
        ("security", security_name(m.security_level)),
        ("importance", f"{m.importance:.2f}"),
        ("confidence", f"{m.confidence:.2f}"),
        ("created", timestamp(m.created_at)),
        ("updated", timestamp(m.updated_at)),
        ("accessed", timestamp(m.accessed_at)),
        ("access count", str(m.access_count)),
        ("version", str(m.version)),
        ("embedding", f"{m.embedding_model} ({m.embedding_dimension})"),
    ]
    if m.metadata_json and m.metadata_json != "{}":
        rows.append(("metadata", Text(m.metadata_json)))
    elif m.HasField("metadata") and m.metadata.fields:
        meta = json.dumps(json_format.MessageToDict(m.metadata), ensure_ascii=False)
        rows.append(("metadata", Text(meta)))
    if m.HasField("source") and m.source.kind:
        kind = common_pb2.ProvenanceKind.Name(m.source.kind).removeprefix("PROVENANCE_KIND_")
        source = " ".join(part for part in (kind.lower(), m.source.name, m.source.locator) if part)
        rows.append(("source", Text(source)))
    if m.key:
        rows.append(("key", Text(m.key)))
    if m.archived:
        rows.append(("archived", "yes"))
    if m.expires_at.seconds:
        rows.append(("expires", timestamp(m.expires_at)))
    if m.supersedes:
        rows.append(("supersedes", m.supersedes))
    rows.append(("content", Text(m.content)))
    for name, value in rows:
        table.add_row(name, value)
    return table
