"""The adversarial world: tenants, principals with random agent lists, clearances and
roles, and everything they stored — with who may see what."""

from __future__ import annotations

import random
import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.security.support import KeySpec

TENANTS = ("t-north", "t-south", "t-east")
#: The same agent names in every tenant: isolation must come from the tenant, not the name.
AGENTS = ("planner", "coder", "ops")
LEVELS = (1, 2, 3, 4)  # PUBLIC .. RESTRICTED
LEVEL_NAMES = {1: "public", 2: "internal", 3: "confidential", 4: "restricted"}
WORDS = [
    "amber",
    "basalt",
    "cobalt",
    "dune",
    "ember",
    "fjord",
    "glacier",
    "harbor",
    "indigo",
    "juniper",
    "kelp",
    "lagoon",
    "meadow",
    "nebula",
    "obsidian",
    "prairie",
    "quartz",
    "reef",
    "sierra",
    "tundra",
    "umber",
    "vapor",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "atlas",
    "beacon",
    "cipher",
    "delta",
]

#: Secret content markers (in content) and identifier markers (keys, sessions, scopes).
CONTENT_PREFIX, IDENT_PREFIX, ATTACKER_PREFIX = "zqc", "zqi", "zqa"
TOKEN_RE = re.compile(
    r"zq[cia][0-9a-f]{12}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def marker(prefix: str) -> str:
    return prefix + secrets.token_hex(6)


@dataclass(frozen=True)
class Principal:
    key: KeySpec
    tenant: str
    agents: frozenset[str] | None  # None: every agent
    clearance: int
    roles: frozenset[str]

    @property
    def name(self) -> str:
        return self.key.name

    def may_act_for(self, agent: str) -> bool:
        return self.agents is None or agent in self.agents

    def own_agents(self) -> list[str]:
        return [a for a in AGENTS if self.may_act_for(a)]

    def outside_agents(self) -> list[str]:
        return [a for a in AGENTS if not self.may_act_for(a)]


@dataclass
class Artifact:
    """One stored thing: where it lives, its level, its references and secret markers."""

    kind: str  # memory | key | working | profile | session | state
    tenant: str
    agent: str
    level: int
    refs: dict[str, str] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    words: str = ""
    snapshot: Any = None  # what integrity checks compare against

    def visible_to(self, p: Principal, agents: Sequence[str]) -> bool:
        return self.tenant == p.tenant and self.agent in agents and self.level <= p.clearance


def make_principals(rng: random.Random) -> list[Principal]:
    out: list[Principal] = []
    for tenant in TENANTS:
        admin = KeySpec(
            raw=f"adm-{secrets.token_hex(16)}",
            name=f"{tenant}-admin",
            tenant_id=tenant,
            agents="*",
            clearance="restricted",
            roles=("read", "write", "admin"),
        )
        out.append(Principal(admin, tenant, None, 4, frozenset(admin.roles)))
        for i in range(3):
            star = rng.random() < 0.2
            agents = None if star else frozenset(rng.sample(AGENTS, rng.randint(1, 2)))
            clearance = rng.choice(LEVELS)
            roles = frozenset(r for r in ("read", "write", "admin") if rng.random() < 0.6) or {
                "read"
            }
            spec = KeySpec(
                raw=f"key-{secrets.token_hex(16)}",
                name=f"{tenant}-p{i}",
                tenant_id=tenant,
                agents="*" if agents is None else tuple(sorted(agents)),
                clearance=LEVEL_NAMES[clearance],
                roles=tuple(sorted(roles)),
            )
            out.append(Principal(spec, tenant, agents, clearance, frozenset(roles)))
    return out


@dataclass
class World:
    principals: list[Principal]
    artifacts: list[Artifact] = field(default_factory=list)
    #: token (marker or memory id) -> the artifact it belongs to
    owner: dict[str, Artifact] = field(default_factory=dict)
    #: page tokens harvested by their owners: (principal name, agent, rpc label, token)
    page_tokens: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: kinds whose RPCs answered (others are UNIMPLEMENTED today)
    live_kinds: set[str] = field(default_factory=lambda: {"memory"})

    def admin(self, tenant: str) -> Principal:
        return next(
            p
            for p in self.principals
            if p.tenant == tenant
            and p.agents is None
            and "admin" in p.roles
            and p.name.endswith("-admin")
        )

    def add(self, artifact: Artifact) -> None:
        self.artifacts.append(artifact)
        for value in [*artifact.refs.values(), *artifact.secrets]:
            for token in TOKEN_RE.findall(value):
                self.owner[token] = artifact

    def invisible(self, p: Principal, agent: str, kind: str) -> list[Artifact]:
        """Artifacts of ``kind`` that p, acting for ``agent``, must not see."""
        return [a for a in self.artifacts if a.kind == kind and not a.visible_to(p, [agent])]


def fresh_uuid() -> str:
    return str(uuid.uuid4())
