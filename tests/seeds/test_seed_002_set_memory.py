"""Seed 002, "Agent Memory Module — 需求设计文档 v2.1" (keyed set_memory), replayed
against a daemon.

The document designs one write entry ``set_memory(key, json_content, source)`` with
last-write-wins slots, tombstones and provenance, stored as ``log.jsonl`` envelopes
and an ``index/`` tree under ``memory_root`` that the agent reads with bash, and a
default read. Its checkable requirements, by section:

- §3.1.1 the signature: ``source`` is an object or a string; §3.2.2 a source object's
  ``locator`` is a URL / path / tool query / event id / content hash, shown as an
  object (``{"conversation_id": "c123", "message_id": "m456"}``).
- §3.1.2 upsert (last write wins) and tombstone (``null``); ``{}`` is NOT a tombstone.
- §3.1.4 the key starts with "/" and is normalised; ``source`` is required; §3.2.1
  keys under /kb/ need provenance (name, retrieved_at, locator).
- §4.1 the envelope ``{key, ts, valid, source, content}``, content as written.
- §4.2 keys map into ``memory_root/index/...`` predictably and safely (never outside).
- §4.3 ``log.jsonl``, ``index/``, ``state.jsonl``; §6.2/§6.3 ``ls
  memory/index/user/calendar/`` lists the entries, ``grep "牙科" memory/log.jsonl``
  finds them, jq's ``select(.valid==true and .content.type=="reminder")`` works.
- §5.2/§5.3/§5.5 default read with token_limit, tags and current_time: tombstones
  and expired keys left out; lines ``key type summary`` under "[Agent Memory]".
- Appendix A: the calls A.1 (preference), A.2 (a calendar entry), A.3 (its
  tombstone) and A.4 (a /kb/ write with web provenance), verbatim except A.4's
  elided ``"data":{...}``.

Each runs through gRPC (the Python client) and MCP (the official MCP client), and
the tree is read with the real ``ls`` and ``grep`` from the daemon's memory_root (on
by default in its data dir). Not checkable against a daemon: the Timer / set_timer
scheduling (§1.3, §10: outside the module), self-improve (§2.1, the agent's), the
NFR timings (§9: bench/).
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memoryd_client import InvalidArgumentError, MemorydClient, NotFoundError
from tests.seeds.conftest import SeedDaemon, agent

STYLE = "/user/preference/style"
DENTIST = "/user/calendar/2026-02-23_10-00_牙科复诊"
SPEC = "/kb/product/iphone16/spec"
#: A.1, verbatim.
A1 = (
    STYLE,
    {
        "type": "preference",
        "summary": "用户喜欢中文、偏好简洁",
        "importance": 6,
        "tags": ["language", "style"],
    },
    {
        "kind": "user",
        "name": "chat",
        "retrieved_at": "2026-02-22T10:00:00Z",
        "locator": {"conversation_id": "c1", "message_id": "m9"},
    },
)
#: A.2, verbatim.
A2 = (
    DENTIST,
    {
        "type": "reminder",
        "text": "明天10点牙科复诊",
        "importance": 8,
        "tags": ["health"],
        "trigger_at": "2026-02-23T10:00:00-08:00",
    },
    {
        "kind": "user",
        "name": "chat",
        "retrieved_at": "2026-02-22T10:01:00Z",
        "locator": {"conversation_id": "c1", "message_id": "m10"},
    },
)
#: A.3, verbatim.
A3 = (
    DENTIST,
    None,
    {
        "kind": "agent",
        "name": "reminder_done",
        "retrieved_at": "2026-02-23T10:02:00-08:00",
        "locator": {"reason": "sent"},
    },
)
#: A.4, verbatim but for the document's elided "data":{...}.
A4 = (
    SPEC,
    {
        "type": "kb",
        "data": {"chip": "A18", "display": "6.1 inch"},
        "summary": "iPhone16 主要规格汇总",
    },
    {
        "kind": "web",
        "name": "apple.com",
        "retrieved_at": "2026-02-22T10:05:00Z",
        "locator": {"url": "https://..."},
    },
)


def memory_root(seed_daemon: SeedDaemon, name: str) -> Path:
    """<data_dir>/memory_root/<tenant>/<agent>: the default memory_root."""
    return seed_daemon.daemon.data_dir / "memory_root" / "acme" / name


def sh(*args: str, cwd: Path) -> list[str]:
    """A shell tool's output lines, as the agent's bash would see them."""
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr  # grep: 1 is "no match"
    return done.stdout.splitlines()


def envelopes(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "log.jsonl").read_text().splitlines()]


def check_tree(root: Path) -> None:
    """§4.1, §4.3, §6: what the agent's bash finds after A.1..A.4."""
    # §6.3 `ls memory/index/user/calendar/`: the entry, by its name, while it is live.
    calendar = root / "index" / "user" / "calendar"
    assert sh("ls", "index/user/calendar/", cwd=root) == []  # A.3 tombstoned it...
    assert calendar.is_dir()  # ...and its directory stays
    assert sorted(os.listdir(root / "index" / "user")) == ["calendar", "preference"]
    assert sh("ls", "index/user/preference/", cwd=root) == ["style.json"]
    assert sh("ls", "index/kb/product/iphone16/", cwd=root) == ["spec.json"]
    # §6.3 `grep "牙科" memory/log.jsonl`: the write and its tombstone.
    found = [json.loads(line) for line in sh("grep", "牙科", "log.jsonl", cwd=root)]
    assert [(e["key"], e["valid"]) for e in found] == [(DENTIST, True), (DENTIST, False)]
    # §4.1 the envelope: fixed fields, the source with its object locator, content as is.
    lines = envelopes(root)
    assert [e["key"] for e in lines] == [STYLE, DENTIST, DENTIST, SPEC]
    for line, (_, content, source) in zip(lines, (A1, A2, A3, A4), strict=True):
        assert {"key", "ts", "valid", "source", "content"} <= set(line)
        assert line["content"] == content and line["valid"] is (content is not None)
        assert line["source"]["locator"] == source["locator"]
        assert line["source"]["kind"] == source["kind"]
    # §6.3 jq 'select(.valid==true and .content.type=="reminder")' over the log.
    reminders = [e for e in lines if e["valid"] and (e["content"] or {}).get("type") == "reminder"]
    assert [e["content"]["text"] for e in reminders] == ["明天10点牙科复诊"]
    # §4.2 the index file holds the key's latest valid state.
    style = json.loads((root / "index" / "user" / "preference" / "style.json").read_text())
    assert style["content"] == A1[1] and style["source"]["locator"] == A1[2]["locator"]


