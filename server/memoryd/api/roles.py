"""The role each RPC needs: reads need ``read``, writes ``write``; wiping, pruning,
importing, re-embedding, tenant-wide exports and maintenance with deleting overrides
(``retention_days``, ``max_entries``) need ``admin``.

Every method of memoryd's services is listed (a unit test checks the table against
the proto descriptors); a method missing from the table is denied, never allowed.
"""

from __future__ import annotations

from typing import Any

from memoryd.domain.errors import PermissionDenied
from memoryd.domain.principal import Principal, Role

R, W, A = Role.READ, Role.WRITE, Role.ADMIN

_MEMORY = {
    "Remember": W,
    "RememberBatch": W,
    "Recall": R,
    "GetMemory": R,
    "ListMemories": R,
    "UpdateMemory": W,
    "ForgetMemories": W,
    "SetMemory": W,
    "GetKey": R,
    "ListKeys": R,
    "KeyHistory": R,
    "SetWorkingMemory": W,
    "GetWorkingMemory": R,
    "DeleteWorkingMemory": W,
    "ListWorkingMemoryScopes": R,
    "GetProfile": R,
    "SetProfile": W,
    "AppendMessages": W,
    "GetSessionWindow": R,
    "InjectInstruction": W,
    "EndSession": W,
    "GetSessionMessages": R,
    "DeleteMessages": W,
    "ClearSession": W,
}
_SNAPSHOT = {"BuildSnapshot": R, "DefaultRead": R, "SaveState": W, "LoadState": R}
_LIFECYCLE = {
    "GetStats": R,
    "Archive": W,
    "Restore": W,
    "Prune": A,
    "Reset": A,
    "Compact": W,
    "RunMaintenance": W,  # admin with retention_days / max_entries (see required_role)
    "Consolidate": W,
    "Export": R,  # admin when all_agents (see required_role)
    "Import": A,
    "Reembed": A,
}

#: Full gRPC method name -> the role it needs.
METHOD_ROLES: dict[str, Role] = {
    f"/memoryd.v1.{service}/{name}": role
    for service, table in (
        ("MemoryService", _MEMORY),
        ("SnapshotService", _SNAPSHOT),
        ("LifecycleService", _LIFECYCLE),
    )
    for name, role in table.items()
}
#: Request fields that raise a method to admin when set: a tenant-wide export, and
#: maintenance overrides that delete or archive beyond the configured policy (as
#: Prune does).
_ADMIN_WHEN_SET: dict[str, tuple[str, ...]] = {
    "/memoryd.v1.LifecycleService/Export": ("all_agents",),
    "/memoryd.v1.LifecycleService/RunMaintenance": ("retention_days", "max_entries"),
}


def _is_set(request: Any, name: str) -> bool:
    if not hasattr(request, name):
        return False
    try:
        return bool(request.HasField(name))  # proto3 optional fields
    except ValueError:  # a plain scalar: set when not its default
        return bool(getattr(request, name))


def required_role(method: str, request: Any) -> Role | None:
    """The role ``method`` needs for this request; None when the method is unknown."""
    role = METHOD_ROLES.get(method)
    if any(_is_set(request, name) for name in _ADMIN_WHEN_SET.get(method, ())):
        return Role.ADMIN
    return role


def check_role(principal: Principal, method: str, request: Any) -> Role:
    """Raise PermissionDenied unless the principal holds the role the call needs."""
    role = required_role(method, request)
    if role is None:
        raise PermissionDenied(f"{method} is not allowed: no role is defined for it")
    if role not in principal.roles:
        raise PermissionDenied(
            f"principal {principal.name!r} lacks the {role.value!r} role this call needs"
        )
    return role
