"""The door: the one way a transport runs an operation.

Per call it authenticates the caller's credentials into a Principal (UNAUTHENTICATED
otherwise), builds the operation's typed input, checks the role the operation needs
for that input (PERMISSION_DENIED otherwise), draws the call's scope (the tenant from
the principal, the agent from the request), admits a write only once its STARTED
audit event is durable (fsynced by the audit log, or, for an operation whose writes
all go through the write-ahead log, carried by the log entry that makes the write
itself durable: one fsync, security/admission.py), runs the operation with its
degradations collected, masks what it returns for a caller below the unmasked
clearance (every string and JSON value of the outcome, of each streamed item and of an
error's message: security/masking.py), and records the call: its span, the access log
line, request metrics, the audit event of a write or a denial and the read trail of a
read (ids and keys as they are stored). Errors propagate as they are (each
MemorydError knows its status) for the transport to put on its wire; an unexpected
exception is logged with its traceback and ends the call as INTERNAL. Nothing here
logs a request body or a credential.

The input is built after authentication is attempted and its errors are raised only
after the role and the agent were checked, so an unauthorised caller learns nothing
about what it sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

import structlog

from memoryd.config import LoggingSettings
from memoryd.domain.errors import FieldViolation, InvalidArgument, MemorydError, PermissionDenied
from memoryd.domain.limits import canonical_id
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.requests import Degradation
from memoryd.observability.logging import AccessLog
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import NO_TRACING, Tracing
from memoryd.operations.auth import Authenticator
from memoryd.operations.call import Call, Outcome
from memoryd.operations.definition import Operation, StreamOperation
from memoryd.operations.scope import agent_scope, tenant_scope
from memoryd.operations.services import Services
from memoryd.operations.trace import CallTrace
from memoryd.resilience.degradation import ComponentStates, collecting
from memoryd.security.admission import Admission, made_durable, riding
from memoryd.security.audit import STARTED, AuditEvent, AuditLog
from memoryd.security.masking import Masker, OutcomeMask
from memoryd.security.read_trail import ReadTrail

log = structlog.get_logger("memoryd.access")

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741
AnyOperation = Operation[Any, Any] | StreamOperation[Any, Any]

#: Outcomes that are denials: always audited, even for reads.
DENIALS = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED"})


class Door:
    """The one way a transport runs an operation: authentication, the role, the scope, audit,
    read trail, span, access log and metrics around ``run`` and ``stream`` (see the module's
    docstring)."""

    def __init__(
        self,
        services: Services,
        authenticator: Authenticator,
        *,
        audit: AuditLog | None = None,
        read_trail: ReadTrail | None = None,
        states: ComponentStates | None = None,
        metrics: Metrics | None = None,
        access_log: AccessLog | None = None,
        tracing: Tracing = NO_TRACING,
        masker: Masker | None = None,
        audit_rides_log: bool = False,
        audit_beside_reads: bool = False,
        on_write: Callable[[Partition], None] | None = None,
    ) -> None:
        """``audit_rides_log``: the services' writes go through a write-ahead log whose
        entries carry their calls' STARTED events (operations marked ``audit_in_log``).
        ``audit_beside_reads``: the services' writes go to a shared store whose facade
        waits for their calls' STARTED events (security/admission.py), so such a call
        runs while its event is being fsynced.
        ``on_write``: told the partition of every write that succeeded (the files
        derived from it, memory.md and learnings.md, are refreshed)."""
        self._on_write = on_write
        self.services = services
        self.authenticator = authenticator
        self.tracing = tracing
        self._audit = audit
        self._rides_log = audit_rides_log
        self._beside_reads = audit_beside_reads
        self._trail = read_trail if read_trail is not None and read_trail.enabled else None
        self._states = states
        self._metrics = metrics
        self._access = access_log or AccessLog(LoggingSettings())
        self._masker = masker

    async def run(
        self, op: Operation[I, O], call: Call, agent_id: str, build: Callable[[], I]
    ) -> Outcome[O]:
        """Run ``op`` for ``call`` on the agent ``agent_id`` with the input ``build``
        makes; raises the call's error (a MemorydError, or anything unexpected)."""
        trace = self._begin(op, call, agent_id)
        try:
            value, scope = await self._enter(op, call, agent_id, build)
            admissions = () if call.admission is None else (call.admission,)
            with riding(admissions), collecting() as found:
                result = await op.run(self.services, scope, value)
                await made_durable(admissions)  # answered only once its event is on disk
            trace.result(op, value, result)
            if self._trail is not None and op.returned is not None:
                call.read = list(op.returned(result))
            if call.role is not Role.READ:  # only writes are audited when they succeed
                call.touch(*op.touched_out(result))
                self._written(scope.partition)
            degraded = self._degraded(op.own_degraded(result), found)
            mask = self._mask(op, scope.principal)
            if mask is None:
                call.degraded = degraded
                return Outcome(result, degraded)
            shown = mask(result, op.outcome_kind)
            call.degraded = mask(degraded)
            return Outcome(shown, call.degraded, masked=shown is not result)
        except (Exception, asyncio.CancelledError) as exc:
            _failed(call, exc)
            self._mask_error(op, call.principal, exc)
            raise
        finally:
            self._finish(op, call, trace)

    async def stream(
        self, op: StreamOperation[I, O], call: Call, agent_id: str, build: Callable[[], I]
    ) -> AsyncIterator[O]:
        """:meth:`run` for an operation that streams its results."""
        trace = self._begin(op, call, agent_id)
        try:
            value, scope = await self._enter(op, call, agent_id, build, stream=True)
            reads = self._trail is not None and op.returned is not None
            mask = self._mask(op, scope.principal)
            async for item in op.run(self.services, scope, value):
                if reads and op.returned is not None:
                    call.read = [*(call.read or []), *op.returned(item)]
                yield item if mask is None else mask(item, op.outcome_kind)
            if call.role is not Role.READ:
                self._written(scope.partition)
        except (Exception, asyncio.CancelledError) as exc:
            _failed(call, exc)
            self._mask_error(op, call.principal, exc)
            raise
        except GeneratorExit:  # the consumer stopped reading (the client went away)
            call.code = "CANCELLED"
            raise
        finally:
            self._finish(op, call, trace)

    def _written(self, partition: Partition) -> None:
        if self._on_write is not None:
            self._on_write(partition)

    # ------------------------------------------------------------------ masking

    def _mask(self, op: AnyOperation, principal: Principal) -> OutcomeMask | None:
        """The mask of what ``principal`` reads from ``op``, None when it reads it as
        stored."""
        if self._masker is None:
            return None
        return self._masker.for_principal(principal, export=op.unmasked_for_admin)

    def _mask_error(
        self, op: AnyOperation, principal: Principal | None, exc: BaseException
    ) -> None:
        """Mask an error's message for the caller: a message may quote stored data (a
        schema violation of merged working memory, a key)."""
        if principal is None or not isinstance(exc, MemorydError):
            return
        mask = self._mask(op, principal)
        if mask is None:
            return
        exc.message = mask(exc.message)
        exc.args = (exc.message,)
        if isinstance(exc, InvalidArgument):
            exc.violations = [
                FieldViolation(mask(v.field), mask(v.description)) for v in exc.violations
            ]

    # ------------------------------------------------------------------ per call

    def _begin(self, op: AnyOperation, call: Call, agent_id: str) -> CallTrace:
        trace = CallTrace.start(self.tracing, op, call)
        call.agent = canonical_id(agent_id)[:128]  # as the scope will name it
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=call.request_id, method=call.label)
        return trace

    async def _enter(
        self,
        op: AnyOperation,
        call: Call,
        agent_id: str,
        build: Callable[[], I],
        *,
        stream: bool = False,
    ) -> tuple[I, CallScope]:
        """Authenticate, build, authorise, scope and admit the call."""
        value: I | None = None
        problem: MemorydError | None = None
        try:
            value = build()
        except MemorydError as exc:
            problem = exc
        else:
            call.touch(*op.touched_in(value))  # before authenticating: denials show them
        principal = self.authenticator.authenticate(call.credentials)
        call.principal = principal
        structlog.contextvars.bind_contextvars(
            principal=principal.name, tenant=principal.tenant_id, agent=call.agent
        )
        role = call.role = op.required_role(value)
        if role not in principal.roles:
            raise PermissionDenied(
                f"principal {principal.name!r} lacks the {role.value!r} role this call needs"
            )
        wide = value is not None and op.tenant_wide is not None and op.tenant_wide(value)
        scope = tenant_scope(principal, agent_id) if wide else agent_scope(principal, agent_id)
        if self._audit is not None and role is not Role.READ:
            event = _event(op, call, STARTED)
            early = op.audit_in_log and not stream and self._audit.healthy
            if self._rides_log and early:
                # Durable with the log entry that carries the write (one fsync). While
                # the audit file refuses events, writes wait for it instead (below).
                call.admission = Admission(event, self._audit)
            elif self._beside_reads and early:
                # Fsynced while the call reads; its writes wait for it (made_durable).
                call.admission = Admission(
                    event, self._audit, durable=self._audit.admit_soon(event)
                )
            else:
                # A write runs only once its STARTED event is on disk (UNAVAILABLE else).
                await self._audit.admit(event)
        if problem is not None:
            raise problem
        assert value is not None
        return value, scope

    def _degraded(
        self, own: Sequence[Degradation], found: Sequence[Degradation]
    ) -> tuple[Degradation, ...]:
        """What the call fell back on, plus a store that is down (writes wait in the
        log, reads overlay it): such writes are applied by a background task."""
        out = list(own)
        ambient = self._states.impaired("store") if self._states is not None else []
        for item in (*found, *ambient):
            if not any(d.component == item.component for d in out):
                out.append(item)
        return tuple(out)

    def _finish(self, op: AnyOperation, call: Call, trace: CallTrace) -> None:
        elapsed_s = time.perf_counter() - call.started
        principal = call.principal
        if self._trail is not None and call.read is not None and call.code == "OK":
            assert principal is not None
            self._trail.record(
                op.name,
                principal=principal,
                agent=call.agent,
                ids=call.read,
                request_id=call.request_id,
                peer=call.peer,
            )
        trace.end(call)
        fields: dict[str, object] = {"request_id": call.request_id, "method": call.label}
        if principal is not None:
            fields.update(principal=principal.name, tenant=principal.tenant_id, agent=call.agent)
        fields.update(code=call.code, latency_ms=round(elapsed_s * 1000, 3))
        self._access.rpc(ok=call.code in ("OK", "NOT_FOUND"), fields=fields)
        if self._metrics is not None:
            self._metrics.observe_request(call.label, call.code, elapsed_s)
        is_write = call.role is not None and call.role is not Role.READ
        if call.admission is not None:
            call.admission.unlogged()  # no log entry carried it: nothing was logged
        if self._audit is not None and (is_write or call.code in DENIALS):
            self._audit.record(_event(op, call, call.code))


def _failed(call: Call, exc: BaseException) -> None:
    if isinstance(exc, asyncio.CancelledError):
        call.code = "CANCELLED"
    elif isinstance(exc, MemorydError):
        call.code = exc.status
        if exc.status in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            call.reason = exc.message
    else:
        call.code = "INTERNAL"
        log.error("unhandled error", exc_info=exc)


def _event(op: AnyOperation, call: Call, outcome: str) -> AuditEvent:
    principal = call.principal
    return AuditEvent(
        operation=op.name,
        outcome=outcome,
        request_id=call.request_id,
        principal=principal.name if principal else "",
        tenant=principal.tenant_id if principal else "",
        agent=call.agent,
        peer=call.peer,
        ids=call.ids,
        key=call.key,
        reason=call.reason,
    )