# ---------------------------------------------------------------- gRPC


def test_appendix_a_through_grpc(seed_daemon: SeedDaemon) -> None:
    """Appendix A's four calls as the Python client takes them (the document's own
    dicts), §3.1.2 LWW and tombstones, §3.2 provenance, and the memory_root tree."""
    name = agent("s002-grpc")
    with seed_daemon.grpc() as client:
        for key, content, source in (A1, A2, A3, A4):
            client.set_memory(name, key, content, source=source)
        style = client.get_key(name, STYLE)
        assert style.content == A1[1] and style.source is not None
        assert style.source.locator == {"conversation_id": "c1", "message_id": "m9"}
        assert style.source.retrieved_at == datetime(2026, 2, 22, 10, tzinfo=UTC)
        with pytest.raises(NotFoundError):  # §3.1.2 a tombstone reads as missing
            client.get_key(name, DENTIST)
        history = client.key_history(name, DENTIST).items
        assert [(e.valid, e.content) for e in history] == [(True, A2[1]), (False, None)]
        assert history[1].source is not None and history[1].source.locator == {"reason": "sent"}
        assert client.get_key(name, SPEC).source.locator == {"url": "https://..."}  # type: ignore[union-attr]
        check_tree(memory_root(seed_daemon, name))
        check_rules_grpc(client, name)
        check_default_read_grpc(client, name)


