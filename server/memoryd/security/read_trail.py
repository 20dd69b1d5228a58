"""The read trail: opt-in audit lines for reads, so a governance review can answer
"which agent saw this memory, and when".

With ``audit.read_trail: true`` every successful Recall, GetMemory, BuildSnapshot,
DefaultRead and Export adds one line to the audit log: time, request id, principal,
tenant, agent, the operation and the ids (or keys) it returned, never content. The
operation layer's door (every transport's calls pass it) calls :meth:`ReadTrail.record`
once per call with what it returned.
"""

from __future__ import annotations

from collections.abc import Iterable

from memoryd.domain.principal import Principal
from memoryd.security.audit import AuditEvent, AuditLog

#: Operations recorded, as "<Service>.<Method>" (the audit log's operation names).
READ_OPERATIONS = frozenset(
    {
        "MemoryService.Recall",
        "MemoryService.GetMemory",
        "SnapshotService.BuildSnapshot",
        "SnapshotService.DefaultRead",
        "LifecycleService.Export",
    }
)


class ReadTrail:
    def __init__(self, audit: AuditLog | None, *, enabled: bool) -> None:
        self._audit = audit if enabled else None

    @property
    def enabled(self) -> bool:
        return self._audit is not None

    def wants(self, operation: str) -> bool:
        """Whether reads of ``operation`` ("MemoryService.Recall") are recorded."""
        return self._audit is not None and operation in READ_OPERATIONS

    def record(
        self,
        operation: str,
        *,
        principal: Principal,
        agent: str,
        ids: Iterable[str],
        request_id: str = "",
        peer: str = "",
    ) -> None:
        """One line for a read that returned ``ids`` (memory ids, keys, session item ids)."""
        if self._audit is None or operation not in READ_OPERATIONS:
            return
        self._audit.record(
            AuditEvent(
                operation=operation,
                outcome="OK",
                request_id=request_id,
                principal=principal.name,
                tenant=principal.tenant_id,
                agent=agent,
                peer=peer,
                ids=list(dict.fromkeys(ids)),
                key="read",
            )
        )
