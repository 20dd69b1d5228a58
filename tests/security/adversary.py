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

import json
import random
import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import field_mask_pb2, json_format, struct_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.principal import Role
from memoryd_proto.v1 import (
    common_pb2,
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)
from tests.security.support import Outcome, Rpc, all_rpcs, invoke
from tests.security.world import (
    AGENTS,
    ATTACKER_PREFIX,
    CONTENT_PREFIX,
    IDENT_PREFIX,
    LEVELS,
    TENANTS,
    TOKEN_RE,
    WORDS,
    Artifact,
    Principal,
    World,
    fresh_uuid,
    marker,
)

M, S, L = memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ATTACKER_RE = re.compile(ATTACKER_PREFIX + r"[0-9a-f]{12}")
#: Response fields that legitimately differ between an attempt and its control.
VOLATILE = {
    "createdAt",
    "updatedAt",
    "accessedAt",
    "accessCount",
    "expiresAt",
    "exportedAt",
    "finishedAt",
    "lastMaintenanceAt",
    "retrievedAt",
    "etag",
    "storeBytes",
    "deduplicated",
    "seq",
}
NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}
TEXT_FIELDS = {"query", "trigger", "focus"}


def words(rng: random.Random, n: int = 4) -> str:
    return " ".join(rng.sample(WORDS, n))


