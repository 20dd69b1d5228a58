"""Per-call context: the authenticated principal and the request id.

The interceptor sets these before a handler runs (contextvars follow the handler's
task); servicers turn the principal plus the request's agent_id into a CallScope.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

from memoryd.domain.errors import InvalidArgument, PermissionDenied, Unauthenticated
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope, Principal

current_principal: ContextVar[Principal | None] = ContextVar("current_principal", default=None)
current_request_id: ContextVar[str] = ContextVar("current_request_id", default="")

#: Agent ids: 1..128 word characters, dots, colons, at-signs and dashes.
AGENT_ID_RE = re.compile(r"^[\w.:@-]{1,128}$")


def call_scope(agent_id: str, field: str = "agent_id") -> CallScope:
    """The partition this call may touch: tenant from the principal, agent from the request."""
    principal = current_principal.get()
    if principal is None:
        raise Unauthenticated("no authenticated principal for this call")
    if not agent_id:
        raise InvalidArgument.field(field, "must not be empty")
    if not AGENT_ID_RE.match(agent_id):
        raise InvalidArgument.field(
            field, "must be 1-128 characters of letters, digits, '.', ':', '@', '_' or '-'"
        )
    if not principal.may_act_for(agent_id):
        raise PermissionDenied(f"principal {principal.name!r} may not act for agent {agent_id!r}")
    return CallScope(principal=principal, partition=Partition(principal.tenant_id, agent_id))
