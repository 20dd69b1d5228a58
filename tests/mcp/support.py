"""A live daemon with MCP on, and MCP clients of the official SDK over both transports:
Streamable HTTP to the daemon's endpoint, and stdio to a ``memoryd mcp`` bridge process
that talks gRPC to it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as stdio_transport
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO, Daemon
from tests.security.support import KeySpec, api_key_config, write_config

TRANSPORTS = ("http", "stdio")


def mcp_url(daemon: Daemon) -> str:
    """The endpoint the daemon logged when it started serving."""
    for line in reversed(daemon.logs().splitlines()):
        if line.startswith("{") and '"serving"' in line:
            url = json.loads(line).get("mcp")
            if url:
                return str(url)
    raise AssertionError("the daemon did not log an MCP endpoint")


def start_daemon(root: Path, keys: list[KeySpec], **extra: Any) -> tuple[Daemon, str]:
    """An api_key daemon (hashing embedder) with MCP on an ephemeral port."""
    config = api_key_config(keys, mcp={"listen": "127.0.0.1:0", "default_agent": "a1"}, **extra)
    daemon = Daemon(data_dir=root / "data", config_file=write_config(root / "memoryd.yaml", config))
    daemon.start()
    return daemon, mcp_url(daemon)


@asynccontextmanager
async def http_client(url: str, key: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


@asynccontextmanager
async def stdio_client(
    address: str, key: str | None, agent: str = "a1", errlog: TextIO | None = None
) -> AsyncIterator[Client]:
    """A ``memoryd mcp`` bridge process (its stderr to ``errlog``, else this one's)."""
    env = {k: v for k, v in os.environ.items() if k != "MEMORYD_API_KEY"}
    if key:
        env["MEMORYD_API_KEY"] = key
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryd", "mcp", "--address", address, "--agent", agent],
        env=env,
        cwd=str(REPO),
    )
    transport = stdio_transport(params, errlog=errlog) if errlog is not None else params
    async with Client(transport) as client:
        yield client


@asynccontextmanager
async def mcp_client(
    transport: str, daemon: Daemon, url: str, key: str | None
) -> AsyncIterator[Client]:
    if transport == "http":
        async with http_client(url, key) as client:
            yield client
    else:
        async with stdio_client(daemon.address, key) as client:
            yield client


def error_of(result: Any) -> dict[str, Any]:
    """The JSON detail of a tool error."""
    assert result.is_error, result
    return json.loads(result.content[0].text)
