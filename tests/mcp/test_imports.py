"""MCP costs a daemon nothing until it is turned on: with mcp.listen unset, none of the
SDK, its web server or its OpenTelemetry API is imported."""

from __future__ import annotations

from tests.conftest import Daemon
from tests.integration.test_startup_imports import IMPORT_LOG, loaded


def test_a_daemon_without_mcp_loads_none_of_it(daemon_factory: type[Daemon]) -> None:
    d = daemon_factory(env={**IMPORT_LOG, "MEMORYD_EMBEDDER": "hashing"})
    d.start()
    modules = d.imported()
    assert loaded(modules, "memoryd.operations")
    for unused in ("mcp", "mcp_types", "uvicorn", "starlette", "httptools", "memoryd.mcp",
                   "opentelemetry"):  # fmt: skip
        assert not loaded(modules, unused), unused
