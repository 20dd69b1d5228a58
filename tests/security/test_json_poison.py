"""Poison values in every JSON- and number-bearing input, over real gRPC and MCP.

Issue 30: a JSON integer of 309+ digits in content_json or state_json was stored while
the caller got INTERNAL, and every later read of the agent, the tenant-wide export
included, answered INTERNAL. The matrix is generated from the operation table and the
request descriptors (tests/security/poison.py) and from the MCP tool table: every
answer is OK or INVALID_ARGUMENT naming the poisoned field (a number may also meet a
plain precondition: NOT_FOUND, FAILED_PRECONDITION...), never INTERNAL; a rejected
write stores nothing; what was accepted reads back on every read and in an export.
One daemon (gRPC and MCP) serves the module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from memoryd.domain.limits import MAX_JSON_DEPTH
from memoryd.domain.principal import Role
from memoryd.operations import OPERATIONS
from memoryd_client.tool_table import MCP_TOOLS, TOOLS
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.mcp.support import TRANSPORTS, http_client, mcp_client, start_daemon
from tests.security.poison import Poison, leaves, names_field, poisons
from tests.security.poison_world import (
    ADMIN,
    ATTACHMENT_SEQ,
    BASES,
    RPCS,
    SEED,
    USER,
    World,
    fresh,
    seed,
)
from tests.security.support import Outcome

NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    daemon, url = start_daemon(tmp_path_factory.mktemp("poison"), [ADMIN])
    channel = grpc.insecure_channel(daemon.address)
    try:
        w = World(daemon, url, channel)
        seed(w, SEED)
        yield w
    finally:
        channel.close()
        daemon.kill()


def test_every_operation_with_json_or_number_inputs_has_a_base(world: World) -> None:
    """The matrix covers each operation of the table: one added later with such an
    input fails here until it gets a base request (Import's come from an export)."""
    missing = []
    for op in OPERATIONS:
        rpc = RPCS[op.name]
        empty = rpc.request_class()
        wants = bool(leaves(_filled(empty)))
        if wants and op.name not in BASES and op.name != "LifecycleService.Import":
            missing.append(op.name)
    assert missing == []


def _filled(msg: Message) -> Message:
    """``msg`` with every singular message field set, so that its leaves show."""
    for field in msg.DESCRIPTOR.fields:
        nested = field.message_type is not None and not field.is_repeated
        if nested and not field.message_type.full_name.startswith("google.protobuf."):
            _filled(getattr(msg, field.name))
            getattr(msg, field.name).SetInParent()
    return msg


def _is_write(label: str) -> bool:
    op = next(op for op in OPERATIONS if op.name == label)
    return op.role is not Role.READ


@pytest.mark.parametrize("label", sorted(BASES))
def test_poison_in_every_field_is_refused_or_kept_never_internal(world: World, label: str) -> None:
    write = _is_write(label)
    failures: list[str] = []
    probe = BASES[label](world, fresh())
    cases = [p for leaf in leaves(probe) for p in poisons(leaf)]
    assert cases, f"{label}: no JSON- or number-bearing field in its base request"
    for poison in cases:
        agent = fresh()
        request = BASES[label](world, agent)
        before = world.export(agent) if write else []
        poison.apply(request)
        out = world.call(label, request)
        problem = _judge(out, poison)
        after = world.export(agent) if write else []  # whatever was kept exports
        if write and out.code != grpc.StatusCode.OK and after != before:
            problem = problem or "a rejected write changed what is stored"
        if problem:
            failures.append(f"{poison.field} = {poison.label}: {problem}")
    assert failures == [], f"{label}:\n" + "\n".join(failures[:30])


def _judge(out: Outcome, poison: Poison) -> str:
    if out.code in NEVER:
        return f"{out.code.name}: {out.message[:200]}"
    if out.code == grpc.StatusCode.INVALID_ARGUMENT:
        if not names_field(out.violations, poison.field):
            return f"INVALID_ARGUMENT not naming it: {out.violations[:3]} {out.message[:200]}"
        return ""
    if not poison.may_keep:
        return f"{out.code.name}, expected INVALID_ARGUMENT"
    if poison.field.endswith("_json") and out.code != grpc.StatusCode.OK:
        return f"{out.code.name}, expected OK or INVALID_ARGUMENT"
    return ""


# ---------------------------------------------------------------------- import


_FIELD = re.compile(r"(?:invalid argument: |; )([\w.\[\]]+): ")


def _export_records(world: World) -> dict[str, lpb.ExportRecord]:
    """One exported record of each kind of the seeded agent."""
    out: dict[str, lpb.ExportRecord] = {}
    for response in world.ok("LifecycleService.Export", lpb.ExportRequest(agent_id=SEED)):
        if response.HasField("record"):
            kind = response.record.WhichOneof("record")
            out.setdefault(kind, response.record)
    return out


def test_poison_in_every_field_of_every_import_record(world: World) -> None:
    records = _export_records(world)
    assert {"memory", "key_event", "working_memory", "profile", "session", "state"} <= set(records)
    header = records.pop("header")
    failures: list[str] = []
    for kind, base in records.items():
        wrapper = lpb.ImportRequest(record=base)
        for poison in [p for leaf in leaves(wrapper, max_depth=5) for p in poisons(leaf)]:
            agent = fresh()
            request = lpb.ImportRequest()
            request.CopyFrom(wrapper)
            request.target_agent_id = agent
            poison.apply(request)
            stream = [lpb.ImportRequest(record=header, target_agent_id=agent), request]
            out = world.call("LifecycleService.Import", stream)
            stored = world.export(agent)
            problem = ""
            if out.code != grpc.StatusCode.OK:
                problem = _judge(out, poison) or f"{out.code.name}: {out.message[:120]}"
            else:
                result = out.responses[0]
                rejected = [r.reason for r in result.rejected]
                if rejected:
                    named = [(f"record.{m}", "") for r in rejected for m in _FIELD.findall(r)]
                    if not names_field(named, poison.field):
                        problem = f"rejected without naming it: {rejected}"
                    elif stored:
                        problem = "a rejected record was stored"
                elif not poison.may_keep:
                    problem = "imported, expected a rejection"
            if problem:
                failures.append(f"{kind} {poison.field} = {poison.label}: {problem}")
    assert failures == [], "\n".join(failures[:40])


# ---------------------------------------------------------------------- reads


def test_what_was_kept_reads_back_everywhere(world: World) -> None:
    """Values at the edge of what is accepted (2^64, 30-digit integers, nesting at the
    limit, max double) read back through every read and the tenant-wide export."""
    agent = fresh()
    deep = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)
    kept = '{"a": %d, "b": 123456789012345678901234567890, "c": 1.7976931348623157e308, "d": %s}'
    text = kept % (2**64, deep)
    world.ok(
        "MemoryService.SetMemory",
        mpb.SetMemoryRequest(agent_id=agent, key="/k", content_json=text, source=USER),
    )
    world.ok(
        "MemoryService.SetWorkingMemory",
        mpb.SetWorkingMemoryRequest(
            agent_id=agent, scope=pb.WorkingMemoryScope(thread_id="t"), content_json=text
        ),
    )
    world.ok(
        "SnapshotService.SaveState",
        spb.SaveStateRequest(
            agent_id=agent,
            session_id="s",
            components=[spb.StateComponent(name="c", state_json=text)],
        ),
    )
    compact = re.sub(r"\s", "", text)
    entry = world.ok("MemoryService.GetKey", mpb.GetKeyRequest(agent_id=agent, key="/k"))[0]
    assert entry.entry.content_json == compact
    for label, request in (
        ("MemoryService.ListKeys", mpb.ListKeysRequest(agent_id=agent, recursive=True)),
        ("MemoryService.KeyHistory", mpb.KeyHistoryRequest(agent_id=agent, key="/k")),
        (
            "MemoryService.GetWorkingMemory",
            mpb.GetWorkingMemoryRequest(agent_id=agent, scope=pb.WorkingMemoryScope(thread_id="t")),
        ),
        (
            "MemoryService.ListWorkingMemoryScopes",
            mpb.ListWorkingMemoryScopesRequest(agent_id=agent),
        ),
        ("SnapshotService.LoadState", spb.LoadStateRequest(agent_id=agent, session_id="s")),
        ("SnapshotService.DefaultRead", spb.DefaultReadRequest(agent_id=agent)),
        ("SnapshotService.BuildSnapshot", spb.BuildSnapshotRequest(agent_id=agent, trigger="k")),
        ("LifecycleService.Export", lpb.ExportRequest(all_agents=True)),
    ):
        world.ok(label, request)
    assert len(world.export(agent)) == 4  # the key, its memory, working memory, state


