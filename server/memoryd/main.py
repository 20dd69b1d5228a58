"""`memoryd`: the daemon's command line (serve, mcp, config show, wal check / set-aside /
requeue, models list / fetch / verify)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import IO, Annotated, Any

import structlog
import typer
from pydantic import ValidationError

from memoryd.cli.models import models_app
from memoryd.config import Settings, unknown_env_vars
from memoryd.datadir import DataDirDamaged, DataDirLocked, lock_data_dir
from memoryd.domain.errors import EmbeddingError
from memoryd.durability.set_aside import SetAsideEntry, requeue, set_aside_entries
from memoryd.durability.wal_check import check_log, describe
from memoryd.observability.logging import configure_logging
from memoryd.observability.tracing import TracingUnavailable

log = structlog.get_logger(__name__)

app = typer.Typer(
    help="memoryd: the agent-memory daemon.", no_args_is_help=True, add_completion=False
)
config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")
wal_app = typer.Typer(
    help="The write-ahead log: check it for damage; list and requeue the writes set aside "
    "when the store rejected them on replay (with the daemon stopped).",
    no_args_is_help=True,
)
app.add_typer(wal_app, name="wal")
app.add_typer(models_app, name="models")

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="YAML config file (MEMORYD_* environment variables override it)."
    ),
]


def _load(config: Path | None, **overrides: Any) -> Settings:
    try:
        return Settings.load(config, **{k: v for k, v in overrides.items() if v is not None})
    except (ValidationError, FileNotFoundError) as exc:
        typer.echo(f"invalid configuration: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command("serve")
def serve_command(
    config: ConfigOption = None,
    listen: Annotated[
        str | None, typer.Option(help="host:port or unix:/path (MEMORYD_LISTEN).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Where data lives (MEMORYD_DATA_DIR).")
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="e5 | minilm | multilingual | openai | hashing (MEMORYD_EMBEDDER)."),
    ] = None,
    ready_file: Annotated[
        Path | None,
        typer.Option(help="Write the bound address here once serving (for scripts and tests)."),
    ] = None,
) -> None:
    """Start the daemon and serve until SIGTERM / Ctrl-C."""
    # The daemon's modules (gRPC, LanceDB, the model) are imported here rather than at
    # the top: `config show` and `wal` need none of them, and they take seconds to load.
    from memoryd.api.server import ListenError
    from memoryd.app import serve
    from memoryd.storage.space import EmbeddingSpaceChanged

    settings = _load(config, listen=listen, data_dir=data_dir, embedder=embedder)
    configure_logging(settings.logging)
    for name in unknown_env_vars(os.environ):
        log.warning("unknown setting in the environment, ignored", variable=name)
    try:
        asyncio.run(serve(settings, ready_file=ready_file))
    except (
        DataDirLocked,
        DataDirDamaged,
        ListenError,
        EmbeddingSpaceChanged,
        TracingUnavailable,
    ) as exc:
        typer.echo(f"memoryd: {exc}", err=True)
        raise typer.Exit(1) from None
    except EmbeddingError as exc:  # the model cannot load: not fetched, damaged
        typer.echo(f"memoryd: {exc.message}", err=True)
        raise typer.Exit(1) from None


@app.command("mcp")
def mcp_command(
    address: Annotated[
        str | None,
        typer.Option(
            help="The daemon: HOST:PORT or unix:PATH ($MEMORYD_ADDRESS, else 127.0.0.1:50051)."
        ),
    ] = None,
    agent: Annotated[
        str, typer.Option(help="The agent a tool call uses when it names none.")
    ] = "default",
    tls_ca: Annotated[Path | None, typer.Option(help="CA of the daemon's TLS certificate.")] = None,
    tls_cert: Annotated[Path | None, typer.Option(help="Client certificate (mtls).")] = None,
    tls_key: Annotated[Path | None, typer.Option(help="Client key (mtls).")] = None,
) -> None:
    """Serve MCP on stdin/stdout for an agent host, talking to the daemon over gRPC.

    The API key comes from $MEMORYD_API_KEY (api_key mode). Logs go to stderr.
    """
    from memoryd.cli.mcp_bridge import BridgeOptions, run_bridge  # MCP SDK: only here
    from memoryd.config import LoggingSettings
    from memoryd_client import TlsConfig

    # stdout carries the MCP protocol: every log line goes to stderr.
    configure_logging(LoggingSettings(format="json"))

    tls = (
        TlsConfig(ca_file=tls_ca, cert_file=tls_cert, key_file=tls_key)
        if tls_ca or tls_cert
        else None
    )
    asyncio.run(run_bridge(BridgeOptions(address=address, agent=agent, tls=tls)))


@config_app.command("show")
def config_show(config: ConfigOption = None) -> None:
    """Print the effective configuration (defaults < file < environment), secrets masked."""
    settings = _load(config)
    typer.echo(json.dumps(settings.masked(), indent=2))


DataDirOption = Annotated[Path | None, typer.Option(help="Where data lives (MEMORYD_DATA_DIR).")]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")]


def _wal_dir(settings: Settings) -> Path:
    return settings.durability.wal_dir or settings.data_dir / "wal"


def _locked(settings: Settings) -> IO[bytes]:
    """The data dir's lock: these commands change the log, which has one writer."""
    try:
        return lock_data_dir(settings.data_dir)
    except DataDirLocked as exc:
        typer.echo(f"memoryd: {exc}; stop it first", err=True)
        raise typer.Exit(1) from None


