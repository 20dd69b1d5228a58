"""The role each RPC needs, from the effect of the operation it runs
(operations/definition.py): reads need ``read``, writes ``write``; what can delete or
irreversibly merge beyond the ids a call names (Reset, Prune, Compact with merge
overrides, maintenance with a retention override) and what crosses agents or overrides
the operator's policy (Import, Reembed, tenant-wide Export, maintenance's max_entries)
need ``admin``.

Every method of memoryd's services runs one operation (api/binding.py; unit tests
check the tables against the proto descriptors); a method without one is not served.
"""

from __future__ import annotations

from typing import Any

from memoryd.domain.principal import Role
from memoryd.operations import OPERATIONS, Operation, StreamOperation

#: "<Service>.<Method>" -> the operation that RPC runs.
OPERATIONS_BY_NAME: dict[str, Operation[Any, Any] | StreamOperation[Any, Any]] = {
    op.name: op for op in OPERATIONS
}
#: Full gRPC method name -> the role of its operation's own effect (an input may need
#: more: ``op.required_role``).
METHOD_ROLES: dict[str, Role] = {
    f"/memoryd.v1.{op.service}/{op.method}": op.role for op in OPERATIONS
}
