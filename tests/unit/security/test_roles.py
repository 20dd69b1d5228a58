"""Every RPC runs one operation, whose role follows the rule; inputs that widen a call
raise it to admin."""

from __future__ import annotations

import pytest

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.lifecycle import MaintenanceOptions
from memoryd.domain.principal import Role
from memoryd.operations import OPERATIONS
from memoryd.operations.lifecycle import EXPORT, RUN_MAINTENANCE, ExportRequest
from memoryd_proto.v1 import (
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)

FILES = (memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2)
ADMIN_ONLY = {"Reset", "Prune", "Import", "Reembed"}


def all_methods() -> list[tuple[str, str]]:
    out = []
    for module in FILES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                out.append((f"/{service.full_name}/{method.name}", method.name))
    return out


def test_every_rpc_runs_one_operation() -> None:
    methods = all_methods()
    assert len(methods) >= 35
    assert {m for m, _ in methods} == set(METHOD_ROLES)
    assert len(OPERATIONS) == len({op.name for op in OPERATIONS}) == len(methods)


@pytest.mark.parametrize(("method", "name"), all_methods())
def test_role_follows_the_rule(method: str, name: str) -> None:
    role = METHOD_ROLES[method]
    if name in ADMIN_ONLY:
        assert role is Role.ADMIN
    elif name.startswith(("Get", "List", "Recall", "Key", "Load", "Build", "Default")):
        assert role is Role.READ, name
    elif name != "Export":
        assert role is Role.WRITE, name


def test_tenant_wide_export_and_deleting_maintenance_need_admin() -> None:
    assert EXPORT.required_role(ExportRequest()) is Role.READ
    assert EXPORT.required_role(ExportRequest(all_agents=True)) is Role.ADMIN
    assert RUN_MAINTENANCE.required_role(MaintenanceOptions()) is Role.WRITE
    assert RUN_MAINTENANCE.required_role(MaintenanceOptions(retention_days=3)) is Role.ADMIN
    assert RUN_MAINTENANCE.required_role(MaintenanceOptions(max_entries=10)) is Role.ADMIN
    # An input that could not be built: the operation's own role.
    assert EXPORT.required_role(None) is Role.READ