def _describe(entry: SetAsideEntry) -> str:
    if entry.error:
        return f"seq {entry.seq}: {entry.path.name}, {entry.size} bytes, unreadable: {entry.error}"
    ops = "; ".join(
        f"{op.kind} {op.count} in {op.tenant}/{op.agent}: {', '.join(op.targets)}"
        + (" ..." if op.count > len(op.targets) else "")
        for op in entry.ops
    )
    return f"seq {entry.seq}: {entry.path.name}, {entry.size} bytes, {ops}"


@wal_app.command("check")
def wal_check(
    config: ConfigOption = None, data_dir: DataDirOption = None, as_json: JsonOption = False
) -> None:
    """Read the log as the next start would, changing nothing: the checkpoint, the
    entries to replay, a torn tail (dropped at start), damaged ranges (the writes they
    held are lost; the start keeps the bytes aside and replays what follows).

    Exit status 1 when writes were or will be lost (damage in the log, or damaged
    ranges kept aside: delete those files once inspected) or the checkpoint is
    unreadable; 0 otherwise. While a daemon runs, its newest entry may show as a torn
    tail.
    """
    settings = _load(config, data_dir=data_dir)
    check = check_log(_wal_dir(settings))
    if as_json:
        typer.echo(json.dumps(check.as_dict(), indent=2))
    else:
        typer.echo("\n".join(describe(check)))
    if not check.ok:
        raise typer.Exit(1)


@wal_app.command("set-aside")
def wal_set_aside(
    config: ConfigOption = None, data_dir: DataDirOption = None, as_json: JsonOption = False
) -> None:
    """List the logged writes the store rejected on replay (kept next to the log)."""
    settings = _load(config, data_dir=data_dir)
    entries = set_aside_entries(_wal_dir(settings))
    if as_json:
        typer.echo(json.dumps({"entries": [e.as_dict() for e in entries]}, indent=2))
        return
    if not entries:
        typer.echo(f"no set-aside entries in {_wal_dir(settings)}")
    for entry in entries:
        typer.echo(_describe(entry))


@wal_app.command("requeue")
def wal_requeue(
    seqs: Annotated[
        list[int] | None, typer.Argument(help="Sequence numbers to requeue (see set-aside).")
    ] = None,
    requeue_all: Annotated[bool, typer.Option("--all", help="Requeue every entry.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    config: ConfigOption = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Append set-aside writes to the log again for the next start to replay.

    One the store still rejects is set aside again. They apply as if written now: a
    later change to the same memory or key is overwritten.
    """
    if bool(seqs) == requeue_all:
        typer.echo("name the sequence numbers to requeue, or pass --all", err=True)
        raise typer.Exit(2)
    if as_json and not yes:
        typer.echo("--json does not prompt: pass --yes as well", err=True)
        raise typer.Exit(2)
    settings = _load(config, data_dir=data_dir)
    lock = _locked(settings)
    try:
        wanted = None if requeue_all else set(seqs or ())
        entries = [
            e for e in set_aside_entries(_wal_dir(settings)) if wanted is None or e.seq in wanted
        ]
        if not yes and entries:
            for entry in entries:
                typer.echo(_describe(entry))
            typer.confirm(f"Requeue {len(entries)} entries?", abort=True)
        try:
            moved = requeue(_wal_dir(settings), wanted)
        except ValueError as exc:
            typer.echo(f"memoryd: {exc}", err=True)
            raise typer.Exit(1) from None
    finally:
        lock.close()
    if as_json:
        typer.echo(
            json.dumps({"requeued": [{"seq": old, "new_seq": new} for old, new in moved.items()]})
        )
        return
    if not moved:
        typer.echo(f"nothing to requeue: no set-aside entries in {_wal_dir(settings)}")
        return
    typer.echo(
        f"requeued {len(moved)} entries; the next start replays them"
        + "".join(f"\n  seq {old} -> {new}" for old, new in moved.items())
    )


if __name__ == "__main__":
    app()
