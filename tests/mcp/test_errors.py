"""MCP errors as the spec says (issue 30, item 7), over Streamable HTTP and the stdio
bridge, with the SDK's own client.

Failed ``resources/read`` and ``prompts/get`` used to answer JSON-RPC code 0 (the
bridge: -32603 "Internal server error", with a traceback on its stderr). Now: bad
parameters are -32602 naming the field, an unknown resource -32002 (the spec's
"Resource not found"), an unknown prompt or tool -32602 (the spec's examples), and
memoryd's own refusals (permission denied, ...) the application code of their status
(mcp/errors.py), with the status in ``data``. A tool's denial or not-found stays a
tool result with ``isError``. Nothing is printed to the bridge's stderr or logged as
an exception by the daemon for any of them.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memoryd.mcp.errors import JSONRPC_CODES, RESOURCE_NOT_FOUND
from tests.mcp.conftest import ALICE, READER, McpDaemon
from tests.mcp.support import TRANSPORTS, error_of, http_client, stdio_client

pytestmark = pytest.mark.parametrize("transport", TRANSPORTS)

INVALID_PARAMS = -32602


@asynccontextmanager
async def _client(
    mcp_daemon: McpDaemon, transport: str, key: str, stderr: list[str]
) -> AsyncIterator[Client]:
    """A client; what the bridge printed to stderr is appended to ``stderr`` at exit."""
    if transport == "http":
        async with http_client(mcp_daemon.url, key) as client:
            yield client
        return
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(mcp_daemon.daemon.address, key, errlog=errlog) as client:
            yield client
        errlog.seek(0)
        stderr.append(errlog.read())


async def _error(call: Callable[[], Awaitable[Any]]) -> MCPError:
    with pytest.raises(MCPError) as raised:
        await call()
    return raised.value


async def test_resource_and_prompt_failures_carry_spec_codes(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    stderr: list[str] = []
    logged_before = len(mcp_daemon.daemon.logs())
    async with _client(mcp_daemon, transport, READER.raw, stderr) as reader:
        # The reader may act for agent a1 only.
        denied_resource = await _error(lambda: reader.read_resource("memory://agents/a2/agent.md"))
        denied_prompt = await _error(
            lambda: reader.get_prompt("memory_context", {"trigger": "x", "agent_id": "a2"})
        )
        unknown_resource = await _error(lambda: reader.read_resource("memory://agents/a1/nope"))
        foreign_scheme = await _error(lambda: reader.read_resource("file:///etc/passwd"))
        unknown_prompt = await _error(lambda: reader.get_prompt("no_such_prompt", {}))
        no_trigger = await _error(lambda: reader.get_prompt("memory_context", {}))
        bad_budget = await _error(
            lambda: reader.get_prompt("memory_context", {"trigger": "x", "token_budget": "-3"})
        )
        unknown_tool = await _error(lambda: reader.call_tool("no_such_tool", {}))
        # A tool's refusals stay tool results.
        denied_tool = error_of(await reader.call_tool("recall", {"query": "x", "agent_id": "a2"}))
        denied_write = error_of(await reader.call_tool("remember", {"content": "x"}))
        # And the reader's own reads still work on the same session.
        fine = await reader.read_resource("memory://agents/a1/agent.md")

    permission_denied = JSONRPC_CODES["PERMISSION_DENIED"]
    assert permission_denied not in (0, -32603, INVALID_PARAMS, RESOURCE_NOT_FOUND)
    for denied in (denied_resource, denied_prompt):
        assert denied.code == permission_denied, (denied.code, denied.message)
        assert denied.data["status"] == "PERMISSION_DENIED"
        assert "a2" in denied.message
    for missing in (unknown_resource, foreign_scheme):
        assert missing.code == RESOURCE_NOT_FOUND, (missing.code, missing.message)
        assert missing.data["uri"]
    assert unknown_prompt.code == INVALID_PARAMS and "no_such_prompt" in unknown_prompt.message
    assert no_trigger.code == INVALID_PARAMS and "trigger" in no_trigger.data["fields"]
    assert bad_budget.code == INVALID_PARAMS and "token_budget" in bad_budget.data["fields"]
    assert unknown_tool.code == INVALID_PARAMS and "no_such_tool" in unknown_tool.message
    assert denied_tool["error"] == "PERMISSION_DENIED"
    assert denied_write["error"] == "PERMISSION_DENIED"
    assert fine.contents
    if transport == "stdio":
        assert stderr == [""], stderr[0][-3000:]
    logged = mcp_daemon.daemon.logs()[logged_before:]
    assert "Traceback" not in logged and '"exception"' not in logged, logged[-3000:]


async def test_an_internal_failure_never_answers_code_zero(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    """Whatever the failure, a resource or prompt error is never code 0."""
    stderr: list[str] = []
    async with _client(mcp_daemon, transport, ALICE.raw, stderr) as alice:
        agent = "x" * 10_000  # longer than any agent id may be
        errors = [
            await _error(lambda: alice.read_resource(f"memory://agents/{agent}/agent.md")),
            await _error(
                lambda: alice.get_prompt("memory_context", {"trigger": "x", "agent_id": agent})
            ),
        ]
    for error in errors:
        assert error.code == INVALID_PARAMS, (error.code, error.message)
        assert error.data["fields"]
