"""What one operation is: its name, its effect (which gives the role it needs), how its
scope is drawn, what the audit log and traces record of it, how its outcome is masked,
and the code it runs against the services.

Every transport runs an operation the same way (see door.py), so an operation's
authorisation, audit fields, masking and degradation reporting are defined here once,
not per transport. ``I`` is the operation's typed input (domain types, built by the
adapter from its wire format), ``O`` what it returns (or, for a stream, each item it
yields).

Roles by effect. An operation declares what it does to the caller's data, for its
input when that matters; the role follows from the effect, never from a per-operation
choice:

- READ (role ``read``): returns data, changes nothing.
- WRITE (role ``write``): creates or changes what the call names (memory ids, a key, a
  scope, a session), or applies the operator's configured policy; what it archives
  can be restored and what it replaces stays in a history or an archive.
- DESTRUCTIVE (role ``admin``): can delete, or irreversibly merge, data beyond the ids
  the call names (Prune, Reset, Compact with merge overrides, maintenance with a
  retention override).
- ADMIN_OVERRIDE (role ``admin``): crosses the tenant's agents or overrides the
  operator's policy (tenant-wide Export, Import, Reembed, maintenance's max_entries).
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from memoryd.domain.agent_state import WorkingScope
from memoryd.domain.as_of import AsOf
from memoryd.domain.principal import CallScope, Role
from memoryd.domain.requests import Degradation
from memoryd.operations.services import Services
from memoryd.security.masked_fields import Kind
from memoryd.service.snapshot.as_of import AsOfReads

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741

#: What a call addressed, for the audit log: memory ids, and one key naming the slot
#: (a keyed-memory key, "session:<id>", "scope:<thread>/<resource>").
Touched = tuple[Sequence[str], str]
NOTHING: Touched = ((), "")


class OnSession(Protocol):
    """An input that names one session."""

    @property
    def session_id(self) -> str:
        """The session's id ("" where the input may leave it unset)."""
        ...


def session_touched(value: OnSession) -> Touched:
    """What a call on one session addresses: its key "session:<id>" ("" when unnamed)."""
    session_id = value.session_id
    return ((), f"session:{session_id}"[:1024] if session_id else "")


def scope_touched(scope: WorkingScope) -> Touched:
    """What a call on one working-memory scope addresses: "scope:<thread>/<resource>"."""
    return ((), f"scope:{scope.thread_id}/{scope.resource_id}"[:1024])


class Effect(enum.Enum):
    """What an operation does to the caller's data (see the module's docstring)."""

    READ = "read"
    WRITE = "write"
    DESTRUCTIVE = "destructive"
    ADMIN_OVERRIDE = "admin override"

    @property
    def role(self) -> Role:
        """The role a call with this effect needs."""
        return _ROLES[self]


_ROLES = {
    Effect.READ: Role.READ,
    Effect.WRITE: Role.WRITE,
    Effect.DESTRUCTIVE: Role.ADMIN,
    Effect.ADMIN_OVERRIDE: Role.ADMIN,
}


_RANK = {effect: rank for rank, effect in enumerate(Effect)}


def _nothing(_: Any) -> Touched:
    return NOTHING


def _no_degradations(_: Any) -> Sequence[Degradation]:
    return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Definition(Generic[I, O]):
    #: "<Service>.<Method>": the audit log's and read trail's operation name, and the
    #: gRPC method it is served as (/memoryd.v1.<Service>/<Method>).
    name: str
    #: What the operation does to the caller's data, whatever its input.
    effect: Effect
    #: The effect of an input when it depends on it (deleting overrides, a
    #: tenant-wide export): the larger of this and ``effect``.
    effect_of: Callable[[I], Effect] | None = None
    #: The GenAI memory operation (gen_ai.operation.name), "" when none fits.
    genai: str = ""
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
    #: How strings of the outcome outside any dataclass are masked (a list of ids:
    #: KEEP); strings inside one follow security/masked_fields.py.
    outcome_kind: Kind = Kind.TEXT
    #: An admin reads the outcome unmasked whatever its clearance (Export: a backup
    #: must restore exactly what was stored).
    unmasked_for_admin: bool = False
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

    @property
    def role(self) -> Role:
        """The role of the operation's own effect (an input may need more)."""
        return self.effect.role

    def effect_for(self, value: I | None) -> Effect:
        """The effect of a call with input ``value`` (None: one that could not be
        built, which runs nothing: the operation's own effect)."""
        if value is None or self.effect_of is None:
            return self.effect
        found = self.effect_of(value)
        return found if _RANK[found] > _RANK[self.effect] else self.effect

    def required_role(self, value: I | None) -> Role:
        """The role a call with input ``value`` needs: its effect's."""
        return self.effect_for(value).role


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation(_Definition[I, O]):
    """A request-response operation."""

    run: Callable[[Services, CallScope, I], Awaitable[O]]


class AtSomeMoment(Protocol):
    """An input that may name a moment of the past to read as of."""

    @property
    def as_of(self) -> AsOf | None:
        """The moment (None: now)."""
        ...


A = TypeVar("A", bound=AtSomeMoment)


def now_or_as_of(
    now: Callable[[Services, CallScope, A], Awaitable[O]],
    then: Callable[[AsOfReads, CallScope, A, AsOf], Awaitable[O]],
) -> Callable[[Services, CallScope, A], Awaitable[O]]:
    """An operation's ``run`` for a read that may be as of a moment: ``now`` for the
    present, else ``then`` on the as-of reads (UNIMPLEMENTED where the server has
    none), the moment the input names passed to it."""

    def run(services: Services, scope: CallScope, value: A) -> Awaitable[O]:
        if value.as_of is None:
            return now(services, scope, value)
        return then(services.as_of, scope, value, value.as_of)

    return run


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamOperation(_Definition[I, O]):
    """An operation that streams its results (progress, then a result; or records)."""

    run: Callable[[Services, CallScope, I], AsyncIterator[O]]
