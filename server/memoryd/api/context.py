"""Per-call context: the authenticated principal and the request id.

The interceptor sets these before a handler runs (contextvars follow the handler's
task); servicers turn the principal plus the request's agent_id into a CallScope.
The tenant always comes from the principal, never from the request.
"""

from __future__ import annotations

from contextvars import ContextVar

from memoryd.domain.errors import InvalidArgument, PermissionDenied, Unauthenticated
from memoryd.domain.limits import id_problem
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope, Principal

current_principal: ContextVar[Principal | None] = ContextVar("current_principal", default=None)
current_request_id: ContextVar[str] = ContextVar("current_request_id", default="")


def principal() -> Principal:
    """The caller of the current call (tenant-wide operations start here)."""
    found = current_principal.get()
    if found is None:
        raise Unauthenticated("no authenticated principal for this call")
    return found


def call_scope(agent_id: str, field: str = "agent_id") -> CallScope:
    """The partition this call may touch: tenant from the principal, agent from the request."""
    caller = principal()
    problem = id_problem(agent_id)
    if problem is not None:
        raise InvalidArgument.field(field, problem)
    if not caller.may_act_for(agent_id):
        raise PermissionDenied(f"principal {caller.name!r} may not act for agent {agent_id!r}")
    return CallScope(principal=caller, partition=Partition(caller.tenant_id, agent_id))
