"""Seeding the adversarial world: every kind of thing each principal owns (memories,
keys, working memory, profiles, sessions, saved state), with secret markers to look
for in every answer, and page tokens harvested for replay."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from memoryd_proto.v1 import (
    common_pb2,
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)
from tests.security.support import Outcome, Rpc, all_rpcs, invoke
from tests.security.world import (
    AGENTS,
    CONTENT_PREFIX,
    IDENT_PREFIX,
    LEVELS,
    TENANTS,
    WORDS,
    Artifact,
    Principal,
    World,
    marker,
)

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

M, S, L = memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2


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
                        agent_id=agent,
                        key=key,
                        content=value,
                        security_level=level,
                        source=USER_SOURCE_PB,
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
