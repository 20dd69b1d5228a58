"""The generated TypeScript, Go and Java clients against a real daemon.

Each test installs its language's toolchain through the Makefile (idempotent stamps),
starts a daemon, runs that client's own end-to-end test (node --test, go test, Maven
Surefire) with MEMORYD_ADDRESS pointing at it, then runs the client's example program.
The client tests call Remember, Recall and BuildSnapshot and print how BuildSnapshot
answered; `make clients-check` (part of `make test`) guards the generated code itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, Daemon

#: Hang guards only: a cold run downloads npm packages, Go modules and Maven artifacts.
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 600
SNAPSHOT_OUTCOME = re.compile(r"BuildSnapshot: (OK|UNIMPLEMENTED)\b.*")
EXAMPLE_TOP_HIT = "The user prefers a dark blue colour scheme for slides"


@dataclass(frozen=True)
class Client:
    language: str
    tools: tuple[str, ...]
    #: The client's test command, run in clients/<language>.
    test: tuple[str, ...]
    #: Proves the runner ran and passed exactly the one e2e test (no silent zero-test run).
    passed: re.Pattern[str]
    example: Callable[[Path], list[str]]

    @property
    def directory(self) -> Path:
        return REPO / "clients" / self.language


def _java_example(directory: Path) -> list[str]:
    classpath = (directory / "target" / "classpath.txt").read_text().strip()
    return [
        "java",
        "-cp",
        os.pathsep.join([str(directory / "target" / "classes"), classpath]),
        "dev.memoryd.examples.RememberRecall",
    ]


CLIENTS = [
    Client(
        "typescript",
        ("node", "npm"),
        ("npm", "test"),
        re.compile(r"^# pass 1$.*^# fail 0$", re.MULTILINE | re.DOTALL),
        lambda _: ["node", "dist/examples/remember-recall.js"],
    ),
    Client(
        "go",
        ("go",),
        ("go", "test", "-count=1", "-v", "./..."),
        re.compile(r"^--- PASS: TestRememberRecallSnapshot\b", re.MULTILINE),
        lambda _: ["go", "run", "./examples/rememberrecall"],
    ),
    Client(
        "java",
        ("java", "mvn"),
        ("mvn", "test"),
        re.compile(r"Tests run: 1, Failures: 0, Errors: 0, Skipped: 0"),
        _java_example,
    ),
]


def _run(
    command: list[str] | tuple[str, ...],
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> str:
    """Runs a command; fails the test with its output unless it exits 0."""
    result = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` in {cwd} exited {result.returncode}:\n{result.stdout}")
    return result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.language)
def test_generated_client_end_to_end(
    client: Client,
    daemon_factory: Callable[[], Daemon],
    record_property: Callable[[str, object], None],
) -> None:
    missing = [tool for tool in client.tools if shutil.which(tool) is None]
    assert not missing, f"the {client.language} client needs {', '.join(missing)} on PATH"
    _run(["make", "-s", f"clients-deps-{client.language}"], REPO, INSTALL_TIMEOUT_S)

    daemon = daemon_factory()
    env = {"MEMORYD_ADDRESS": daemon.start()}

    output = _run(client.test, client.directory, RUN_TIMEOUT_S, env)
    assert client.passed.search(output), f"no passing e2e test in the output:\n{output}"
    outcome = SNAPSHOT_OUTCOME.search(output)
    assert outcome, f"the e2e test did not report BuildSnapshot's outcome:\n{output}"
    # Visible with -s / -rP and in the JUnit XML: which way BuildSnapshot answered.
    print(f"{client.language}: {outcome.group(0)}")
    record_property("build_snapshot", outcome.group(1))

    example = _run(client.example(client.directory), client.directory, RUN_TIMEOUT_S, env)
    first_line = example.strip().splitlines()[0] if example.strip() else ""
    assert first_line.endswith(EXAMPLE_TOP_HIT), f"the example recalled something else:\n{example}"
