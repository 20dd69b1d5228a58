"""The adversarial engine: seed a world, then try every RPC of every service across
tenant, agent and clearance boundaries, and check that nothing leaks.

RPCs and their request messages are read from the proto descriptors and filled by
field name (agent_id, id, ids, key, session_id, scope, page_token, query, ...), so an
RPC added later, or one that stops answering UNIMPLEMENTED, is attacked without
changing this file. Every attempt that names another principal's thing is paired
with a control attempt naming a fresh random thing of the same shape: both must get
the same code, the same message and (for successes) the same response, once the
names themselves are masked. Any secret marker, memory id or identifier of a thing
the caller may not see that shows up in a response or an error is a leak.
"""

from __future__ import annotations

import random
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.protobuf import field_mask_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.principal import Role
from memoryd_proto.v1 import (
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)
from tests.security.checking import ATTACKER_RE, Attempt, Checker, Report, control_of, fresh_value
from tests.security.seeding import words
from tests.security.support import Rpc, all_rpcs, invoke
from tests.security.world import (
    AGENTS,
    ATTACKER_PREFIX,
    LEVELS,
    TENANTS,
    Principal,
    World,
    marker,
)

M, S, L = memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2

TEXT_FIELDS = {"query", "trigger", "focus"}


class Builder:
    """Fills any request message from its descriptor with cross-boundary references."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world = world
        self.rng = rng

    # -- reference pools
    def _pool(self, p: Principal, agent: str, kind: str, ref: str) -> list[str]:
        kinds = ("session", "state") if kind == "session" else (kind,)
        return [
            a.refs[ref] for k in kinds for a in self.world.invisible(p, agent, k) if ref in a.refs
        ]

    def ref(self, ctx: dict[str, Any], kind: str, ref: str) -> str:
        pool = self._pool(ctx["p"], ctx["agent"], kind, ref)
        value = self.rng.choice(pool) if pool and self.rng.random() < 0.9 else fresh_value(kind)
        ctx["refs"][value] = kind
        return value

    def page_token(self, ctx: dict[str, Any]) -> str:
        p, agent = ctx["p"], ctx["agent"]
        loot = [t for (name, a, _, t) in self.world.page_tokens if name != p.name or a != agent]
        if not loot:
            return ""
        value = self.rng.choice(loot)
        ctx["refs"][value] = "page_token"
        return value

    def guess_text(self, ctx: dict[str, Any]) -> str:
        invisible = self.world.invisible(ctx["p"], ctx["agent"], "memory")
        return self.rng.choice(invisible).words if invisible else words(self.rng)

    def attacker_text(self, ctx: dict[str, Any]) -> str:
        mark = marker(ATTACKER_PREFIX)
        ctx["attacker"].append(mark)
        return f"{mark} {words(self.rng, 3)}"

    # -- generic fill
    def fill(self, message: Message, ctx: dict[str, Any], depth: int = 0) -> None:
        for fd in message.DESCRIPTOR.fields:
            self._fill_field(message, fd, ctx, depth)

    def _fill_field(
        self, msg: Message, fd: FieldDescriptor, ctx: dict[str, Any], depth: int
    ) -> None:
        name, rng = fd.name, self.rng
        repeated = fd.is_repeated
        if (
            name in ("agent_id", "target_agent_id")
            and fd.type == FieldDescriptor.TYPE_STRING
            and not repeated
        ):
            setattr(msg, name, ctx["agent"] if name == "agent_id" or rng.random() < 0.5 else "")
        elif name in ("id", "memory_id") and fd.type == FieldDescriptor.TYPE_STRING:
            setattr(msg, name, self.ref(ctx, "memory", "id"))
        elif name == "ids" and repeated:
            getattr(msg, name).extend(
                self.ref(ctx, "memory", "id") for _ in range(rng.randint(1, 3))
            )
        elif name == "key" and fd.type == FieldDescriptor.TYPE_STRING:
            setattr(msg, name, self.ref(ctx, "key", "key"))
        elif name == "prefix":
            setattr(msg, name, rng.choice(["/", "/sec/", ""]))
        elif name == "session_id" and msg.DESCRIPTOR.name == "RememberRequest":
            # A label the caller puts on its own memory (context expansion reads only
            # the caller's partition), not a reference to anyone's session.
            setattr(msg, name, f"turns-{rng.randrange(1 << 30)}")
        elif name == "session_id":
            setattr(msg, name, self.ref(ctx, "session", "session_id"))
        elif name in ("thread_id", "resource_id"):
            setattr(msg, name, self.ref(ctx, "working", name))
        elif name == "names" and repeated:
            getattr(msg, name).append(self.ref(ctx, "state", "name"))
        elif name == "page_token":
            setattr(msg, name, self.page_token(ctx) if rng.random() < 0.7 else "")
        elif name in TEXT_FIELDS:
            setattr(msg, name, self.guess_text(ctx))
        elif name == "all_agents":
            ctx["all_agents"] = rng.random() < 0.5
            msg.all_agents = ctx["all_agents"]  # type: ignore[attr-defined]
        elif name in ("include_archived", "include_vectors", "recursive", "extract_memories"):
            setattr(msg, name, rng.random() < 0.5)
        elif name in ("dry_run", "confirm"):
            setattr(msg, name, True)
        elif name == "security_level" and not repeated:
            setattr(msg, name, rng.choice(LEVELS))
        elif name == "max_security_level":
            setattr(msg, name, rng.choice((0, *LEVELS)))
        elif name in ("page_size", "limit", "semantic_limit", "recent_limit", "batch_size"):
            setattr(msg, name, rng.randint(1, 20))
        elif name in ("token_budget", "token_limit"):
            setattr(msg, name, rng.choice([200, 2000]))
        elif (
            fd.type == FieldDescriptor.TYPE_ENUM
            and not repeated
            and name in ("kind", "mode", "role", "format")
        ):
            setattr(msg, name, 1)
        elif name == "content" and fd.type == FieldDescriptor.TYPE_STRING:
            setattr(msg, name, self.attacker_text(ctx))
        elif fd.type == FieldDescriptor.TYPE_MESSAGE and depth < 4:
            self._fill_message_field(msg, fd, ctx, depth, repeated)

    def _fill_message_field(
        self, msg: Message, fd: FieldDescriptor, ctx: dict[str, Any], depth: int, repeated: bool
    ) -> None:
        full = fd.message_type.full_name
        name = fd.name
        if full == "google.protobuf.Struct":
            if name in ("content", "state"):
                getattr(msg, name).update({"a": self.attacker_text(ctx)})
            return
        if full == "google.protobuf.Value":
            if name == "content":
                getattr(msg, name).string_value = self.attacker_text(ctx)
            return
        if full == "google.protobuf.FieldMask":
            getattr(msg, name).CopyFrom(field_mask_pb2.FieldMask(paths=["content"]))
            return
        if full.startswith("google.protobuf."):
            return
        if full == "memoryd.v1.ExportRecord":
            self._fill_record(getattr(msg, name), ctx)
            return
        if repeated:
            if name in ("messages", "components", "items"):
                child = getattr(msg, name).add()
                self.fill(child, ctx, depth + 1)
            return
        if name in ("memory", "scope", "selector", "source") or depth == 0:
            self.fill(getattr(msg, name), ctx, depth + 1)

    def _fill_record(self, record: Message, ctx: dict[str, Any]) -> None:
        """An import record: a memory that claims another tenant, agent or id."""
        victim = self.rng.choice([a for a in self.world.artifacts if a.kind == "memory"])
        memory = record.memory.memory  # type: ignore[attr-defined]
        memory.id = self.ref(ctx, "memory", "id")
        memory.tenant_id = victim.tenant
        memory.agent_id = victim.agent
        memory.content = self.attacker_text(ctx)
        memory.security_level = self.rng.choice(LEVELS)
        memory.version = 1

    def build(self, rpc: Rpc, p: Principal) -> Attempt:
        rng = self.rng
        is_read = METHOD_ROLES.get(rpc.path) is Role.READ
        mode = rng.choices(
            ["own", "outside", "fresh"], weights=[0.6, 0.3 if p.outside_agents() else 0, 0.1]
        )[0]
        agent = {
            "own": lambda: rng.choice(p.own_agents()),
            "outside": lambda: rng.choice(p.outside_agents()),
            "fresh": lambda: f"ag-{uuid.uuid4().hex[:10]}",
        }[mode]()
        ctx: dict[str, Any] = {
            "p": p,
            "agent": agent,
            "refs": {},
            "attacker": [],
            "all_agents": False,
        }
        request = rpc.request_class()
        self.fill(request, ctx)
        if not is_read and p.may_act_for(agent) and agent in AGENTS and not ctx["refs"]:
            # A bare write in a seeded partition would only be legitimate traffic (and
            # could wipe the seeds): aim it at an empty partition or a forbidden agent.
            agent = p.outside_agents()[0] if p.outside_agents() else f"ag-{uuid.uuid4().hex[:10]}"
            ctx["agent"] = agent
            request = rpc.request_class()
            ctx["refs"], ctx["attacker"] = {}, []
            self.fill(request, ctx)
        requests = [request]
        if rpc.client_streaming:
            victim = rng.choice(TENANTS)
            header = L.ImportRequest(
                record=L.ExportRecord(
                    header=L.ExportHeader(
                        format="memoryd.export.v1", tenant_id=victim, agent_id=rng.choice(AGENTS)
                    )
                )
            )
            requests = [header, request]
        attempt = Attempt(rpc, p, agent, requests, dict(ctx["refs"]), all_agents=ctx["all_agents"])
        attempt.attacker = list(ctx["attacker"])  # type: ignore[attr-defined]
        if ctx["refs"]:
            attempt.control, attempt.control_refs = control_of(requests, ctx["refs"])
        return attempt


def expected_ids(world: World, p: Principal, agent: str) -> set[str]:
    ids = {a.refs["id"] for a in world.artifacts if a.kind == "memory" and a.visible_to(p, [agent])}
    mirrors = {
        a.refs["memory_id"]
        for a in world.artifacts
        if a.kind == "key" and a.refs.get("memory_id") and a.visible_to(p, [agent])
    }
    return ids | mirrors


def count_checks(world: World, channel: grpc.Channel, report: Report) -> None:
    """Listings and stats count exactly what the caller may see (before any attack write)."""
    rpcs = {r.name: r for r in all_rpcs()}
    for p in world.principals:
        if "read" not in p.roles:
            continue
        for agent in p.own_agents():
            seen: set[str] = set()
            token = ""
            while True:
                out = invoke(
                    channel,
                    rpcs["ListMemories"],
                    M.ListMemoriesRequest(
                        agent_id=agent, page_size=7, page_token=token, include_archived=True
                    ),
                    p.key.metadata,
                )
                report.attempts["MemoryService.ListMemories"] += 1
                report.codes["MemoryService.ListMemories"][out.code.name] += 1
                if not out.ok:
                    report.leaks.append(f"ListMemories by {p.name}: {out.code.name} {out.message}")
                    break
                seen |= {m.id for m in out.responses[0].memories}
                token = out.responses[0].next_page_token
                if not token:
                    break
            if seen != expected_ids(world, p, agent):
                report.leaks.append(
                    f"ListMemories by {p.name} for {agent}: {len(seen)} ids, expected {len(expected_ids(world, p, agent))}"
                )
            stats = invoke(
                channel, rpcs["GetStats"], L.GetStatsRequest(agent_id=agent), p.key.metadata
            )
            report.attempts["LifecycleService.GetStats"] += 1
            report.codes["LifecycleService.GetStats"][stats.code.name] += 1
            if stats.ok:
                response = stats.responses[0]
                if response.memories != len(expected_ids(world, p, agent)):
                    report.leaks.append(
                        f"GetStats by {p.name} for {agent}: memories={response.memories}, expected {len(expected_ids(world, p, agent))}"
                    )
                names = {c.name.upper() for c in response.by_security_level if c.count}
                allowed = {
                    n
                    for lvl, n in (
                        (1, "PUBLIC"),
                        (2, "INTERNAL"),
                        (3, "CONFIDENTIAL"),
                        (4, "RESTRICTED"),
                    )
                    if lvl <= p.clearance
                }
                if not {n.removeprefix("SECURITY_LEVEL_") for n in names} <= allowed:
                    report.leaks.append(
                        f"GetStats by {p.name}: levels {sorted(names)} above clearance {p.clearance}"
                    )


def integrity(
    world: World, channel: grpc.Channel, report: Report, attacker_marks: dict[str, Principal]
) -> None:
    """Every seeded thing is unchanged, and no attacker content landed where its writer may not write."""
    rpcs = {r.name: r for r in all_rpcs()}
    for artifact in world.artifacts:
        admin = world.admin(artifact.tenant)
        if artifact.kind == "memory":
            out = invoke(
                channel,
                rpcs["GetMemory"],
                M.GetMemoryRequest(agent_id=artifact.agent, id=artifact.refs["id"]),
                admin.key.metadata,
            )
            got = (
                (out.responses[0].memory.content, out.responses[0].memory.version)
                if out.ok
                else out.code.name
            )
            if got != artifact.snapshot:
                report.integrity.append(
                    f"memory {artifact.tenant}/{artifact.agent} level {artifact.level} changed: {got!r}"
                )
        elif artifact.kind == "key":
            out = invoke(
                channel,
                rpcs["GetKey"],
                M.GetKeyRequest(agent_id=artifact.agent, key=artifact.refs["key"]),
                admin.key.metadata,
            )
            if not out.ok or (out.responses[0].entry.version,) != artifact.snapshot:
                report.integrity.append(
                    f"key {artifact.tenant}/{artifact.agent} level {artifact.level} changed: {out.code.name}"
                )
    for tenant in TENANTS:
        admin = world.admin(tenant)
        for agent in AGENTS:
            token, contents = "", []
            while True:
                out = invoke(
                    channel,
                    rpcs["ListMemories"],
                    M.ListMemoriesRequest(
                        agent_id=agent, page_size=500, page_token=token, include_archived=True
                    ),
                    admin.key.metadata,
                )
                if not out.ok:
                    report.integrity.append(f"listing {tenant}/{agent}: {out.code.name}")
                    break
                contents += [m.content for m in out.responses[0].memories]
                token = out.responses[0].next_page_token
                if not token:
                    break
            for mark in ATTACKER_RE.findall(" ".join(contents)):
                writer = attacker_marks.get(mark)
                if writer is not None and not (
                    writer.tenant == tenant and writer.may_act_for(agent)
                ):
                    report.integrity.append(f"{writer.name} wrote into {tenant}/{agent}")


def run(
    world: World, channel: grpc.Channel, rng: random.Random, per_rpc: int, workers: int = 6
) -> Report:
    report = Report(live_kinds=set(world.live_kinds))
    count_checks(world, channel, report)
    builder = Builder(world, rng)
    checker = Checker(world, report)
    rpcs = all_rpcs()
    attempts = [
        builder.build(rpc, rng.choice(world.principals)) for rpc in rpcs for _ in range(per_rpc)
    ]
    attacker_marks = {m: a.principal for a in attempts for m in getattr(a, "attacker", [])}
    reads = [a for a in attempts if METHOD_ROLES.get(a.rpc.path) is Role.READ]
    writes = [a for a in attempts if METHOD_ROLES.get(a.rpc.path) is not Role.READ]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda a: checker.check(a, channel), reads))
        # Writes: one partition's attempts in order, partitions in parallel.
        groups: dict[tuple[str, str], list[Attempt]] = defaultdict(list)
        for a in writes:
            groups[(a.principal.tenant, a.agent)].append(a)
        list(pool.map(lambda group: [checker.check(a, channel) for a in group], groups.values()))
    integrity(world, channel, report, attacker_marks)
    return report
