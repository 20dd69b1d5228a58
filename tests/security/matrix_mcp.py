"""The operation matrix's MCP cases: every tool of the table, both resources and the
prompt, each with the operations (of mcp/tools.py's TOOL_OPERATIONS) it runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mcp import Client

from memoryd.mcp.server import DEFAULT_READ_URI, PROFILE_URI, PROMPT
from tests.security.matrix_grpc import WRITTEN
from tests.security.matrix_seed import (
    ATTACHMENT_SEQ,
    EMAIL,
    EMAIL2,
    EVERYTHING,
    KEYS,
    MEMORIES,
    SEED_FILE,
    SEED_KEY,
    SESSION,
    STATE,
    THREAD,
    Seeded,
)

JSON = dict[str, Any]
#: What a resource or the prompt runs: the tool the server calls for it.
BACKING_TOOLS = {
    PROFILE_URI: "read_agent_memory",
    DEFAULT_READ_URI: "default_read",
    PROMPT: "build_snapshot",
}


@dataclass(frozen=True)
class McpCase:
    #: A tool's name, a resource URI template, or the prompt's name.
    name: str
    label: str
    arguments: Callable[[Seeded], JSON]
    #: The operations the call runs (names), a subset of its tool's TOOL_OPERATIONS.
    ops: tuple[str, ...]
    shows_pii: bool = False
    #: An edit of a file a masked caller reads masked: refused for it.
    edits_masked_file: bool = False
    #: What a write's own agent is seeded with (reads run on a fully seeded one).
    seeds: frozenset[str] = EVERYTHING

    @property
    def tool(self) -> str:
        return BACKING_TOOLS.get(self.name, self.name)

    @property
    def id(self) -> str:
        name = self.name.rsplit("/", 1)[-1]
        return f"mcp:{name}[{self.label}]" if self.label else f"mcp:{name}"


def _no_arguments(_: Seeded) -> JSON:
    return {}


def _as_of() -> JSON:
    """As of now: the seeded data as it is, through the as-of path (docs/as-of.md)."""
    return {"time": datetime.now(UTC).isoformat()}


M = McpCase
GET_KEY, SET_MEMORY, LIST_KEYS = (
    "MemoryService.GetKey",
    "MemoryService.SetMemory",
    "MemoryService.ListKeys",
)
CASES: tuple[McpCase, ...] = (
    M(
        "remember",
        "",
        lambda s: {"content": WRITTEN, "tags": [EMAIL2]},
        ("MemoryService.Remember",),
        seeds=frozenset({MEMORIES}),
    ),
    M(
        "recall",
        "",
        lambda s: {"query": "Alice email phone lease", "limit": 10},
        ("MemoryService.Recall",),
        shows_pii=True,
    ),
    M(
        "recall",
        "as_of",
        lambda s: {"query": "Alice email phone lease", "limit": 10, "as_of": _as_of()},
        ("MemoryService.Recall",),
        shows_pii=True,
    ),
    M(
        "retrieve_from_memory",
        "",
        lambda s: {"keywords": ["Alice email", "phone lease"], "limit": 10},
        ("MemoryService.Recall",),
        shows_pii=True,
    ),
    M(
        "record_to_memory",
        "",
        lambda s: {"thinking": f"worth keeping: {EMAIL2}", "content": [WRITTEN]},
        ("MemoryService.RememberBatch",),
        seeds=frozenset({MEMORIES}),
    ),
    M(
        "forget",
        "",
        lambda s: {"ids": [s.memory_ids[1]]},
        ("MemoryService.ForgetMemories",),
        seeds=frozenset({MEMORIES}),
    ),
    M(
        "erase",
        "",
        lambda s: {"ids": [s.memory_ids[1]]},
        ("LifecycleService.Erase",),
        seeds=frozenset({MEMORIES}),
    ),
    # Every tenant's folders hold the seeded email: only the caller's may be scanned.
    M("verify_erasure", "", lambda s: {"needles": [EMAIL]}, ("LifecycleService.VerifyErasure",)),
    M(
        "set_memory",
        "",
        lambda s: {"key": f"/people/{EMAIL2}/note", "value": {"text": WRITTEN}, "source": "user"},
        (SET_MEMORY,),
        shows_pii=True,
        seeds=frozenset({KEYS}),
    ),
    M("get_memory_key", "", lambda s: {"key": SEED_KEY}, (GET_KEY,), shows_pii=True),
    M(
        "get_memory_key",
        "as_of",
        lambda s: {"key": SEED_KEY, "as_of": _as_of()},
        (GET_KEY,),
        shows_pii=True,
    ),
    M(
        "list_memory_keys",
        "as_of",
        lambda s: {"prefix": "/", "recursive": True, "as_of": _as_of()},
        (LIST_KEYS,),
        shows_pii=True,
    ),
    M(
        "list_memory_keys",
        "",
        lambda s: {"prefix": "/", "recursive": True},
        (LIST_KEYS,),
        shows_pii=True,
    ),
    M(
        "memory_key_history",
        "",
        lambda s: {"key": SEED_KEY},
        ("MemoryService.KeyHistory",),
        shows_pii=True,
    ),
    M("default_read", "", _no_arguments, ("SnapshotService.DefaultRead",), shows_pii=True),
    M(
        "default_read",
        "as_of",
        lambda s: {"as_of": _as_of()},
        ("SnapshotService.DefaultRead",),
        shows_pii=True,
    ),
    M(
        "get_working_memory",
        "",
        lambda s: {"thread_id": THREAD},
        ("MemoryService.GetWorkingMemory",),
        shows_pii=True,
    ),
    M(
        "update_working_memory",
        "",
        lambda s: {"thread_id": THREAD, "updates": {"added": WRITTEN}},
        ("MemoryService.SetWorkingMemory",),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    M("read_agent_memory", "", _no_arguments, ("MemoryService.GetProfile",), shows_pii=True),
    M(
        "update_agent_memory",
        "",
        lambda s: {"content": f"# Agent\n{WRITTEN}"},
        ("MemoryService.SetProfile",),
        seeds=frozenset({STATE}),
    ),
    M(
        "build_snapshot",
        "",
        lambda s: {
            "trigger": "Alice email phone lease",
            "session_id": SESSION,
            "thread_id": THREAD,
        },
        ("SnapshotService.BuildSnapshot",),
        shows_pii=True,
    ),
    M(
        "build_snapshot",
        "as_of",
        lambda s: {"trigger": "Alice email phone lease", "as_of": _as_of()},
        ("SnapshotService.BuildSnapshot",),
        shows_pii=True,
    ),
    M(
        "record_messages",
        "",
        lambda s: {"session_id": SESSION, "messages": [{"role": "user", "content": WRITTEN}]},
        ("MemoryService.AppendMessages",),
        seeds=frozenset({STATE}),
    ),
    M(
        "get_session_window",
        "",
        lambda s: {"session_id": SESSION},
        ("MemoryService.GetSessionWindow",),
        shows_pii=True,
    ),
    M(
        "get_session_attachment",
        "",
        lambda s: {"session_id": SESSION, "seq": ATTACHMENT_SEQ},
        ("MemoryService.GetSessionAttachment",),
        shows_pii=True,
    ),
    M(
        "save_state",
        "",
        lambda s: {"session_id": SESSION, "components": {"notes": {"text": WRITTEN}}},
        ("SnapshotService.SaveState",),
        seeds=frozenset({STATE}),
    ),
    M(
        "load_state",
        "",
        lambda s: {"session_id": SESSION},
        ("SnapshotService.LoadState",),
        shows_pii=True,
    ),
    M(
        "memory",
        "view",
        lambda s: {"command": "view", "path": SEED_FILE},
        (GET_KEY,),
        shows_pii=True,
    ),
    M("memory", "view-dir", lambda s: {"command": "view", "path": "/memories"}, (LIST_KEYS,)),
    M(
        "memory",
        "create",
        lambda s: {"command": "create", "path": "/memories/new.md", "file_text": WRITTEN},
        (SET_MEMORY,),
        seeds=frozenset({KEYS}),
    ),
    M(
        "memory",
        "str_replace",
        lambda s: {
            "command": "str_replace",
            "path": SEED_FILE,
            "old_str": "notes",
            "new_str": "log",
        },
        (GET_KEY, SET_MEMORY),
        edits_masked_file=True,
        seeds=frozenset({KEYS}),
    ),
    M(PROFILE_URI, "", _no_arguments, ("MemoryService.GetProfile",), shows_pii=True),
    M(DEFAULT_READ_URI, "", _no_arguments, ("SnapshotService.DefaultRead",), shows_pii=True),
    M(
        PROMPT,
        "",
        lambda s: {"trigger": "Alice email phone lease", "session_id": SESSION},
        ("SnapshotService.BuildSnapshot",),
        shows_pii=True,
    ),
)


async def run(client: Client, case: McpCase, seeded: Seeded) -> tuple[str, str]:
    """The call's outcome code ("OK", a tool error's code, or "ERROR" for a protocol
    error) and all the text it returned."""
    arguments = case.arguments(seeded)
    if case.name in (PROFILE_URI, DEFAULT_READ_URI):
        uri = case.name.format(agent=seeded.agent)
        try:
            read = await client.read_resource(uri)
        except Exception as exc:  # the SDK raises the JSON-RPC error
            return "ERROR", str(exc)
        return "OK", "\n".join(getattr(c, "text", "") for c in read.contents)
    if case.name == PROMPT:
        try:
            prompt = await client.get_prompt(PROMPT, {**arguments, "agent_id": seeded.agent})
        except Exception as exc:
            return "ERROR", str(exc)
        return "OK", "\n".join(getattr(m.content, "text", "") for m in prompt.messages)
    result = await client.call_tool(case.name, {**arguments, "agent_id": seeded.agent})
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        return str(json.loads(text).get("error")), text
    return "OK", text
