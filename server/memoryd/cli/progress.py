"""Long memoryctl operations: streamed calls, rich progress bars, their results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import typer
from google.protobuf import json_format
from google.protobuf.message import Message
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as ProgressBar
from rich.table import Table

from memoryd.cli import render
from memoryd.cli.common import Stub, session
from memoryd_client import MemorydClient, from_rpc_error
from memoryd_proto.v1 import common_pb2

ProgressFn = Callable[[common_pb2.Progress], None]


@contextmanager
def progress_bars(enabled: bool) -> Iterator[ProgressFn]:
    """A callback drawing one bar per phase of a long operation (on stderr)."""
    if not enabled:
        yield lambda _p: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with ProgressBar(*columns, console=render.console(stderr=True)) as bars:
        tasks: dict[str, TaskID] = {}

        def update(p: common_pb2.Progress) -> None:
            label = f"{p.phase} {p.message}".strip()
            task = tasks.get(p.phase)
            if task is None:
                task = tasks[p.phase] = bars.add_task(label, total=p.total or None)
            bars.update(task, description=label, completed=p.done, total=p.total or None)

        yield update


def stream(events: Iterator[Any]) -> Iterator[Any]:
    """A server stream whose failure becomes a MemorydError (printed by ``session``)."""
    try:
        yield from events
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from None


def long_call(ctx: typer.Context, stub: Stub, request: Message, *, as_json: bool) -> Any:
    """Run the streaming operation ``stub`` picks (``lambda c: c.lifecycle.Compact``) for
    ``request``, drawing its progress; returns its result message."""
    result = None
    with session(ctx) as client, progress_bars(not as_json) as show:
        for event in stream(stub(client)(request, metadata=metadata(client))):
            if event.WhichOneof("event") == "progress":
                show(event.progress)
            else:
                result = event.result
    return result


def run_long(ctx: typer.Context, stub: Stub, request: Message, as_json: bool) -> None:
    """:func:`long_call`, then its result printed (as a table, or JSON with --json)."""
    print_result(long_call(ctx, stub, request, as_json=as_json), as_json)


def metadata(client: MemorydClient) -> Any:
    return client.metadata or None


def result_table(result: Any) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    data = json_format.MessageToDict(result, preserving_proto_field_name=True)
    for field in result.DESCRIPTOR.fields:
        value = data.get(field.name, getattr(result, field.name))
        table.add_row(field.name.replace("_", " "), str(value))
    return table


def print_result(result: Any, as_json: bool) -> None:
    if result is None:
        return
    if as_json:
        render.print_json(result)
    else:
        render.console().print(result_table(result))
