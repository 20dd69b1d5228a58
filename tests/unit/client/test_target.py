"""parse_target: what users type as a daemon address -> a gRPC channel target."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd_client import DEFAULT_ADDRESS, TargetError, default_address, parse_target


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:50051", "127.0.0.1:50051"),
        ("localhost:7000", "localhost:7000"),
        ("  localhost:7000 ", "localhost:7000"),
        ("memoryd.internal", "memoryd.internal:50051"),
        ("[::1]:50051", "[::1]:50051"),
        ("[::1]", "[::1]:50051"),
        ("unix:/run/memoryd.sock", "unix:/run/memoryd.sock"),
        ("unix:///run/memoryd.sock", "unix:/run/memoryd.sock"),
        ("unix:relative/memoryd.sock", "unix:relative/memoryd.sock"),
        ("/run/memoryd.sock", "unix:/run/memoryd.sock"),
        ("/run/memoryd", "unix:/run/memoryd"),
        ("dns:///memoryd.internal:50051", "dns:///memoryd.internal:50051"),
        ("unix-abstract:memoryd", "unix-abstract:memoryd"),
    ],
)
def test_parse_target(given: str, expected: str) -> None:
    assert parse_target(given) == expected


def test_relative_socket_path_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_target("memoryd.sock") == f"unix:{tmp_path / 'memoryd.sock'}"
    assert parse_target("./run/m.sock") == f"unix:{tmp_path / 'run' / 'm.sock'}"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "unix:",
        "unix://host/run/memoryd.sock",
        "http://localhost:50051",
        "localhost:http",
        "localhost:0",
        "localhost:65536",
        ":50051",
        "::1:50051",
        "[::1",
        "[::1]50051",
    ],
)
def test_parse_target_rejects(bad: str) -> None:
    with pytest.raises(TargetError):
        parse_target(bad)


def test_target_error_is_a_value_error() -> None:
    assert issubclass(TargetError, ValueError)


def test_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORYD_ADDRESS", raising=False)
    assert default_address() == DEFAULT_ADDRESS == "127.0.0.1:50051"
    assert parse_target() == "127.0.0.1:50051"
    monkeypatch.setenv("MEMORYD_ADDRESS", "unix:///tmp/m.sock")
    assert parse_target() == "unix:/tmp/m.sock"
    monkeypatch.setenv("MEMORYD_ADDRESS", "  ")
    assert parse_target() == DEFAULT_ADDRESS
