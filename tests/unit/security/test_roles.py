"""The method -> role table covers every RPC of every service, and fails closed."""

from __future__ import annotations

import pytest

from memoryd.api.roles import METHOD_ROLES, check_role, required_role
from memoryd.domain.errors import PermissionDenied
from memoryd.domain.models import SecurityLevel
from memoryd.domain.principal import Principal, Role
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


def test_every_rpc_has_a_role() -> None:
    methods = all_methods()
    assert len(methods) >= 35
    assert {m for m, _ in methods} == set(METHOD_ROLES)


@pytest.mark.parametrize(("method", "name"), all_methods())
def test_role_follows_the_rule(method: str, name: str) -> None:
    role = METHOD_ROLES[method]
    if name in ADMIN_ONLY:
        assert role is Role.ADMIN
    elif name.startswith(("Get", "List", "Recall", "Key", "Load", "Build", "Default")):
        assert role is Role.READ, name
    elif name != "Export":
        assert role is Role.WRITE, name


def test_tenant_wide_export_needs_admin() -> None:
    method = "/memoryd.v1.LifecycleService/Export"
    assert required_role(method, lifecycle_service_pb2.ExportRequest(agent_id="a")) is Role.READ
    request = lifecycle_service_pb2.ExportRequest(agent_id="a", all_agents=True)
    assert required_role(method, request) is Role.ADMIN
    reader = Principal("r", "t", frozenset({"*"}), SecurityLevel.RESTRICTED, frozenset({Role.READ}))
    with pytest.raises(PermissionDenied, match="admin"):
        check_role(reader, method, request)
    check_role(reader, method, lifecycle_service_pb2.ExportRequest(agent_id="a"))


def test_unknown_method_is_denied() -> None:
    admin = Principal("a", "t", frozenset({"*"}), SecurityLevel.RESTRICTED, frozenset(Role))
    with pytest.raises(PermissionDenied, match="no role"):
        check_role(admin, "/memoryd.v1.MemoryService/Teleport", None)


def test_writer_cannot_read_and_reader_cannot_write() -> None:
    writer = Principal("w", "t", frozenset({"*"}), SecurityLevel.PUBLIC, frozenset({Role.WRITE}))
    reader = Principal("r", "t", frozenset({"*"}), SecurityLevel.PUBLIC, frozenset({Role.READ}))
    with pytest.raises(PermissionDenied):
        check_role(writer, "/memoryd.v1.MemoryService/Recall", None)
    with pytest.raises(PermissionDenied):
        check_role(reader, "/memoryd.v1.MemoryService/Remember", None)
    check_role(writer, "/memoryd.v1.MemoryService/Remember", None)
