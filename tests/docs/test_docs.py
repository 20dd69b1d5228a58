"""The documentation is checked against the code: its generated parts are current, every
link, setting, command and option it names exists, its layout picture is the tree, and
every block marked runnable runs against a live daemon (the real local model)."""

from __future__ import annotations

import contextlib
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memoryd.cli.memoryctl import app as memoryctl_app
from memoryd.config import Settings, _env_names
from memoryd.main import app as memoryd_app
from tests.conftest import REPO, Daemon
from tests.docs import generate
from tests.docs.pages import (
    CLIENT_ENV,
    PAGES,
    SHELL_LANGUAGES,
    Block,
    all_blocks,
    anchors,
    blocks,
    check_cli,
    commands,
    links,
    make_targets,
    shell_lines,
)

README_MAX_LINES = 300
#: Generous, so a loaded CI machine cannot fail a call; not a performance assertion.
TIMEOUT = "60"
RUNNABLE = [b for b in all_blocks() if "runnable" in b.marks]


def test_generated_sections_are_current() -> None:
    assert generate.stale() == [], "run `make docs` and commit the result"


def test_the_readme_fits_on_a_screen_or_two() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    broken = []
    for target, anchor in links(page):
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}#{anchor}: no such heading")
    assert broken == []


def test_every_memoryd_variable_named_exists() -> None:
    known = _env_names(Settings, "MEMORYD_") | CLIENT_ENV
    named = {
        name
        for page in PAGES
        for name in re.findall(r"\bMEMORYD_[A-Z0-9_]*[A-Z0-9]\b", page.read_text())
    }
    assert named, "the docs name no variable: the pattern is wrong"
    assert sorted(named - known) == []


def test_the_hand_written_settings_table_gives_each_default_the_settings_have() -> None:
    """docs/configuration.md's table of the settings most often changed is written by
    hand; its defaults must be the generated table's (it once said `local` for the
    embedder whose default had become `e5`)."""
    row = re.compile(r"^\| `(MEMORYD_[A-Z0-9_]+)` \| ([^|]+?) \|", re.MULTILINE)
    generated = {
        name: default for name, default in row.findall("\n".join(generate.settings_rows()))
    }
    page = (REPO / "docs" / "configuration.md").read_text()
    hand = row.findall(generate.replace_section(page, "settings", ""))
    assert len(hand) > 10, "the pattern finds no hand-written rows"
    wrong = [
        (name, default, generated.get(name))
        for name, default in hand
        if _value(default) != _value(generated.get(name, "missing"))
    ]
    assert wrong == []


def _value(default: str) -> object:
    """A table's default as a value: "off", "unset" and an empty string are none."""
    text = default.strip("`")
    if text in ("", "off", "unset"):
        return None
    try:
        return float(text)
    except ValueError:
        return text


def test_every_command_and_option_named_exists() -> None:
    targets = make_targets()
    problems: list[str] = []
    checked = 0
    for block in all_blocks():
        if block.language not in SHELL_LANGUAGES:
            continue
        for line in shell_lines(block.code):
            for argv in commands(line):
                program = Path(argv[0]).name
                if program in ("memoryctl", "memoryd"):
                    problems += [f"{block.name}: {p}" for p in check_cli(argv)]
                    checked += 1
                elif program == "make":
                    wanted = [a for a in argv[1:] if "=" not in a and not a.startswith("-")]
                    problems += [
                        f"{block.name}: no make target {t}" for t in wanted if t not in targets
                    ]
                    checked += 1
    assert checked > 50
    assert problems == []


def test_the_cli_check_finds_what_is_not_there() -> None:
    assert check_cli(["memoryctl", "recall", "q", "--agent", "a", "--json"]) == []
    assert (
        check_cli(["memoryctl", "--address", "x:1", "key", "set", "/k", "1", "--source", "user"])
        == []
    )
    assert check_cli(["memoryctl", "key", "set", "/k", "1"]) != []  # --source is required
    assert check_cli(["memoryctl", "recal", "q"]) != []
    assert check_cli(["memoryctl", "recall", "q", "--agnet", "a"]) != []
    assert check_cli(["memoryd", "wal", "check", "--json"]) == []


# ---------------------------------------------------------------- the layout picture


def _layout() -> str:
    page = REPO / "docs" / "architecture.md"
    return next(b.code for b in blocks(page) if "server/memoryd/" in b.code)


def test_the_layout_picture_is_the_tree() -> None:
    lines = _layout().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("server/memoryd/"))
    top: set[str] = set()
    service: set[str] = set()
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        entry = re.match(r"^( {2}| {4})(\S+)", line)
        if entry is None:
            continue
        indent, name = entry.groups()
        (top if len(indent) == 2 else service).add(name)
    package = REPO / "server" / "memoryd"
    tree = {
        f"{p.name}/" if p.is_dir() else p.name
        for p in package.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and not p.name.startswith("__"))
    }
    features = {
        f"{p.name}/" for p in (package / "service").iterdir() if (p / "__init__.py").exists()
    }
    assert top == tree
    assert service == features


# ---------------------------------------------------------------- runnable blocks


@pytest.fixture
def agent() -> str:
    return f"docs-{uuid.uuid4().hex[:10]}"


