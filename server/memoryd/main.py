"""`memoryd`: the daemon's command line (serve, config show)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any

import structlog
import typer
from pydantic import ValidationError

from memoryd.api.server import ListenError
from memoryd.app import DataDirLocked, serve
from memoryd.config import Settings, unknown_env_vars
from memoryd.observability.logging import configure_logging
from memoryd.storage.space import EmbeddingSpaceChanged

log = structlog.get_logger(__name__)

app = typer.Typer(
    help="memoryd: the agent-memory daemon.", no_args_is_help=True, add_completion=False
)
config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")

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
        str | None, typer.Option(help="local | multilingual | openai | hashing (MEMORYD_EMBEDDER).")
    ] = None,
    ready_file: Annotated[
        Path | None,
        typer.Option(help="Write the bound address here once serving (for scripts and tests)."),
    ] = None,
) -> None:
    """Start the daemon and serve until SIGTERM / Ctrl-C."""
    settings = _load(config, listen=listen, data_dir=data_dir, embedder=embedder)
    configure_logging(settings.logging)
    for name in unknown_env_vars(os.environ):
        log.warning("unknown setting in the environment, ignored", variable=name)
    try:
        asyncio.run(serve(settings, ready_file=ready_file))
    except (DataDirLocked, ListenError, EmbeddingSpaceChanged) as exc:
        typer.echo(f"memoryd: {exc}", err=True)
        raise typer.Exit(1) from None


@config_app.command("show")
def config_show(config: ConfigOption = None) -> None:
    """Print the effective configuration (defaults < file < environment), secrets masked."""
    settings = _load(config)
    typer.echo(json.dumps(settings.masked(), indent=2))


if __name__ == "__main__":
    app()
