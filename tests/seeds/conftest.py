"""One daemon for the seed suite, reached as each design document's users would: gRPC
through the Python client and MCP through the official MCP client over the daemon's
Streamable HTTP endpoint. api_key mode with a writer and an admin (Prune is admin's), a writer of another
tenant and one cleared up to "internal" only.

A seed test names each requirement it checks with the section of its document it
comes from (docstring or comment), so the seed table of the docs can be read off it.
Each test works in agents of its own, so the modules share the daemon (its start is
most of the suite's time); a document needing another configuration starts its own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client

from memoryd_client import MemorydClient
from tests.conftest import Daemon
from tests.mcp.support import http_client, start_daemon
from tests.security.support import KeySpec

WRITER = KeySpec("writer-" + "w" * 25, "writer", "acme", "*", "restricted", ("read", "write"))
ADMIN = KeySpec("admin-" + "a" * 26, "admin", "acme", "*", "restricted", ("read", "write", "admin"))
#: Another tenant, with the same agent ids (seed 003's tenant isolation).
GLOBEX = KeySpec("globex-" + "g" * 25, "globex", "globex", "*", "restricted", ("read", "write"))
#: acme, cleared up to "internal" only (seed 003's security levels).
INTERNAL = KeySpec("internal-" + "i" * 23, "internal", "acme", "*", "internal", ("read", "write"))


@dataclass
class SeedDaemon:
    daemon: Daemon
    url: str

    def grpc(self, key: KeySpec = WRITER) -> MemorydClient:
        """A Python gRPC client of the daemon (close it, or use it in ``with``)."""
        return MemorydClient(self.daemon.address, api_key=key.raw, timeout=60)

    @asynccontextmanager
    async def mcp(self, key: KeySpec = WRITER) -> AsyncIterator[McpTools]:
        async with http_client(self.url, key.raw) as client:
            yield McpTools(client)


@dataclass
class McpTools:
    """The official MCP client with the calls a host makes: a tool's structured result,
    or its error detail."""

    client: Client

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        assert result.structured_content is not None
        return result.structured_content

    async def error(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        assert result.is_error, (name, result.structured_content)
        detail: dict[str, Any] = json.loads(result.content[0].text)
        return detail

    async def tools(self) -> dict[str, Any]:
        return {t.name: t for t in (await self.client.list_tools()).tools}


def agent(prefix: str) -> str:
    """A fresh agent id: each test works in its own partition of the shared daemon."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="package")
def seed_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeedDaemon]:
    daemon, url = start_daemon(tmp_path_factory.mktemp("seed"), [WRITER, ADMIN, GLOBEX, INTERNAL])
    try:
        yield SeedDaemon(daemon, url)
    finally:
        daemon.kill()
