"""One MCP-enabled api_key daemon for the MCP suite (per worker: test_tools and
test_readme share it): two tenants and a low-clearance key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.conftest import Daemon
from tests.mcp.support import start_daemon
from tests.security.support import KeySpec

ALICE = KeySpec("alice-" + "a" * 24, "alice", "acme", "*", "restricted", ("read", "write", "admin"))
BOB = KeySpec("bob-" + "b" * 26, "bob", "globex", "*", "restricted", ("read", "write"))
#: acme, agent a1 only, PUBLIC clearance, read only.
READER = KeySpec("reader-" + "r" * 23, "reader", "acme", ("a1",), "public", ("read",))


@dataclass
class McpDaemon:
    daemon: Daemon
    url: str


@pytest.fixture(scope="session")
def mcp_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpDaemon]:
    daemon, url = start_daemon(tmp_path_factory.mktemp("mcp"), [ALICE, BOB, READER])
    try:
        yield McpDaemon(daemon, url)
    finally:
        daemon.kill()