def check_rules_grpc(client: MemorydClient, name: str) -> None:
    """§3.1.2 LWW and ``{}``; §3.1.4 the key and source checks; §3.2.1 /kb/."""
    user = {"kind": "user", "name": "chat", "locator": "c1/m11"}  # a string locator
    first = client.set_memory(name, "/user/preference/tea", {"summary": "绿茶"}, source=user)
    last = client.set_memory(name, "/user/preference/tea", {"summary": "红茶"}, source=user)
    assert last.version > first.version
    assert client.get_key(name, "/user/preference/tea").content == {"summary": "红茶"}
    empty = client.set_memory(name, "/user/empty", {}, source="user")  # a short form
    assert empty.valid and client.get_key(name, "/user/empty").content == {}
    for key, field in (("user/no-slash", "key"), ("/a/../b", "key")):
        with pytest.raises(InvalidArgumentError) as err:
            client.set_memory(name, key, {"x": 1}, source=user)
        assert field in {v.field for v in err.value.field_violations}
    with pytest.raises(InvalidArgumentError) as err:
        client.set_memory(name, "/kb/product/other", {"summary": "x"}, source={"kind": "user"})
    assert {"source.name", "source.retrieved_at", "source.locator"} <= {
        v.field for v in err.value.field_violations
    }


def check_default_read_grpc(client: MemorydClient, name: str) -> None:
    """§5: token_limit, tags, current_time; tombstones and expired keys left out."""
    client.set_memory(
        name,
        "/user/task/later",
        {"type": "task", "summary": "以后的任务", "expired_at": "2099-01-01T00:00:00Z"},
        source="agent",
    )
    read = client.default_read(
        name, token_limit=500, tags=["style"], current_time=datetime(2099, 2, 1, tzinfo=UTC)
    )
    keys = [line.key for line in read.lines]
    assert read.text.splitlines()[0] == "[Agent Memory]"
    assert STYLE in keys and SPEC in keys
    # A tombstone, and a key whose expired_at is before current_time, are left out.
    assert DENTIST not in keys and "/user/task/later" not in keys
    assert "user/preference/style preference 用户喜欢中文、偏好简洁" in read.text
    now = client.default_read(name)  # current_time: now
    assert "/user/task/later" in [line.key for line in now.lines]


# ---------------------------------------------------------------- MCP


async def test_appendix_a_through_mcp(seed_daemon: SeedDaemon) -> None:
    """The same calls as an MCP host makes them (set_memory(key, value, source)), read
    back by get_memory_key, memory_key_history, list_memory_keys and default_read."""
    name = agent("s002-mcp")
    async with seed_daemon.mcp() as mcp:
        for key, content, source in (A1, A2, A3, A4):
            done = await mcp.call(
                "set_memory", key=key, value=content, source=source, agent_id=name
            )
            assert done["deleted"] is (content is None)
        style = await mcp.call("get_memory_key", key=STYLE, agent_id=name)
        assert style["found"] and style["value"] == A1[1]
        assert style["source"] == A1[2]  # the locator object, as written
        gone = await mcp.call("get_memory_key", key=DENTIST, agent_id=name)
        assert gone["found"] is False
        history = (await mcp.call("memory_key_history", key=DENTIST, agent_id=name))["versions"]
        assert [v["deleted"] for v in history] == [False, True]
        assert [v["source"]["locator"] for v in history] == [
            {"conversation_id": "c1", "message_id": "m10"},
            {"reason": "sent"},
        ]
        listed = await mcp.call("list_memory_keys", prefix="/user/", agent_id=name)
        assert listed["directories"] == ["/user/preference/"]  # the tombstone is not listed
        read = await mcp.call(
            "default_read",
            token_limit=500,
            tags=["health", "style"],
            current_time="2026-02-22T12:00:00Z",
            agent_id=name,
        )
        assert set(read["keys"]) == {STYLE, SPEC}
        # Bad input names its field and stores nothing.
        bad = await mcp.error(
            "set_memory",
            key="/user/x",
            value=1,
            source={"kind": "user", "locator": ["c1", "m9"]},
            agent_id=name,
        )
        assert "source.locator" in json.dumps(bad)
        no_source = await mcp.error("set_memory", key="/user/x", value=1, agent_id=name)
        assert "source" in json.dumps(no_source)
        assert (await mcp.call("get_memory_key", key="/user/x", agent_id=name))["found"] is False
    check_tree(memory_root(seed_daemon, name))
