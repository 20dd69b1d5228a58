"""memoryctl `export FILE` and `import FILE`: the ``memoryd.export.v1`` format, JSON
Lines with one ``ExportRecord`` per line as protobuf JSON, the header first ('-' is
stdout / stdin). Both show progress bars on stderr (not with ``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Annotated

import grpc
import typer
from google.protobuf import json_format
from rich.text import Text

from memoryd.cli import render
from memoryd.cli.common import AllAgentsOption, JsonOption, OneAgentOption, session
from memoryd.cli.progress import metadata, progress_bars, stream
from memoryd_client import from_rpc_error
from memoryd_proto.v1 import common_pb2, lifecycle_service_pb2


@contextmanager
def _open(path: str, mode: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdout if "w" in mode else sys.stdin
        return
    try:
        with open(path, mode, encoding="utf-8") as handle:
            yield handle
    except OSError as exc:
        raise typer.BadParameter(f"cannot open {path}: {exc.strerror}") from None


def export(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="Output file ('-': stdout).")],
    agent: OneAgentOption = "",
    all_agents: AllAgentsOption = False,
    vectors: Annotated[
        bool, typer.Option("--vectors/--no-vectors", help="Include embedding vectors.")
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """Export every record of an agent (or tenant) as memoryd.export.v1 JSON Lines.

    Example: memoryctl export backup.jsonl --agent demo
    """
    request = lifecycle_service_pb2.ExportRequest(
        agent_id=agent, all_agents=all_agents, include_vectors=vectors
    )
    counts: dict[str, int] = {}
    with (
        session(ctx) as client,
        _open(file, "w") as out,
        progress_bars(not as_json and file != "-") as show,
    ):
        for event in stream(client.lifecycle.Export(request, metadata=metadata(client))):
            if event.WhichOneof("event") == "progress":
                show(event.progress)
                continue
            kind = event.record.WhichOneof("record")
            counts[kind] = counts.get(kind, 0) + 1
            out.write(
                json_format.MessageToJson(
                    event.record, preserving_proto_field_name=True, indent=None
                )
                + "\n"
            )
    summary = {"file": file, "records": counts}
    if as_json:
        render.print_json(summary)
    elif file != "-":
        render.console().print(
            f"Exported {sum(counts.values())} records to {file}: "
            + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        )


def _parse(file: str) -> Iterator[lifecycle_service_pb2.ExportRecord]:
    """The records of an export file; a malformed line is a usage error naming it."""
    with _open(file, "r") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = lifecycle_service_pb2.ExportRecord()
            try:
                json_format.Parse(line, record)
            except json_format.ParseError as exc:
                raise typer.BadParameter(f"{file}:{number}: {exc}") from None
            yield record


def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export file ('-': stdin).")],
    target: Annotated[
        str,
        typer.Option("--agent", "-A", help="Import into this agent instead of the records' own."),
    ] = "",
    as_json: JsonOption = False,
) -> None:
    """Import an export file (admin); idempotent.

    Records already present at the same or a newer version are skipped; bad records
    are reported (exit 1) and the rest imported.

    Example: memoryctl import backup.jsonl
    """
    # Every line is parsed before anything is sent: a malformed file imports nothing.
    if file == "-":
        records = list(_parse(file))
        total = len(records)
    else:
        total = sum(1 for _ in _parse(file))
    with session(ctx) as client, progress_bars(not as_json) as show:

        def requests() -> Iterator[lifecycle_service_pb2.ImportRequest]:
            source = records if file == "-" else _parse(file)
            for sent, record in enumerate(source, start=1):
                yield lifecycle_service_pb2.ImportRequest(record=record, target_agent_id=target)
                if sent % 100 == 0 or sent == total:
                    # Called from gRPC's sending thread; rich's progress is thread-safe.
                    show(common_pb2.Progress(phase="import", done=sent, total=total))

        try:
            response: lifecycle_service_pb2.ImportResponse = client.lifecycle.Import(
                requests(), metadata=metadata(client)
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None
    if as_json:
        render.print_json(response)
        return
    out = render.console()
    out.print(
        f"Imported {response.imported}, skipped {response.skipped} (already present), "
        f"rejected {len(response.rejected)}."
    )
    err = render.console(stderr=True)
    for rejection in response.rejected:
        err.print(Text(f"record {rejection.index}: {rejection.reason}", style="yellow"))
    if response.rejected:
        raise typer.Exit(1)