def struct(**values: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


# ---------------------------------------------------------------------- seeding


@dataclass
class Seeder:
    world: World
    channel: grpc.Channel
    rng: random.Random
    notes: list[str] = field(default_factory=list)
    rpcs: dict[str, Rpc] = field(default_factory=lambda: {r.name: r for r in all_rpcs()})

    def call(self, p: Principal, name: str, request: Message) -> Outcome:
        return invoke(self.channel, self.rpcs[name], request, p.key.metadata)

    def try_kind(self, kind: str, outcome: Outcome) -> bool:
        """True when the RPC worked; an RPC not built yet turns the kind off."""
        if outcome.ok:
            self.world.live_kinds.add(kind)
            return True
        if outcome.code != grpc.StatusCode.UNIMPLEMENTED:
            self.notes.append(f"seeding {kind}: {outcome.code.name} {outcome.message[:200]}")
        self.world.live_kinds.discard(kind)
        return False

    def seed(self) -> None:
        kinds = ["memory", "key", "working", "profile", "session", "state"]
        enabled = set(kinds)
        for tenant in TENANTS:
            admin = self.world.admin(tenant)
            for agent in AGENTS:
                for kind in kinds:
                    if kind in enabled and not getattr(self, f"_seed_{kind}")(admin, tenant, agent):
                        enabled.discard(kind)

    def _seed_memory(self, p: Principal, tenant: str, agent: str) -> bool:
        for level in LEVELS:
            for _ in range(2):
                secret, text = marker(CONTENT_PREFIX), words(self.rng)
                out = self.call(
                    p,
                    "Remember",
                    M.RememberRequest(
                        agent_id=agent,
                        content=f"{secret} {text}",
                        security_level=level,
                        tags=["seed"],
                    ),
                )
                if not out.ok:
                    raise AssertionError(f"seeding memories failed: {out.code} {out.message}")
                memory = out.responses[0].memory
                self.world.add(
                    Artifact(
                        "memory",
                        tenant,
                        agent,
                        level,
                        {"id": memory.id},
                        {secret},
                        text,
                        (memory.content, memory.version),
                    )
                )
        return True

    def _seed_key(self, p: Principal, tenant: str, agent: str) -> bool:
        for level in LEVELS:
            key = f"/sec/{marker(IDENT_PREFIX)}"
            secrets_ = {marker(CONTENT_PREFIX), marker(CONTENT_PREFIX)}
            last = None
            for secret in sorted(secrets_):
                value = struct_pb2.Value(struct_value=struct(v=secret, note=words(self.rng)))
                out = self.call(
                    p,
                    "SetMemory",
                    M.SetMemoryRequest(
                        agent_id=agent, key=key, content=value, security_level=level
                    ),
                )
                if not self.try_kind("key", out):
                    return False
                last = out.responses[0].entry
            assert last is not None
            self.world.add(
                Artifact(
                    "key",
                    tenant,
                    agent,
                    level,
                    # A keyed memory is mirrored by a long-term memory: its id is a secret too.
                    {"key": key, "memory_id": last.memory_id},
                    secrets_,
                    snapshot=(last.version,),
                )
            )
        return True

    def _seed_working(self, p: Principal, tenant: str, agent: str) -> bool:
        scope = common_pb2.WorkingMemoryScope(
            thread_id=marker(IDENT_PREFIX), resource_id=marker(IDENT_PREFIX)
        )
        secret = marker(CONTENT_PREFIX)
        out = self.call(
            p,
            "SetWorkingMemory",
            M.SetWorkingMemoryRequest(agent_id=agent, scope=scope, content=struct(note=secret)),
        )
        if not self.try_kind("working", out):
            return False
        self.world.add(
            Artifact(
                "working",
                tenant,
                agent,
                1,
                {"thread_id": scope.thread_id, "resource_id": scope.resource_id},
                {secret},
            )
        )
        return True

    def _seed_profile(self, p: Principal, tenant: str, agent: str) -> bool:
        secret = marker(CONTENT_PREFIX)
        out = self.call(
            p,
            "SetProfile",
            M.SetProfileRequest(agent_id=agent, content=f"# agent\n{secret} {words(self.rng)}"),
        )
        if not self.try_kind("profile", out):
            return False
        self.world.add(Artifact("profile", tenant, agent, 1, {}, {secret}))
        return True

    def _seed_session(self, p: Principal, tenant: str, agent: str) -> bool:
        session, secret = marker(IDENT_PREFIX), marker(CONTENT_PREFIX)
        message = M.SessionMessage(role=M.MESSAGE_ROLE_USER, content=f"{secret} {words(self.rng)}")
        out = self.call(
            p,
            "AppendMessages",
            M.AppendMessagesRequest(agent_id=agent, session_id=session, messages=[message]),
        )
        if not self.try_kind("session", out):
            return False
        self.world.add(Artifact("session", tenant, agent, 1, {"session_id": session}, {secret}))
        return True

    def _seed_state(self, p: Principal, tenant: str, agent: str) -> bool:
        session, name, secret = marker(IDENT_PREFIX), marker(IDENT_PREFIX), marker(CONTENT_PREFIX)
        component = S.StateComponent(name=name, state=struct(s=secret))
        out = self.call(
            p,
            "SaveState",
            S.SaveStateRequest(agent_id=agent, session_id=session, components=[component]),
        )
        if not self.try_kind("state", out):
            return False
        self.world.add(
            Artifact("state", tenant, agent, 1, {"session_id": session, "name": name}, {secret})
        )
        return True

    def harvest_page_tokens(self) -> None:
        """Page tokens each principal legitimately gets: the loot of a later attack."""
        listings: list[tuple[str, Callable[[str], Message]]] = [
            ("ListMemories", lambda a: M.ListMemoriesRequest(agent_id=a, page_size=1)),
            (
                "ListKeys",
                lambda a: M.ListKeysRequest(agent_id=a, prefix="/", recursive=True, page_size=1),
            ),
            (
                "ListWorkingMemoryScopes",
                lambda a: M.ListWorkingMemoryScopesRequest(agent_id=a, page_size=1),
            ),
        ]
        for p in self.world.principals:
            if "read" not in p.roles:
                continue
            for agent in p.own_agents():
                for name, build in listings:
                    out = self.call(p, name, build(agent))
                    if out.ok and out.responses[0].next_page_token:
                        self.world.page_tokens.append(
                            (p.name, agent, name, out.responses[0].next_page_token)
                        )


# ---------------------------------------------------------------------- attempts


@dataclass
class Attempt:
    rpc: Rpc
    principal: Principal
    agent: str
    request: list[Message]
    #: reference value used -> its kind (memory, key, session, ...), for the control
    refs: dict[str, str]
    control: list[Message] | None = None
    control_refs: dict[str, str] = field(default_factory=dict)
    all_agents: bool = False


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


def fresh_value(kind: str) -> str:
    if kind == "memory":
        return fresh_uuid()
    if kind == "key":
        return f"/sec/{marker(IDENT_PREFIX)}"
    if kind == "page_token":
        return "eyJ0IjoiMjAyNS0wMS0wMVQwMDowMDowMCswMDowMCIsImkiOiJ4IiwicSI6IngifQ.c2lnbmF0dXJl"
    return marker(IDENT_PREFIX)


def control_of(
    requests: Sequence[Message], refs: dict[str, str]
) -> tuple[list[Message], dict[str, str]]:
    """The same requests with every reference replaced by a fresh one of the same shape."""
    mapping = {value: fresh_value(kind) for value, kind in refs.items()}
    for value, kind in refs.items():
        if kind == "page_token":
            # A forged token: valid shape, signature of another body.
            body, _, sig = value.partition(".")
            mapping[value] = f"{body}.{sig[::-1]}"
    out = []
    for request in requests:
        text = json_format.MessageToJson(request, preserving_proto_field_name=True)
        for old, new in mapping.items():
            text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
        out.append(json_format.Parse(text, type(request)()))
    return out, {new: refs[old] for old, new in mapping.items()}


# ---------------------------------------------------------------------- checks


@dataclass
class Report:
    attempts: Counter[str] = field(default_factory=Counter)
    controls: Counter[str] = field(default_factory=Counter)
    codes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    leaks: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    live_kinds: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return sum(self.attempts.values())

    def render(self) -> str:
        lines = ["adversarial suite: attempts per RPC (controls) [codes]"]
        for label in sorted(self.attempts):
            codes = ", ".join(f"{c}={n}" for c, n in self.codes[label].most_common())
            lines.append(
                f"  {label:<40} {self.attempts[label]:>5} ({self.controls[label]:>4})  [{codes}]"
            )
        lines.append(
            f"  TOTAL cross-boundary attempts: {self.total} (+{sum(self.controls.values())} controls); "
            f"leaks: {len(self.leaks)}; response mismatches: {len(self.mismatches)}; "
            f"INTERNAL: {len(self.internal)}; integrity failures: {len(self.integrity)}; "
            f"live record kinds: {sorted(self.live_kinds)}"
        )
        for title, rows in (
            ("LEAKS", self.leaks),
            ("MISMATCHES", self.mismatches),
            ("INTERNAL", self.internal),
            ("INTEGRITY", self.integrity),
            ("NOTES", self.notes),
        ):
            for row in rows[:20]:
                lines.append(f"  {title}: {row}")
        return "\n".join(lines)


def normalise(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, refs) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalise(v, refs) for v in value]
    if isinstance(value, str):
        for ref in sorted(refs, key=len, reverse=True):
            value = value.replace(ref, "<REF>")
        return ATTACKER_RE.sub("<A>", UUID_RE.sub("<UUID>", value))
    return value


