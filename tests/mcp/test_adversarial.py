"""The security suite's adversarial world, attacked through MCP.

The world of tests/security (three tenants with the same agent names, principals with
random agents, clearances and roles, secrets at every level in every kind of record)
is seeded over gRPC by its own Seeder; then every principal calls every reading tool
over Streamable HTTP (and, for one principal per tenant, over the stdio bridge) for its
own and for foreign agents, naming every artifact of every tenant it can name (keys,
sessions, working-memory scopes). A secret or id of an artifact the principal may not
see, anywhere in any answer, is a leak; a call for an agent it may not act for, or a
write without the write role, must be a PERMISSION_DENIED tool error.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from mcp import Client

from tests.conftest import Daemon
from tests.mcp.support import http_client, start_daemon, stdio_client
from tests.security import seeding
from tests.security.conftest import SEED
from tests.security.world import AGENTS, TOKEN_RE, Principal, World, make_principals

READ_TOOLS = ("recall", "get_memory_key", "memory_key_history", "list_memory_keys",
              "default_read", "get_working_memory", "read_agent_memory", "build_snapshot",
              "get_session_window", "load_state", "memory")  # fmt: skip


@dataclass
class Findings:
    calls: int = 0
    leaks: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def world_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Daemon, str]]:
    rng = random.Random(SEED)
    world = World(principals=make_principals(rng))
    daemon, url = start_daemon(
        tmp_path_factory.mktemp("mcp-world"), [p.key for p in world.principals]
    )
    channel = grpc.insecure_channel(daemon.address)
    try:
        seeding.Seeder(world, channel, rng).seed()
        yield world, daemon, url
    finally:
        channel.close()
        daemon.kill()


def _attempts(world: World, agent: str) -> list[tuple[str, dict[str, Any]]]:
    """Every read a principal can aim at anything in the world, for ``agent``."""
    out: list[tuple[str, dict[str, Any]]] = [
        (
            "recall",
            {"query": " ".join(a.words for a in world.artifacts[:40] if a.words), "limit": 50},
        ),
        ("list_memory_keys", {"prefix": "/", "recursive": True}),
        ("default_read", {}),
        ("read_agent_memory", {}),
        ("memory", {"command": "view", "path": "/memories"}),
    ]
    # Every artifact of every tenant for this agent name, and a sample of the others.
    named = [a for a in world.artifacts if a.agent == agent]
    others = [a for a in world.artifacts if a.agent != agent]
    for artifact in named + random.Random(agent).sample(others, min(10, len(others))):
        refs = artifact.refs
        if "key" in refs:
            out += [
                ("get_memory_key", {"key": refs["key"]}),
                ("memory_key_history", {"key": refs["key"]}),
            ]
        if "thread_id" in refs:
            scope = {"thread_id": refs["thread_id"], "resource_id": refs["resource_id"]}
            out += [("get_working_memory", scope), ("build_snapshot", {"trigger": "x", **scope})]
        if "session_id" in refs:
            out += [
                ("get_session_window", {"session_id": refs["session_id"]}),
                ("load_state", {"session_id": refs["session_id"]}),
            ]
    return [(name, {**args, "agent_id": agent}) for name, args in out]


async def _attack(
    client: Client, world: World, p: Principal, findings: Findings, agents: list[str]
) -> None:
    for agent in agents:
        for name, arguments in _attempts(world, agent):
            result = await client.call_tool(name, arguments)
            findings.calls += 1
            text = " ".join(c.text for c in result.content if hasattr(c, "text"))
            if not p.may_act_for(agent) or "read" not in p.roles:
                if not result.is_error or json.loads(text)["error"] != "PERMISSION_DENIED":
                    findings.wrong.append(f"{p.name} {name} for {agent}: {text[:120]}")
                continue
            sent = set(TOKEN_RE.findall(json.dumps(arguments)))  # echoes of the request
            for token in set(TOKEN_RE.findall(text)) - sent:
                owner = world.owner.get(token)
                if owner is not None and not owner.visible_to(p, [agent]):
                    findings.leaks.append(f"{p.name} {name} for {agent} saw {owner.kind} {token}")
        write = await client.call_tool(
            "remember", {"content": "probe", "agent_id": agent, "security_level": "public"}
        )
        allowed = p.may_act_for(agent) and "write" in p.roles
        if write.is_error == allowed:
            detail = write.content[0].text if write.content else ""  # type: ignore[union-attr]
            findings.wrong.append(f"{p.name} remember for {agent}: {detail[:160]}")


async def test_no_principal_sees_or_writes_what_it_may_not_over_http(
    world_daemon: tuple[World, Daemon, str],
) -> None:
    world, _, url = world_daemon
    findings = Findings()
    for p in world.principals:
        async with http_client(url, p.key.raw) as client:
            await _attack(client, world, p, findings, list(AGENTS))
    assert findings.calls > 300
    assert not findings.leaks, findings.leaks[:10]
    assert not findings.wrong, findings.wrong[:10]


async def test_the_stdio_bridge_carries_the_same_identity(
    world_daemon: tuple[World, Daemon, str],
) -> None:
    world, daemon, _ = world_daemon
    findings = Findings()
    for tenant in sorted({p.tenant for p in world.principals}):
        p = next(p for p in world.principals if p.tenant == tenant and p.agents is not None)
        async with stdio_client(daemon.address, p.key.raw, agent=AGENTS[0]) as client:
            await _attack(client, world, p, findings, list(AGENTS))
    assert findings.calls > 100
    assert not findings.leaks, findings.leaks[:10]
    assert not findings.wrong, findings.wrong[:10]
