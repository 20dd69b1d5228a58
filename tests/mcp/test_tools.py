"""Every MCP tool over both transports against a live daemon, with the SDK's own client:
listing, structured results that match the advertised output schemas, tool errors that
name the field, the file-style memory tool, resources and the prompt, identity."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import jsonschema
import pytest

from memoryd_client.tool_table import MCP_TOOLS, TOOLS
from tests.mcp.conftest import ALICE, BOB, READER, McpDaemon
from tests.mcp.support import TRANSPORTS, error_of, mcp_client

pytestmark = pytest.mark.parametrize("transport", TRANSPORTS)


async def test_lists_every_tool_with_schemas_and_annotations(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(MCP_TOOLS)
    for name, tool in tools.items():
        spec = TOOLS[name]
        assert tool.description == spec.description
        assert tool.input_schema == spec.input_schema()
        assert tool.output_schema == spec.output_schema()
        assert "tenant_id" not in tool.input_schema["properties"]  # never from an argument
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is spec.read_only
        assert tool.annotations.destructive_hint is spec.destructive
        assert tool.annotations.idempotent_hint is spec.idempotent
    assert tools["recall"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["forget"].annotations.destructive_hint is True  # type: ignore[union-attr]


def _calls(agent: str) -> list[tuple[str, dict[str, Any]]]:
    session = f"s-{agent}"
    scope = {"thread_id": "t1", "resource_id": "r1"}
    return [
        ("remember", {"content": "Ada prefers green tea in the morning", "source": "user"}),
        ("recall", {"query": "what does Ada drink?", "limit": 3}),
        ("set_memory", {"key": "/user/drink", "value": {"name": "green tea"}, "source": "user"}),
        (
            "set_memory",
            {
                "key": "/kb/tea",
                "value": "Sencha is a green tea",
                "source": "web:https://example.org/tea",
            },
        ),
        ("get_memory_key", {"key": "/user/drink"}),
        ("get_memory_key", {"key": "/user/never-written"}),
        ("list_memory_keys", {"prefix": "/", "recursive": True}),
        ("memory_key_history", {"key": "/user/drink"}),
        ("default_read", {"token_limit": 200}),
        ("update_working_memory", {"updates": {"step": 1}, "ttl_seconds": 3600, **scope}),
        ("get_working_memory", scope),
        ("read_agent_memory", {}),
        ("update_agent_memory", {"content": "# Agent\nBe brief.", "etag": "none"}),
        (
            "record_messages",
            {"session_id": session, "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("get_session_window", {"session_id": session, "token_budget": 500}),
        ("save_state", {"session_id": session, "components": {"planner": {"step": 2}}}),
        ("load_state", {"session_id": session}),
        ("build_snapshot", {"trigger": "what does Ada drink?", "session_id": session}),
        ("memory", {"command": "view", "path": "/memories"}),
        ("forget", {"ids": ["00000000-0000-0000-0000-000000000000"]}),
        ("erase", {"key_prefix": "/kb", "dry_run": True}),
        ("verify_erasure", {"needles": ["a-string-never-stored-7f3e"]}),
    ]


async def test_every_tool_returns_structured_content_of_its_schema(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    agent = f"every-{transport}"
    results: dict[str, list[dict[str, Any]]] = {}
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        for name, arguments in _calls(agent):
            result = await client.call_tool(name, {**arguments, "agent_id": agent})
            assert not result.is_error, (name, result.content)
            structured = result.structured_content
            assert structured is not None
            jsonschema.validate(structured, schemas[name])
            assert json.loads(result.content[0].text) == structured  # text mirrors it
            results.setdefault(name, []).append(structured)
    assert results["recall"][0]["memories"][0]["content"] == "Ada prefers green tea in the morning"
    assert results["get_memory_key"][0]["value"] == {"name": "green tea"}
    assert results["get_memory_key"][0]["source"]["kind"] == "user"
    assert results["get_memory_key"][1] == {
        "found": False, "key": "/user/never-written", "value": None, "version": 0, "deleted": False
    }  # fmt: skip
    kb = await _key(mcp_daemon, transport, agent, "/kb/tea")
    assert kb["source"]["kind"] == "web" and kb["source"]["locator"] == "https://example.org/tea"
    listed = [k["key"] for k in results["list_memory_keys"][0]["keys"]]
    assert {"/user/drink", "/kb/tea"} <= set(listed)
    assert results["get_working_memory"][0]["content"] == {"step": 1}
    assert results["get_working_memory"][0]["expires_at"] is not None  # ttl_seconds applied
    assert results["read_agent_memory"][0]["found"] is False
    assert results["get_session_window"][0]["messages"] == [{"role": "user", "content": "hi"}]
    assert results["load_state"][0]["components"] == {"planner": {"step": 2}}
    assert "green tea" in results["build_snapshot"][0]["text"]
    assert results["forget"][0] == {"forgotten": []}
    dry = results["erase"][0]
    assert dry["dry_run"] is True and dry["places"]["records.key"] == 1  # /kb/tea
    assert results["verify_erasure"][0]["residue"] == []


async def test_the_erasure_tools_erase_for_an_admin_and_refuse_anyone_else(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    agent, marker = f"erase-{transport}", f"zqmcp{transport}erase"
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        stored = await client.call_tool(
            "remember", {"content": f"{marker} secret", "source": "user", "agent_id": agent}
        )
        memory_id = stored.structured_content["id"]  # type: ignore[index]
        erased = await client.call_tool("erase", {"ids": [memory_id], "agent_id": agent})
        assert erased.structured_content["ids"] == [memory_id]  # type: ignore[index]
        assert len(erased.structured_content["digest"]) == 64  # type: ignore[index]
        checked = await client.call_tool("verify_erasure", {"needles": [marker]})
        assert checked.structured_content["residue"] == []  # type: ignore[index]
    calls = (("erase", {"whole_agent": True}), ("verify_erasure", {"needles": [marker]}))
    for key in (BOB, READER):  # no admin role
        async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, key.raw) as client:
            for name, arguments in calls:
                refused = await client.call_tool(name, {**arguments, "agent_id": "a1"})
                assert error_of(refused)["error"] == "PERMISSION_DENIED", (key.name, name)


async def _key(mcp_daemon: McpDaemon, transport: str, agent: str, key: str) -> dict[str, Any]:
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        result = await client.call_tool("get_memory_key", {"key": key, "agent_id": agent})
    assert result.structured_content is not None
    return result.structured_content


async def test_bad_input_is_a_tool_error_naming_the_field_and_stores_nothing(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    agent = f"bad-{transport}"
    bad = [
        ("set_memory", {"key": "no-slash", "value": 1, "source": "user"}, "key"),
        ("set_memory", {"key": "/user/x", "source": "user"}, "value"),
        ("set_memory", {"key": "/user/x", "value": 1}, "source"),
        ("set_memory", {"key": "/kb/fact", "value": "x", "source": "user"}, "source"),
        ("set_memory", {"key": "/a/../b", "value": 1, "source": "user"}, "key"),
        ("remember", {"content": ""}, "content"),
        ("remember", {"content": "x", "tenant_id": "globex"}, "tenant_id"),
        ("remember", {"content": "x", "source": "carrier-pigeon"}, "source"),
        ("recall", {"query": "x", "limit": 0}, "limit"),
        ("update_working_memory", {"updates": {"a": 1}, "ttl_seconds": -5}, "ttl_seconds"),
        ("memory", {"command": "create", "path": "/etc/passwd", "file_text": "x"}, "path"),
        ("memory", {"command": "create", "path": "/memories/../../x", "file_text": "x"}, "path"),
    ]
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        for name, arguments, field in bad:
            detail = error_of(await client.call_tool(name, {**arguments, "agent_id": agent}))
            assert detail["error"] == "INVALID_ARGUMENT", (name, detail)
            assert any(f.startswith(field) for f in detail.get("fields", {})), (name, detail)
        listed = await client.call_tool("list_memory_keys", {"recursive": True, "agent_id": agent})
        recalled = await client.call_tool("recall", {"query": "x", "agent_id": agent})
    assert listed.structured_content == {"keys": [], "directories": [], "more": False}
    assert recalled.structured_content == {"memories": []}


async def test_the_memory_file_tool_keeps_versions_and_is_searchable(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    agent = f"files-{transport}"
    path = "/memories/projects/lisbon.md"

    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:

        async def memory(**arguments: Any) -> Any:
            return await client.call_tool("memory", {**arguments, "agent_id": agent})

        created = await memory(command="create", path=path, file_text="# Lisbon\nbudget: low")
        assert created.structured_content["version"] == 1  # type: ignore[index]
        await memory(
            command="str_replace", path=path, old_str="budget: low", new_str="budget: 900 EUR"
        )
        await memory(command="insert", path=path, insert_line=1, insert_text="month: May")
        viewed = (await memory(command="view", path=path)).structured_content
        assert viewed is not None
        assert viewed["result"].split("\n") == [
            "     1\t# Lisbon", "     2\tmonth: May", "     3\tbudget: 900 EUR"
        ]  # fmt: skip
        missing = error_of(
            await memory(command="str_replace", path=path, old_str="nope", new_str="x")
        )
        assert "old_str" in missing["fields"]
        await memory(command="rename", old_path=path, new_path="/memories/trips/lisbon.md")
        listing = (await memory(command="view", path="/memories")).structured_content
        assert listing is not None and "/memories/trips/lisbon.md" in listing["result"]
        assert path not in listing["result"]
        history = await client.call_tool(
            "memory_key_history", {"key": "/memories/trips/lisbon.md", "agent_id": agent}
        )
        old = await client.call_tool("memory_key_history", {"key": path, "agent_id": agent})
        found = await client.call_tool("recall", {"query": "Lisbon budget May", "agent_id": agent})
        await memory(command="delete", path="/memories/trips")
        gone = error_of(await memory(command="view", path="/memories/trips/lisbon.md"))
    assert gone["fields"] == {"path": "/memories/trips/lisbon.md does not exist"}
    assert history.structured_content is not None and old.structured_content is not None
    assert [v["deleted"] for v in old.structured_content["versions"]] == [False, False, False, True]
    assert [v["source"]["kind"] for v in history.structured_content["versions"]] == ["agent"]
    assert found.structured_content is not None
    assert any("900 EUR" in m["content"] for m in found.structured_content["memories"])


async def test_resources_and_the_memory_context_prompt(
    mcp_daemon: McpDaemon, transport: str
) -> None:
    agent = f"res-{transport}"
    async with mcp_client(transport, mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        await client.call_tool(
            "update_agent_memory", {"content": "# Travel agent\nBe concise.", "agent_id": agent}
        )
        await client.call_tool(
            "set_memory",
            {"key": "/user/home", "value": "Porto", "source": "user", "agent_id": agent},
        )
        await client.call_tool(
            "remember", {"content": "Ada is afraid of flying", "agent_id": agent}
        )
        listed = await client.list_resources()
        profile = await client.read_resource(f"memory://agents/{agent}/agent.md")
        default_read = await client.read_resource(f"memory://agents/{agent}/default-read")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt(
            "memory_context", {"trigger": "book Ada a trip; does she fly?", "agent_id": agent}
        )
    assert {str(r.uri) for r in listed.resources} == {
        "memory://agents/a1/agent.md", "memory://agents/a1/default-read"
    }  # fmt: skip
    assert profile.contents[0].text == "# Travel agent\nBe concise."  # type: ignore[union-attr]
    assert "/user/home" in default_read.contents[0].text  # type: ignore[union-attr]
    assert [p.name for p in prompts.prompts] == ["memory_context"]
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "afraid of flying" in text and "Travel agent" in text


async def test_identity_is_the_transports(mcp_daemon: McpDaemon, transport: str) -> None:
    """Two tenants' keys and a low-clearance key: what each may see and do."""
    agent = "a1"
    secret = f"acme-secret-{transport}"
    d, url = mcp_daemon.daemon, mcp_daemon.url
    async with mcp_client(transport, d, url, ALICE.raw) as alice:
        await alice.call_tool("remember", {"content": f"{secret} launch codes", "agent_id": agent})
        await alice.call_tool(
            "set_memory",
            {"key": f"/ops/{transport}", "value": secret, "source": "agent", "agent_id": agent},
        )
    async with mcp_client(transport, d, url, BOB.raw) as bob:
        hits = await bob.call_tool("recall", {"query": f"{secret} launch codes", "agent_id": agent})
        key = await bob.call_tool("get_memory_key", {"key": f"/ops/{transport}", "agent_id": agent})
        bob_writes = await bob.call_tool("remember", {"content": "globex note", "agent_id": agent})
    assert hits.structured_content is not None  # globex's own notes only, never acme's
    assert not [m for m in hits.structured_content["memories"] if secret in m["content"]]
    assert key.structured_content is not None and key.structured_content["found"] is False
    assert not bob_writes.is_error
    async with mcp_client(transport, d, url, READER.raw) as reader:
        denied_write = error_of(await reader.call_tool("remember", {"content": "x"}))
        denied_agent = error_of(await reader.call_tool("recall", {"query": "x", "agent_id": "a2"}))
        low = await reader.call_tool("recall", {"query": f"{secret} launch codes"})
    assert denied_write["error"] == "PERMISSION_DENIED"
    assert denied_agent["error"] == "PERMISSION_DENIED"
    # Remembered at the default level (internal): above the reader's public clearance.
    assert low.structured_content is not None
    assert not [m for m in low.structured_content["memories"] if secret in m["content"]]
    if transport == "http":
        for headers in ({}, {"Authorization": "Bearer not-a-key"}):
            async with httpx2.AsyncClient() as http:
                response = await http.post(
                    url,
                    headers={**headers, "Accept": "application/json, text/event-stream"},
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                )
            assert response.status_code == 401
            assert response.json()["error"] == "UNAUTHENTICATED"
            assert "not-a-key" not in response.text
