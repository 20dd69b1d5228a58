"""One call through the operation layer: what its transport tells, what the door learns.

A transport adapter (gRPC, MCP) makes a :class:`Call` per request with the request id,
the peer and the caller's credentials, hands it to the door with the operation, and
reads it back when the call ends (the outcome code for its wire status). Nothing about
the call travels in a context variable but a write's admission, which the log entry
carrying the write takes (security/admission.py): the call and its scope are passed
explicitly.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memoryd.domain.principal import Principal, Role
from memoryd.domain.requests import Degradation
from memoryd.operations.auth import Transport
from memoryd.security.admission import Admission

T = TypeVar("T")


@dataclass(slots=True)
class Call:
    """One request: set by the transport (request id .. attributes), filled by the door."""

    request_id: str
    #: The transport's name of the call, for metrics and logs: "/memoryd.v1.MemoryService/Recall"
    #: over gRPC, "/mcp/recall" for an MCP tool.
    label: str
    credentials: Transport
    #: W3C trace context the caller sent (traceparent, tracestate), if any.
    trace_parent: Mapping[str, str] | None = None
    #: The transport runs the call inside a span of its own, current in this task (an
    #: MCP tool call, which may run several operations): the call's span is that span's
    #: child (INTERNAL), and trace_parent is the transport span's business.
    nested: bool = False
    #: The transport's own span attributes (rpc.system, rpc.method, mcp.method.name, ...).
    trace_attributes: Mapping[str, str] = field(default_factory=dict)
    #: The span attribute that carries the outcome's status code ("rpc.grpc.status_code").
    status_attribute: str = ""
    started: float = field(default_factory=time.perf_counter)
    principal: Principal | None = None
    role: Role | None = None
    agent: str = ""
    ids: list[str] = field(default_factory=list)
    key: str = ""
    #: Outcome: "OK" or the status name of the error the call ended with.
    code: str = "OK"
    #: Why a call was denied (audited with the denial).
    reason: str = ""
    #: What a read returned, for the read trail (None: not recorded).
    read: list[str] | None = None
    #: What the call was served degraded by (the door sets it when the call ends
    #: well): a transport whose response has no field for it tells it its own way.
    degraded: tuple[Degradation, ...] = ()
    #: A write's STARTED event waiting to ride in its log entry (None: admitted by
    #: the audit log itself, or not a write).
    admission: Admission | None = None

    @property
    def peer(self) -> str:
        """The caller's address, as the transport reports it."""
        return self.credentials.peer

    def touch(self, ids: Sequence[str], key: str) -> None:
        """Add what the call addressed (ids once each, in order; the first key wins)."""
        if ids:
            self.ids = list(dict.fromkeys([*self.ids, *ids]))
        self.key = self.key or key


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What an operation returned (masked for the caller: see door.py) and what it was
    served degraded by."""

    value: T
    degraded: tuple[Degradation, ...] = ()
    #: Masking changed the value: it is not what is stored (writing it back would
    #: overwrite what the caller could not see).
    masked: bool = False