VAR = "<VAR>"


def unstable(x: Any, y: Any) -> Any:
    """x with every place where y differs replaced by VAR."""
    if isinstance(x, dict) and isinstance(y, dict):
        return {k: unstable(x[k], y[k]) if k in y else VAR for k in x}
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [unstable(a, b) for a, b in zip(x, y, strict=True)]
    return x if x == y else VAR


def masked(x: Any, mask: Any) -> Any:
    if mask == VAR:
        return VAR
    if isinstance(x, dict) and isinstance(mask, dict):
        return {k: masked(v, mask.get(k)) for k, v in x.items()}
    if isinstance(x, list) and isinstance(mask, list) and len(x) == len(mask):
        return [masked(a, m) for a, m in zip(x, mask, strict=True)]
    return x


def signature(outcome: Outcome, refs: dict[str, str]) -> str:
    if not outcome.ok:
        return f"{outcome.code.name}: {normalise(outcome.message, refs)}"
    body = [json_format.MessageToDict(r) for r in outcome.responses]
    return json.dumps(normalise(body, refs), sort_keys=True)


class Checker:
    def __init__(self, world: World, report: Report) -> None:
        self.world = world
        self.report = report
        self.created: set[tuple[str, str, str]] = set()

    def scan(self, attempt: Attempt, outcome: Outcome, requests: Sequence[Message]) -> None:
        p = attempt.principal
        requested = p.own_agents() if attempt.all_agents else [attempt.agent]
        agents = [a for a in requested if p.may_act_for(a)]
        sent = set(TOKEN_RE.findall(" ".join(str(r) for r in requests)))
        text = outcome.message + " " + " ".join(str(r) for r in outcome.responses)
        for token in set(TOKEN_RE.findall(text)) - sent:
            artifact = self.world.owner.get(token)
            if artifact is None or (p.tenant, attempt.agent, token) in self.created:
                continue
            if not artifact.visible_to(p, agents):
                self.report.leaks.append(
                    f"{attempt.rpc.label} by {p.name} (tenant {p.tenant}, agents {agents}, clearance "
                    f"{p.clearance}) saw {artifact.kind} of {artifact.tenant}/{artifact.agent} level "
                    f"{artifact.level}: {outcome.code.name}"
                )

    def record_writes(
        self, attempt: Attempt, outcome: Outcome, requests: Sequence[Message]
    ) -> None:
        if outcome.ok and METHOD_ROLES.get(attempt.rpc.path) is not Role.READ:
            for token in TOKEN_RE.findall(" ".join(str(r) for r in requests)):
                self.created.add((attempt.principal.tenant, attempt.agent, token))

    def check(self, attempt: Attempt, channel: grpc.Channel) -> None:
        label, p = attempt.rpc.label, attempt.principal
        tainted = any(
            (p.tenant, attempt.agent, t) in self.created
            for r in attempt.refs
            for t in TOKEN_RE.findall(r)
        )
        outcome = invoke(
            channel,
            attempt.rpc,
            attempt.request if attempt.rpc.client_streaming else attempt.request[0],
            p.key.metadata,
        )
        self.report.attempts[label] += 1
        self.report.codes[label][outcome.code.name] += 1
        if outcome.code in NEVER:
            self.report.internal.append(
                f"{label} by {p.name}: {outcome.code.name} {outcome.message[:200]}"
            )
        self.scan(attempt, outcome, attempt.request)
        self.record_writes(attempt, outcome, attempt.request)
        if attempt.control is None:
            return
        control = invoke(
            channel,
            attempt.rpc,
            attempt.control if attempt.rpc.client_streaming else attempt.control[0],
            p.key.metadata,
        )
        self.report.controls[label] += 1
        if control.code in NEVER:
            self.report.internal.append(
                f"{label} control by {p.name}: {control.code.name} {control.message[:200]}"
            )
        self.scan(attempt, control, attempt.control)
        self.record_writes(attempt, control, attempt.control)
        if tainted:
            return
        a, b = signature(outcome, attempt.refs), signature(control, attempt.control_refs)
        if a != b and outcome.ok and control.ok:
            # Fields that differ between two controls (per-partition version counters,
            # say) carry no information about the other's thing: mask them.
            second, second_refs = control_of(attempt.request, attempt.refs)
            again = invoke(
                channel,
                attempt.rpc,
                second if attempt.rpc.client_streaming else second[0],
                p.key.metadata,
            )
            self.record_writes(attempt, again, second)
            mask = unstable(json.loads(b), json.loads(signature(again, second_refs)))
            a = json.dumps(masked(json.loads(a), mask), sort_keys=True)
            b = json.dumps(masked(json.loads(b), mask), sort_keys=True)
        if a != b:
            kinds = sorted(set(attempt.refs.values()))
            self.report.mismatches.append(
                f"{label} by {p.name} for agent {attempt.agent}, refs {kinds}: another's thing -> {a[:300]} | a missing thing -> {b[:300]}"
            )


# ---------------------------------------------------------------------- the run


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
