"""Every RPC runs one operation, whose role follows from its declared effect; inputs
that delete beyond what a call names, or widen it, raise it to admin."""

from __future__ import annotations

import pytest

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.changes import WatchQuery
from memoryd.domain.lifecycle import CompactOptions, ConsolidateOptions, MaintenanceOptions
from memoryd.domain.principal import Role
from memoryd.operations import OPERATIONS
from memoryd.operations.changes import WATCH
from memoryd.operations.definition import Effect
from memoryd.operations.lifecycle import (
    COMPACT,
    CONSOLIDATE,
    EXPORT,
    PRUNE,
    RUN_MAINTENANCE,
    ExportRequest,
)
from memoryd_proto.v1 import (
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)

FILES = (memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2)
ADMIN_ONLY = {"Reset", "Prune", "Import", "Reembed", "Erase", "VerifyErasure"}


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
    elif name.startswith(("Get", "List", "Recall", "Key", "Load", "Build", "Default", "Watch")):
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
    assert WATCH.required_role(WatchQuery()) is Role.READ
    assert WATCH.required_role(WatchQuery(tenant_wide=True)) is Role.ADMIN


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_the_role_is_the_effects(op: object) -> None:
    assert op.required_role(None) is op.effect.role is op.role  # type: ignore[attr-defined]
    assert {Effect.READ: Role.READ, Effect.WRITE: Role.WRITE}.get(
        op.effect,  # type: ignore[attr-defined]
        Role.ADMIN,
    ) is op.role  # type: ignore[attr-defined]


def test_merging_deleting_and_overriding_inputs_need_admin() -> None:
    # The configured policy is a write; a caller's own merge threshold or similarity
    # merges (deletes) memories it never named: admin.
    assert COMPACT.required_role(CompactOptions()) is Role.WRITE
    assert COMPACT.effect_for(CompactOptions(merge_group_threshold=2)) is Effect.DESTRUCTIVE
    assert COMPACT.required_role(CompactOptions(merge_similarity=0.01)) is Role.ADMIN
    assert RUN_MAINTENANCE.effect_for(MaintenanceOptions(retention_days=1)) is Effect.DESTRUCTIVE
    assert RUN_MAINTENANCE.effect_for(MaintenanceOptions(max_entries=1)) is Effect.ADMIN_OVERRIDE
    assert EXPORT.effect_for(ExportRequest(all_agents=True)) is Effect.ADMIN_OVERRIDE
    # Consolidation archives the originals (undo brings them back): lossless, a write.
    assert CONSOLIDATE.required_role(ConsolidateOptions(min_group_size=2)) is Role.WRITE
    assert PRUNE.effect is Effect.DESTRUCTIVE
