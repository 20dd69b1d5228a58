"""Who is calling: a principal from the transport, and the scope of one call."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from memoryd.domain.models import Partition, SecurityLevel


class Role(enum.StrEnum):
    """What a principal may do: read, write, or administer."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller. ``agents`` containing "*" allows every agent."""

    name: str
    tenant_id: str
    agents: frozenset[str]
    clearance: SecurityLevel
    roles: frozenset[Role]

    def may_act_for(self, agent_id: str) -> bool:
        """Whether the principal may use ``agent_id``'s memory."""
        return "*" in self.agents or agent_id in self.agents


@dataclass(frozen=True, slots=True)
class CallScope:
    """What one request may touch: its partition and the caller's clearance."""

    principal: Principal
    partition: Partition

    @property
    def clearance(self) -> SecurityLevel:
        """The highest security level the call may read or write."""
        return self.principal.clearance
