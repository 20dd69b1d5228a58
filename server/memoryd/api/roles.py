"""The role each RPC needs, from the operation it runs (memoryd.operations defines
them): reads need ``read``, writes ``write``; wiping, pruning, importing, re-embedding,
tenant-wide exports and maintenance with deleting overrides (``retention_days``,
``max_entries``) need ``admin``.

Every method of memoryd's services runs one operation (api/binding.py; unit tests
check the tables against the proto descriptors); a method without one is not served.
"""

from __future__ import annotations

from memoryd.domain.principal import Role
from memoryd.operations import OPERATIONS

#: Full gRPC method name -> the role it needs (before inputs that raise it to admin).
METHOD_ROLES: dict[str, Role] = {
    f"/memoryd.v1.{op.service}/{op.method}": op.role for op in OPERATIONS
}
