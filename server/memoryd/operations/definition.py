"""What one operation is: its name, the role it needs, how its scope is drawn, what the
audit log and traces record of it, and the code it runs against the services.

Every transport runs an operation the same way (see door.py), so an operation's
authorisation, audit fields and degradation reporting are defined here once, not per
transport. ``I`` is the operation's typed input (domain types, built by the adapter
from its wire format), ``O`` what it returns (or, for a stream, each item it yields).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memoryd.domain.principal import CallScope, Role
from memoryd.domain.requests import Degradation
from memoryd.operations.services import Services

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741

#: What a call addressed, for the audit log: memory ids, and one key naming the slot
#: (a keyed-memory key, "session:<id>", "scope:<thread>/<resource>").
Touched = tuple[Sequence[str], str]
NOTHING: Touched = ((), "")


def _nothing(_: Any) -> Touched:
    return NOTHING


def _no_degradations(_: Any) -> Sequence[Degradation]:
    return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Definition(Generic[I, O]):
    #: "<Service>.<Method>": the audit log's and read trail's operation name, and the
    #: gRPC method it is served as (/memoryd.v1.<Service>/<Method>).
    name: str
    role: Role
    #: The GenAI memory operation (gen_ai.operation.name), "" when none fits.
    genai: str = ""
    #: Inputs that raise the role to admin (a tenant-wide export, deleting overrides).
    admin_when: Callable[[I], bool] | None = None
    #: Inputs for which the call is tenant-wide: the agent may be empty.
    tenant_wide: Callable[[I], bool] | None = None
    #: What the input addresses (recorded even when the call is denied).
    touched_in: Callable[[I], Touched] = _nothing
    #: What a write's result addresses (recorded when it succeeds).
    touched_out: Callable[[O], Touched] = _nothing
    #: What a read returned, for the read trail (ids and keys, never content).
    returned: Callable[[O], Iterable[str]] | None = None
    #: Records a trace counts: of the result for a search, of the input for a write.
    count: Callable[[I, O], int | None] | None = None
    #: Degradations the result itself carries (a Recall's, a snapshot's).
    own_degraded: Callable[[O], Sequence[Degradation]] = _no_degradations
    #: Every effect of a call is a store write, made through the write-ahead log where
    #: there is one: its STARTED audit event rides in the log entry that carries them
    #: (security/admission.py: one fsync per write). Left False, the door fsyncs the
    #: event on its own before the call runs, which is always safe.
    audit_in_log: bool = False

    @property
    def service(self) -> str:
        return self.name.partition(".")[0]

    @property
    def method(self) -> str:
        return self.name.partition(".")[2]

    def required_role(self, value: I | None) -> Role:
        """The role this call needs: admin when ``admin_when`` holds for its input."""
        if value is not None and self.admin_when is not None and self.admin_when(value):
            return Role.ADMIN
        return self.role


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation(_Definition[I, O]):
    """A request-response operation."""

    run: Callable[[Services, CallScope, I], Awaitable[O]]


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamOperation(_Definition[I, O]):
    """An operation that streams its results (progress, then a result; or records)."""

    run: Callable[[Services, CallScope, I], AsyncIterator[O]]
