"""One exception hierarchy. Each class names the status it maps to (gRPC's names);
each transport turns them into its own errors in one place: api/rpc.py into gRPC
statuses, memoryd/mcp into MCP tool errors."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One invalid field: its path in the request (e.g. ``items[3].content``) and why."""

    field: str
    description: str


class MemorydError(Exception):
    """Base of every error memoryd raises on purpose."""

    #: Name of the grpc.StatusCode member this error maps to.
    status: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(MemorydError):
    """Bad input; carries field violations (google.rpc.BadRequest on the wire)."""

    status = "INVALID_ARGUMENT"
    #: Violations named in the message (all of them travel in ``violations``): a batch
    #: of 1,000 bad items must not build a status message larger than gRPC's metadata
    #: limit (the client would see RESOURCE_EXHAUSTED instead of the reason).
    SUMMARY_LIMIT: ClassVar[int] = 5

    def __init__(self, violations: Iterable[FieldViolation] | FieldViolation) -> None:
        self.violations = (
            [violations] if isinstance(violations, FieldViolation) else list(violations)
        )
        shown = self.violations[: self.SUMMARY_LIMIT]
        summary = "; ".join(f"{v.field}: {v.description}" for v in shown)
        hidden = len(self.violations) - len(shown)
        if hidden:
            summary += f"; and {hidden} more"
        super().__init__(f"invalid argument: {summary}")

    @classmethod
    def field(cls, field: str, description: str) -> InvalidArgument:
        """The error of one bad field."""
        return cls(FieldViolation(field, description))


class NotFound(MemorydError):
    """The thing does not exist (or the caller may not see it: the same answer)."""

    status = "NOT_FOUND"


class FailedPrecondition(MemorydError):
    """A precondition of the request (if_version, if_match, ...) does not hold."""

    status = "FAILED_PRECONDITION"


class OutOfRange(MemorydError):
    """A request reaches past what is kept (an ``as_of`` older than the history's
    horizon); the message names the field and the horizon."""

    status = "OUT_OF_RANGE"


class PermissionDenied(MemorydError):
    """The caller is known but may not do this (role, agent or clearance)."""

    status = "PERMISSION_DENIED"


class Unauthenticated(MemorydError):
    """No credential, or one the daemon does not know."""

    status = "UNAUTHENTICATED"


class ResourceExhausted(MemorydError):
    """A quota or limit was reached; the message names the limit."""

    status = "RESOURCE_EXHAUSTED"


class Unavailable(MemorydError):
    """A dependency needed to serve the request safely is down; retry later."""

    status = "UNAVAILABLE"


class Aborted(MemorydError):
    """A write lost every attempt at a record other writers kept changing (replicas
    over a shared store); nothing was written: retry."""

    status = "ABORTED"


class Unimplemented(MemorydError):
    """The operation is not served by this server."""

    status = "UNIMPLEMENTED"


class DataLoss(MemorydError):
    """A stored record the caller asked for by name can no longer be read (it holds
    what the daemon refuses today, written before the rule); listings skip such a
    record instead, reporting a degradation."""

    status = "DATA_LOSS"


class EmbeddingError(Unavailable):
    """The embedding provider failed (timeout, HTTP error, model error)."""


class StoreError(Unavailable):
    """The storage backend failed. Its message is written for clients (never the
    backend's own text: see storage/failures.py); ``cause`` classifies why."""

    def __init__(self, message: str, *, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause
