"""memoryctl against a real daemon: through typer's CliRunner and as a real process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from memoryd.cli.memoryctl import app

from ..conftest import Daemon

COLOUR = "The user prefers a dark blue colour scheme for slides"
QUESTION = "what colours does the user like?"
UNRELATED = [
    "The quarterly budget review is scheduled for Tuesday morning",
    "Paris is the capital of France",
    "The deploy pipeline runs the integration tests before every release",
    "Alice's birthday is on the 3rd of May",
]
#: Generous, so a loaded CI machine cannot fail a call; not a performance assertion.
TIMEOUT = "60"
MEMORYCTL = Path(sys.executable).with_name("memoryctl")


def fresh_agent() -> str:
    return f"ctl-{uuid.uuid4().hex[:10]}"


def cli_env(address: str) -> dict[str, str | None]:
    # COLUMNS unset: tables are not wrapped when the output is not a terminal.
    return {"MEMORYD_ADDRESS": address, "MEMORYD_AGENT": None, "COLUMNS": None}


Invoke = Callable[..., Result]


@pytest.fixture
def ctl(shared_daemon: Daemon) -> Invoke:
    """Run memoryctl in-process against the shared daemon: ctl("recall", "q", "--agent", a)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(
            app, ["--timeout", TIMEOUT, *args], env=cli_env(shared_daemon.address), input=input
        )

    return invoke


def ok_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def remember(ctl: Invoke, agent: str, text: str, *extra: str) -> str:
    data = ok_json(ctl("remember", text, "--agent", agent, "--json", *extra))
    memory_id: str = data["memory"]["id"]
    return memory_id


# ------------------------------------------------------------------ the scenario


def _run(memoryctl: list[str], *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*memoryctl, "--timeout", TIMEOUT, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_remember_then_recall_as_a_real_process(shared_daemon: Daemon, ctl: Invoke) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "MEMORYD_AGENT")}
    env["MEMORYD_ADDRESS"] = shared_daemon.address
    # The installed console script when present, else the module: both are the real CLI.
    memoryctl = (
        [str(MEMORYCTL)] if MEMORYCTL.exists() else [sys.executable, "-m", "memoryd.cli.memoryctl"]
    )
    demo = fresh_agent()  # the shared daemon's other agents are not in its recall
    # The others through the CLI in process: a process each (~1.2 s of CPU) proves no more.
    for text in UNRELATED:
        remember(ctl, demo, text)
    stored = _run(memoryctl, "remember", COLOUR, "--agent", demo, env=env)
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.startswith("Remembered ")

    table = _run(memoryctl, "recall", QUESTION, "--agent", demo, env=env)
    assert table.returncode == 0, table.stderr
    rows = [line for line in table.stdout.splitlines() if re.match(r"^│\s*\d+\s*│", line)]
    assert rows, table.stdout
    first = re.match(r"^│\s*1\s*│\s*(\d+\.\d{3})\s*│\s*(.+?)\s*│", rows[0])
    assert first is not None, table.stdout
    assert first.group(2) == COLOUR
    assert 0.0 < float(first.group(1)) <= 1.0

    as_json = _run(memoryctl, "recall", QUESTION, "--agent", demo, "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    results = json.loads(as_json.stdout)["results"]
    assert results[0]["memory"]["content"] == COLOUR
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(scores[0] > s for s in scores[1:])
    assert results[0]["components"]["similarity"] > 0

    # Also the module form, with the agent from the environment.
    module = _run(
        [sys.executable, "-m", "memoryd.cli.memoryctl"],
        "recall",
        QUESTION,
        "--limit",
        "1",
        "--json",
        env={**env, "MEMORYD_AGENT": demo},
    )
    assert module.returncode == 0, module.stderr
    assert [r["memory"]["content"] for r in json.loads(module.stdout)["results"]] == [COLOUR]


# ------------------------------------------------------------------ CliRunner, shared daemon


def test_recall_json_carries_scores_and_filters(ctl: Invoke) -> None:
    agent = fresh_agent()
    for text in UNRELATED:
        remember(ctl, agent, text, "--tag", "misc")
    remember(ctl, agent, COLOUR, "--type", "preference", "--tag", "ui", "--importance", "0.9")

    data = ok_json(ctl("recall", QUESTION, "--agent", agent, "--json", "--limit", "2"))
    assert 1 <= len(data["results"]) <= 2
    best = data["results"][0]
    assert best["memory"]["content"] == COLOUR
    assert best["memory"]["memory_type"] == "MEMORY_TYPE_PREFERENCE"
    assert best["memory"]["tags"] == ["ui"]
    assert isinstance(best["score"], float)
    assert all(best["score"] > r["score"] for r in data["results"][1:])
    assert data["embedding_model"]

    only_misc = ok_json(ctl("recall", QUESTION, "--agent", agent, "--tag", "misc", "--json"))
    assert COLOUR not in {r["memory"]["content"] for r in only_misc["results"]}
    prefs = ok_json(
        ctl(
            "recall",
            QUESTION,
            "--agent",
            agent,
            "--type",
            "preference",
            "--scoring",
            "weighted",
            "--json",
        )
    )
    assert [r["memory"]["content"] for r in prefs["results"]] == [COLOUR]

    table = ctl("recall", QUESTION, "--agent", agent, "--limit", "1")
    assert table.exit_code == 0, table.output
    assert COLOUR in table.stdout and re.search(r"│\s*1\s*│\s*\d\.\d{3}\s*│", table.stdout)


def test_get_list_forget_round_trip(ctl: Invoke) -> None:
    agent = fresh_agent()
    ids = [remember(ctl, agent, text) for text in UNRELATED]
    meta = '{"turn": 3, "price": 1.50}'
    target = remember(ctl, agent, COLOUR, "--namespace", "slides", "--metadata", meta)

    got = ok_json(ctl("get", target, "--agent", agent, "--json"))["memory"]
    assert got["id"] == target and got["content"] == COLOUR
    assert got["namespace"] == "slides" and got["metadata"] == {"turn": 3, "price": 1.5}
    # Stored as typed (whitespace aside).
    assert got["metadata_json"] == '{"turn":3,"price":1.50}'
    detail = ctl("get", target, "--agent", agent)
    assert detail.exit_code == 0 and COLOUR in detail.stdout and target in detail.stdout
    assert '{"turn":3,"price":1.50}' in detail.stdout

    page = ok_json(ctl("list", "--agent", agent, "--limit", "2", "--json"))
    assert len(page["memories"]) == 2 and page["next_page_token"]
    everything = ok_json(ctl("list", "--agent", agent, "--limit", "2", "--all", "--json"))
    assert {m["id"] for m in everything["memories"]} == {*ids, target}
    assert everything["next_page_token"] == ""
    in_ns = ok_json(ctl("list", "--agent", agent, "--namespace", "slides", "--json"))
    assert [m["id"] for m in in_ns["memories"]] == [target]
    table = ctl("list", "--agent", agent, "--wide")
    assert table.exit_code == 0 and target in table.stdout and COLOUR in table.stdout

    gone = ok_json(ctl("forget", target, "no-such-id", "--agent", agent, "--json"))
    assert gone["forgotten_ids"] == [target]
    again = ctl("forget", target, "--agent", agent)
    assert again.exit_code == 0 and "Forgot 0 of 1" in again.stdout

    missing = ctl("get", target, "--agent", agent)
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: NOT_FOUND: ")
    remaining = ok_json(ctl("list", "--agent", agent, "--all", "--json"))
    assert {m["id"] for m in remaining["memories"]} == set(ids)


def test_remember_reads_stdin(ctl: Invoke) -> None:
    agent = fresh_agent()
    result = ctl(
        "remember", "-", "--agent", agent, "--type", "skill", "--json", input="From stdin\n"
    )
    memory = ok_json(result)["memory"]
    assert memory["content"] == "From stdin" and memory["memory_type"] == "MEMORY_TYPE_SKILL"
    assert ok_json(result)["deduplicated"] is False


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["remember", "", "--agent", "{agent}"], "content"),
        (["remember", "ok", "--agent", "{agent}", "--importance", "1.5"], "importance"),
        (["recall", "anything", "--agent", "{agent}", "--limit", "0"], "limit"),
        (["list", "--agent", "{agent}", "--limit", "0"], "page_size"),
    ],
)
def test_bad_input_exits_1_naming_the_field(ctl: Invoke, args: list[str], field: str) -> None:
    agent = fresh_agent()
    result = ctl(*(a.format(agent=agent) for a in args))
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: INVALID_ARGUMENT: ")
    assert any(line.strip().startswith(f"{field}: ") for line in lines[1:]), result.stderr


def test_usage_errors_exit_2(ctl: Invoke) -> None:
    assert ctl("recall", "q").exit_code == 2  # no --agent and no MEMORYD_AGENT
    assert ctl("remember", "x", "--agent", "a", "--metadata", "not json").exit_code == 2
    assert ctl("remember", "x", "--agent", "a", "--type", "opinion").exit_code == 2
    assert ctl("--address", "http://x:1", "health").exit_code == 2


def test_health(ctl: Invoke) -> None:
    plain = ctl("health")
    assert plain.exit_code == 0 and plain.stdout.strip() == "SERVING"
    assert ok_json(ctl("health", "--json")) == {"status": "SERVING"}
    service = ctl("health", "--service", "memoryd.v1.MemoryService")
    assert service.exit_code == 0 and service.stdout.strip() == "SERVING"


def test_no_daemon_says_how_to_start_one(tmp_path: Path) -> None:
    nowhere = f"unix:{tmp_path / 'nobody.sock'}"
    result = CliRunner().invoke(app, ["--address", nowhere, "health"], env=cli_env(""))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: UNAVAILABLE: no memoryd daemon answers at {nowhere}")
    assert "make run" in result.stderr


def test_help_everywhere() -> None:
    runner = CliRunner()
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert (
        top.exit_code == 0 and "memoryctl recall" in top.stdout and "MEMORYD_ADDRESS" in top.stdout
    )
    assert "MEMORYD_API_KEY" in top.stdout
    for command in ("remember", "recall", "get", "list", "forget", "health"):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0 and "--json" in result.stdout and "Example" in result.stdout


def test_the_api_key_comes_from_memoryd_api_key_and_errors_say_so(
    daemon_factory: type[Daemon], tmp_path: Path
) -> None:
    key = f"key-{uuid.uuid4().hex}"
    digest = hashlib.sha256(key.encode()).hexdigest()
    config = tmp_path / "api-key.yaml"
    config.write_text(
        "auth:\n  mode: api_key\n  keys:\n"
        f"    - {{sha256: {digest}, name: ctl, tenant_id: t, agents: '*', roles: [read, write]}}\n"
    )
    d = daemon_factory(env={"MEMORYD_EMBEDDER": "hashing"}, config_file=config)
    d.start()
    runner = CliRunner()
    args = ["--timeout", TIMEOUT, "list", "--agent", "a"]

    def run(api_key: str | None) -> Result:
        return runner.invoke(app, args, env={**cli_env(d.address), "MEMORYD_API_KEY": api_key})

    missing = run(None)
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: UNAUTHENTICATED: missing credential")
    assert "$MEMORYD_API_KEY" in missing.stderr.splitlines()[0]  # the daemon's own message
    assert "export MEMORYD_API_KEY=<your key>" in missing.stderr
    wrong = run("not-the-key")
    assert wrong.exit_code == 1 and "it is set, but not to a key the daemon knows" in wrong.stderr
    assert run(key).exit_code == 0


# ------------------------------------------------------------------ the client README


def test_main_readme_quickstart_python_runs(
    shared_daemon: Daemon,
    ctl: Invoke,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's Python example, which needs nothing `make run` does not install: it
    remembers and recalls, the memory first (and once: a near-duplicate updates)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    first_calls = readme.split("### From Python", 1)[1].split("\n### ", 1)[0]
    example = re.search(r"<<'EOF'\n(.*?)\nEOF\n", first_calls, re.S)
    assert example is not None
    agent = fresh_agent()
    remember(ctl, agent, COLOUR)
    monkeypatch.setenv("MEMORYD_ADDRESS", shared_daemon.address)
    exec(compile(example.group(1).replace('"demo"', repr(agent)), "README.md", "exec"), {})
    first = capsys.readouterr().out.splitlines()[0]
    assert re.fullmatch(rf"\d\.\d{{3}}  {re.escape(COLOUR)}", first)


def test_client_readme_example_runs(
    shared_daemon: Daemon, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "clients/python/README.md").read_text()
    section = readme.split("## Remember and recall", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    monkeypatch.setenv("MEMORYD_ADDRESS", shared_daemon.address)
    code = example.group(1).replace('"demo"', repr(fresh_agent()))
    exec(compile(code, "README.md", "exec"), {})
    first = capsys.readouterr().out.splitlines()[0]
    assert re.fullmatch(rf"\d\.\d{{3}}  {re.escape(COLOUR)}", first)
