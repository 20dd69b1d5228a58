"""memoryctl's wm, profile and session commands: registered, documented, --json everywhere."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from memoryd.cli.memoryctl import app

COMMANDS = [
    ("wm", "set"),
    ("wm", "get"),
    ("wm", "delete"),
    ("wm", "ls"),
    ("profile", "get"),
    ("profile", "set"),
    ("session", "append"),
    ("session", "window"),
    ("session", "inject"),
    ("session", "end"),
    ("session", "messages"),
    ("session", "delete"),
    ("session", "clear"),
]


@pytest.mark.parametrize(("group", "command"), COMMANDS)
def test_help(group: str, command: str) -> None:
    result = CliRunner().invoke(app, [group, command, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "--json" in result.stdout and "Example" in result.stdout


def test_groups_are_listed() -> None:
    top = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert all(group in top.stdout for group in ("wm", "profile", "session"))


def test_bad_json_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        app, ["wm", "set", "[1, 2]", "--agent", "a", "-T", "t"], env={"COLUMNS": "120"}
    )
    assert result.exit_code == 2 and "must be a JSON object" in result.output
