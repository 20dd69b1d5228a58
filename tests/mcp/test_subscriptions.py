"""Resource subscriptions over the stdio bridge, on top of Watch: a host listening to an
agent's default-read resource hears ``notifications/resources/updated`` for every
change of the agent's keys (not for another agent's, nor for a long-term memory), and
on its agent.md resource for a change of its profile, also
after the daemon was SIGKILLed and restarted under it (the bridge's watch resumes from
its cursor); the advertised capability says subscriptions are served."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import Daemon
from tests.mcp.conftest import ALICE, BOB, READER, McpDaemon
from tests.mcp.support import http_client, stdio_client
from tests.qdrant_server import free_port
from tests.security.support import api_key_config, write_config

URI = "memory://agents/a1/default-read"
PROFILE = "memory://agents/a1/agent.md"
#: How long a test waits for a notification that must come.
EVENT_S = 20.0
#: How long it waits to see that a notification that must not come does not.
QUIET_S = 1.5


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    # Its own daemon on a port chosen here: the restart must keep the bridge's address.
    config = api_key_config([ALICE, BOB, READER], mcp={"default_agent": "a1"})
    d = Daemon(
        data_dir=tmp_path / "data",
        config_file=write_config(tmp_path / "memoryd.yaml", config),
        listen=f"127.0.0.1:{free_port()}",
    )
    d.start()
    try:
        yield d
    finally:
        d.kill()


async def set_key(client: Client, agent: str, key: str, value: object) -> None:
    result = await client.call_tool(
        "set_memory", {"agent_id": agent, "key": key, "value": value, "source": "user"}
    )
    assert not result.is_error, result


async def test_key_changes_notify_subscribers_and_survive_a_daemon_crash(
    daemon: Daemon,
) -> None:
    async with stdio_client(daemon.address, ALICE.raw) as client:
        caps = client.server_capabilities
        assert caps is not None and caps.resources is not None and caps.resources.subscribe
        async with client.listen(resource_subscriptions=[URI, PROFILE]) as sub:
            assert list(sub.honored.resource_subscriptions or []) == [URI, PROFILE]
            events = sub.__aiter__()
            first = asyncio.ensure_future(events.__anext__())
            await client.call_tool(
                "remember", {"agent_id": "a1", "content": "not a key", "source": "user"}
            )
            await set_key(client, "a2", "/user/elsewhere", 1)  # another agent
            await asyncio.wait([first], timeout=QUIET_S)
            assert not first.done()  # neither a memory nor another agent's key notifies
            await set_key(client, "a1", "/user/colour", "green")
            event = await asyncio.wait_for(first, EVENT_S)
            assert event.uri == URI  # type: ignore[union-attr]
            profile = {"agent_id": "a1", "content": "# a1\nBe brief.", "etag": "none"}
            assert not (await client.call_tool("update_agent_memory", profile)).is_error
            event = await asyncio.wait_for(events.__anext__(), EVENT_S)
            assert event.uri == PROFILE  # type: ignore[union-attr]
            await asyncio.to_thread(daemon.kill)
            await asyncio.to_thread(daemon.start)
            # The bridge reconnects to the restarted daemon; its watch resumes.
            for _ in range(100):
                result = await client.call_tool(
                    "set_memory",
                    {"agent_id": "a1", "key": "/user/colour", "value": None, "source": "user"},
                )
                if not result.is_error:
                    break
                await asyncio.sleep(0.1)
            event = await asyncio.wait_for(events.__anext__(), EVENT_S)
            assert event.uri == URI  # type: ignore[union-attr]


async def test_subscriptions_on_the_daemons_http_endpoint_per_principal(
    mcp_daemon: McpDaemon,
) -> None:
    """Over the daemon's own Streamable HTTP endpoint: a listen stream hears its agent's
    key changes and profile changes; another tenant listening to the same URI (its own
    agent of that name) hears nothing of them; a principal that may not act for the
    agent is refused the listen."""
    agent = f"h{uuid.uuid4().hex[:8]}"
    uri, profile = (f"memory://agents/{agent}/{leaf}" for leaf in ("default-read", "agent.md"))
    async with (
        http_client(mcp_daemon.url, ALICE.raw) as alice,
        http_client(mcp_daemon.url, BOB.raw) as bob,
    ):
        caps = alice.server_capabilities
        assert caps is not None and caps.resources is not None and caps.resources.subscribe
        async with (
            alice.listen(resource_subscriptions=[uri, profile]) as mine,
            bob.listen(resource_subscriptions=[uri]) as theirs,
        ):
            assert list(mine.honored.resource_subscriptions or []) == [uri, profile]
            events, others = mine.__aiter__(), theirs.__aiter__()
            first = asyncio.ensure_future(events.__anext__())
            other = asyncio.ensure_future(others.__anext__())
            await alice.call_tool(
                "remember", {"agent_id": agent, "content": "not a key", "source": "user"}
            )
            await asyncio.wait([first], timeout=QUIET_S)
            assert not first.done()  # a long-term memory does not notify
            await set_key(alice, agent, "/user/colour", "green")
            assert (await asyncio.wait_for(first, EVENT_S)).uri == uri  # type: ignore[union-attr]
            content = {"agent_id": agent, "content": "# Agent", "etag": "none"}
            assert not (await alice.call_tool("update_agent_memory", content)).is_error
            event = await asyncio.wait_for(events.__anext__(), EVENT_S)
            assert event.uri == profile  # type: ignore[union-attr]
            await asyncio.wait([other], timeout=QUIET_S)
            assert not other.done()  # another tenant's agent of the same name
            other.cancel()
    async with http_client(mcp_daemon.url, READER.raw) as reader:  # agent a1 only
        with pytest.raises(MCPError):
            async with reader.listen(resource_subscriptions=[uri]):
                pass
