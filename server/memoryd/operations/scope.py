"""The partition a call may touch: the tenant from the principal, the agent from the
request, never the other way round."""

from __future__ import annotations

from memoryd.domain.errors import InvalidArgument, PermissionDenied
from memoryd.domain.limits import canonical_id, id_problem
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope, Principal


def agent_scope(caller: Principal, agent_id: str, field: str = "agent_id") -> CallScope:
    """The caller's scope for ``agent_id`` in its canonical form (NFKC: a full-width
    id names the same agent as its plain letters): INVALID_ARGUMENT for a malformed or
    confusable id (mixed scripts), PERMISSION_DENIED for an agent the caller may not
    act for. Every transport's agent comes through here."""
    agent_id = canonical_id(agent_id)
    problem = id_problem(agent_id)
    if problem is not None:
        raise InvalidArgument.field(field, problem)
    if not caller.may_act_for(agent_id):
        raise PermissionDenied(f"principal {caller.name!r} may not act for agent {agent_id!r}")
    return CallScope(principal=caller, partition=Partition(caller.tenant_id, agent_id))


def tenant_scope(caller: Principal, agent_id: str) -> CallScope:
    """A tenant-wide call: the agent may be empty; the tenant is the caller's."""
    if agent_id:
        return agent_scope(caller, agent_id)
    return CallScope(principal=caller, partition=Partition(caller.tenant_id, ""))