# ---------------------------------------------------------------------- MCP


def _mcp_numbers(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "integer" in kinds or "number" in kinds:
            yield f"{path}{name}"


#: Valid arguments per MCP tool with a number or a JSON value among its arguments.
MCP_BASES: dict[str, dict[str, Any]] = {
    "remember": {"content": "poison base", "importance": 0.5},
    "recall": {"query": "poison", "limit": 5},
    "set_memory": {"key": "/p/k", "value": {"v": 1}, "source": "user", "if_version": 0},
    "list_memory_keys": {"limit": 10},
    "memory_key_history": {"key": "/p/k", "limit": 10},
    "default_read": {"token_limit": 1000},
    "update_working_memory": {"updates": {"v": 1}, "thread_id": "t", "ttl_seconds": 60},
    "build_snapshot": {"trigger": "x", "token_budget": 1000},
    "get_session_window": {"session_id": "s", "token_budget": 1000},
    "get_session_attachment": {
        "session_id": "s",
        "seq": ATTACHMENT_SEQ,
        "offset": 0,
        "max_chars": 10,
    },
    "retrieve_from_memory": {"keywords": ["poison"], "limit": 5},
    "save_state": {"session_id": "s", "components": {"planner": {"v": 1}}},
    "memory": {"command": "view", "path": "/memories", "view_range": [1, 2]},
}
#: The JSON-valued arguments: (tool, argument path, how to put a value there).
MCP_JSON: list[tuple[str, str, Callable[[dict[str, Any], Any], None]]] = [
    ("set_memory", "value", lambda a, v: a.__setitem__("value", v)),
    ("update_working_memory", "updates", lambda a, v: a.__setitem__("updates", {"v": v})),
    ("update_working_memory", "schema", lambda a, v: a.__setitem__("schema", {"default": v})),
    ("save_state", "components", lambda a, v: a.__setitem__("components", {"c": {"v": v}})),
]
MCP_NUMBER_POISONS = [10**30, -(10**30), 2**63, 2**64, 2**31, -(2**31) - 1]
MCP_JSON_REFUSED = [10**400, -(10**400), json.loads("[" * 30 + "]" * 30)]
MCP_JSON_KEPT = [2**64, "x" * 6000, 123456789012345678901234567890]


def test_every_mcp_number_argument_has_bounds() -> None:
    """Generated from the tool table: no integer argument reaches timedelta or C
    unbounded ("Python int too large to convert to C int")."""
    unbounded = [
        f"{name}.{arg}"
        for name, spec in TOOLS.items()
        for arg in _mcp_numbers(spec.input_schema())
        if not {"minimum", "maximum"} <= set(spec.input_schema()["properties"][arg])
    ]
    assert unbounded == []


def test_mcp_bases_cover_every_tool_with_numbers_or_json() -> None:
    json_tools = {name for name, _, _ in MCP_JSON}
    wanting = {n for n in MCP_TOOLS if list(_mcp_numbers(TOOLS[n].input_schema()))} | json_tools
    assert wanting <= set(MCP_BASES)


async def test_mcp_poison_is_refused_or_kept_never_internal(world: World) -> None:
    failures: list[str] = []
    async with http_client(world.mcp_url, ADMIN.raw) as client:

        async def call(name: str, arguments: dict[str, Any], field: str, keep: bool) -> None:
            result = await client.call_tool(name, arguments)
            if not result.is_error:
                if not keep:
                    failures.append(f"{name}.{field}: accepted")
                return
            detail = json.loads(result.content[0].text)
            named = [(f, "") for f in detail.get("fields", {})]
            code = detail.get("error")
            if code == "INVALID_ARGUMENT" and names_field(named, field):
                return
            if keep and code not in {c.name for c in NEVER} | {"INVALID_ARGUMENT"}:
                return  # a number may meet a precondition (if_version 2^31: no such version)
            failures.append(f"{name}.{field}: {detail}")

        for name, base in MCP_BASES.items():
            for arg in _mcp_numbers(TOOLS[name].input_schema()):
                for value in MCP_NUMBER_POISONS:
                    arguments = {**base, arg: value, "agent_id": fresh()}
                    await call(name, arguments, arg, keep=True)
            for item in (base.get("view_range") and [[1, 2**64], [2**64, 1]]) or []:
                await call(
                    name, {**base, "view_range": item, "agent_id": fresh()}, "view_range", True
                )
        for name, field, put in MCP_JSON:
            for value, keep in [(v, False) for v in MCP_JSON_REFUSED] + [
                (v, True) for v in MCP_JSON_KEPT
            ]:
                agent = fresh()
                arguments = {**MCP_BASES[name], "agent_id": agent}
                put(arguments, value)
                await call(name, arguments, field, keep)
                if not keep:
                    assert world.export(agent) == [], f"{name}.{field}: a refused call stored"
    assert failures == [], "\n".join(failures[:30])


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_memory_tool_keeps_json_values_json(world: World, transport: str) -> None:
    """str_replace on a key holding {"a":1,"b":true,"c":null} stored the string
    "{'a': 2, 'b': True, 'c': None}"; it keeps the value JSON, and refuses an edit
    that would leave invalid JSON (the daemon's tools and the stdio bridge's alike)."""
    agent = fresh()
    async with mcp_client(transport, world.daemon, world.mcp_url, ADMIN.raw) as client:
        path = "/memories/config.json"
        await client.call_tool(
            "set_memory",
            {
                "key": path,
                "value": {"a": 1, "b": True, "c": None},
                "source": "agent",
                "agent_id": agent,
            },
        )
        viewed = await client.call_tool(
            "memory", {"command": "view", "path": path, "agent_id": agent}
        )
        assert viewed.structured_content is not None
        assert '{"a":1,"b":true,"c":null}' in viewed.structured_content["result"]
        edited = await client.call_tool(
            "memory",
            {
                "command": "str_replace",
                "path": path,
                "old_str": '"a":1',
                "new_str": '"a":2',
                "agent_id": agent,
            },
        )
        assert not edited.is_error, edited
        broken = await client.call_tool(
            "memory",
            {
                "command": "str_replace",
                "path": path,
                "old_str": "true",
                "new_str": "True",
                "agent_id": agent,
            },
        )
        got = await client.call_tool("get_memory_key", {"key": path, "agent_id": agent})
    assert got.structured_content is not None
    assert got.structured_content["value"] == {"a": 2, "b": True, "c": None}
    assert broken.is_error and "new_str" in json.loads(broken.content[0].text)["fields"]


def test_the_base_fixture_is_clean(world: World) -> None:
    """The seeded agent and the base requests are valid: the matrix measures the
    poison, not a broken base."""
    for label, base in BASES.items():
        agent = fresh()
        out = world.call(label, base(world, agent))
        assert out.code == grpc.StatusCode.OK, (label, out.code, out.message)
    assert Path(world.daemon.data_dir).exists()