class Runner:
    """Runs a block's lines as a user would, against ``daemon``: memoryctl and memoryd
    in-process (typer's CliRunner), Python (a heredoc or a python block) in-process,
    other shell commands in bash; in a scratch directory, as ``agent``."""

    def __init__(
        self, daemon: Daemon, agent: str, workdir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.agent = agent
        self.workdir = workdir
        self.env = {"MEMORYD_ADDRESS": daemon.address, "MEMORYD_AGENT": None, "COLUMNS": None}
        monkeypatch.setenv("MEMORYD_ADDRESS", daemon.address)
        monkeypatch.delenv("MEMORYD_API_KEY", raising=False)
        (workdir / ".venv").symlink_to(REPO / ".venv")

    def _demo(self, text: str) -> str:
        return text.replace("--agent demo", f"--agent {self.agent}").replace(
            '"demo"', repr(self.agent)
        )

    def python(self, code: str, where: Path) -> None:
        with contextlib.chdir(where):
            exec(compile(self._demo(code), "docs", "exec"), {"__name__": "__docs__"})

    def cli(self, argv: list[str]) -> None:
        program = Path(argv[0]).name
        app = memoryctl_app if program == "memoryctl" else memoryd_app
        args = ["--timeout", TIMEOUT, *argv[1:]] if program == "memoryctl" else argv[1:]
        result = CliRunner().invoke(app, args, env=self.env)
        assert result.exit_code == 0, f"{shlex.join(argv)}:\n{result.output}"

    def shell(self, command: str) -> None:
        bin_dir = Path(sys.executable).parent
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.workdir,
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(self.workdir)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout}{done.stderr}"

    def shell_block(self, code: str) -> None:
        code = self._demo(code)
        heredoc = re.findall(r"<<'EOF'\n(.*?)\nEOF\n", code, re.S)
        for body in heredoc:
            self.python(body, self.workdir)
        for line in shell_lines(code):
            if line.startswith("source .venv/bin/activate") or "<<'EOF'" in line:
                continue
            for part in line.split(" && "):
                argv = next(commands(part), [])
                if argv and Path(argv[0]).name in ("memoryctl", "memoryd"):
                    with contextlib.chdir(self.workdir):
                        self.cli(argv)
                else:
                    self.shell(part)


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.name)
def test_runnable_block_runs(
    block: Block,
    shared_daemon: Daemon,
    agent: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner = Runner(shared_daemon, agent, tmp_path, monkeypatch)
    if block.language == "python":
        runner.python(block.code, REPO)
    else:
        runner.shell_block(block.code)


def test_enough_blocks_are_runnable() -> None:
    pages = {b.page.name for b in RUNNABLE}
    assert {"README.md", "guide.md", "clients.md", "kubernetes.md"} <= pages
    assert len(RUNNABLE) >= 12


# ---------------------------------------------------------------- blocks that start things


def _one(mark: str) -> Block:
    (found,) = [b for b in all_blocks() if mark in b.marks]
    return found


def test_the_api_key_shortcut_makes_a_daemon_that_wants_the_key(
    daemon_factory: type[Daemon], tmp_path: Path
) -> None:
    """docs/configuration.md: the exports give a daemon in api_key mode that knows the
    key; memoryctl with it is served, without it refused. (The daemon uses the hashing
    embedder: the model is not what this shows.)"""
    lines = [line for line in shell_lines(_one("runnable-api-key").code) if line != "make run"]
    assert len(lines) == 3 and all(line.startswith("export ") for line in lines)
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    script = "set -e\n" + "\n".join(lines) + "\nenv -0\n"
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    env = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    key = env["MEMORYD_API_KEY"]
    wanted = {k: v for k, v in env.items() if k.startswith("MEMORYD_AUTH__")}
    assert set(wanted) == {"MEMORYD_AUTH__MODE", "MEMORYD_AUTH__KEYS"}
    daemon = daemon_factory(env={**wanted, "MEMORYD_EMBEDDER": "hashing"})
    daemon.start()
    runner = CliRunner()
    base = {"MEMORYD_ADDRESS": daemon.address, "MEMORYD_AGENT": None}
    args = ["--timeout", TIMEOUT, "remember", "api key shortcut", "--agent", "a1"]
    served = runner.invoke(memoryctl_app, args, env={**base, "MEMORYD_API_KEY": key})
    assert served.exit_code == 0, served.output
    refused = runner.invoke(memoryctl_app, args, env={**base, "MEMORYD_API_KEY": None})
    assert refused.exit_code == 1 and "UNAUTHENTICATED" in refused.output


def _assignments(line: str) -> dict[str, str]:
    return dict(
        token.split("=", 1) for token in shlex.split(line) if re.match(r"^[A-Z_]+__?\w*=", token)
    )


def test_the_qdrant_snippets_agree_with_each_other_and_the_settings() -> None:
    """docs/qdrant-and-replicas.md: the server started on the ports memoryd is pointed
    at, with the variables tests/qdrant_server.py starts its servers with, and the
    memoryd line a valid qdrant configuration."""
    server = {}
    for line in shell_lines(_one("qdrant-start").code):
        server.update(_assignments(line))
    assert {
        "QDRANT__SERVICE__HOST",
        "QDRANT__SERVICE__HTTP_PORT",
        "QDRANT__SERVICE__GRPC_PORT",
        "QDRANT__STORAGE__STORAGE_PATH",
        "QDRANT__STORAGE__SNAPSHOTS_PATH",
    } <= set(server)
    (run,) = list(shell_lines(_one("qdrant-run").code))
    env = _assignments(run)
    assert run.endswith("make run")
    settings = Settings(
        storage={
            "backend": env["MEMORYD_STORAGE__BACKEND"],  # type: ignore[arg-type]
            "qdrant": {"url": env["MEMORYD_STORAGE__QDRANT__URL"]},
        }
    )
    assert settings.storage.qdrant.url == (
        f"http://{server['QDRANT__SERVICE__HOST']}:{server['QDRANT__SERVICE__HTTP_PORT']}"
    )
    grpc_port, _ = settings.storage.qdrant.grpc_endpoint()
    assert str(grpc_port) == server["QDRANT__SERVICE__GRPC_PORT"]
    assert set(env) <= _env_names(Settings, "MEMORYD_")
