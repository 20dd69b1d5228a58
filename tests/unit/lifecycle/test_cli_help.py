"""memoryctl's snapshot and lifecycle commands: registered, documented, --json everywhere."""

from __future__ import annotations

from datetime import timedelta

import pytest
import typer
from typer.testing import CliRunner

from memoryd.cli.lifecycle import parse_age
from memoryd.cli.memoryctl import app

COMMANDS = [
    ("snapshot",),
    ("default-read",),
    ("state", "save"),
    ("state", "load"),
    ("stats",),
    ("archive",),
    ("restore",),
    ("prune",),
    ("reset",),
    ("compact",),
    ("maintenance",),
    ("consolidate",),
    ("reembed",),
    ("export",),
    ("import",),
]


@pytest.mark.parametrize("command", COMMANDS)
def test_help(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "--json" in result.stdout and "Example" in result.stdout


def test_ages() -> None:
    assert parse_age("30d") == timedelta(days=30)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("90m") == timedelta(minutes=90)
    assert parse_age("2") == timedelta(days=2)
    with pytest.raises(typer.BadParameter):
        parse_age("soon")
