"""Errors raised by the client: one :class:`MemorydError` per failed call.

The daemon answers bad input with INVALID_ARGUMENT and a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer whose details hold a ``google.rpc.BadRequest``;
:func:`from_rpc_error` decodes its field violations so callers (and ``memoryctl``)
can say exactly which field was wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"
REQUEST_ID_KEY = "x-request-id"


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One invalid request field, e.g. ``FieldViolation("content", "must not be empty")``."""

    field: str
    description: str

    def __str__(self) -> str:
        return f"{self.field}: {self.description}"


class MemorydError(Exception):
    """A failed memoryd call: the gRPC status code, message and field violations.

    ``code`` is a :class:`grpc.StatusCode`; ``code_name`` its name (``"NOT_FOUND"``).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        field_violations: Iterable[FieldViolation] = (),
        *,
        request_id: str = "",
    ) -> None:
        self.code = code
        self.message = message
        self.field_violations: tuple[FieldViolation, ...] = tuple(field_violations)
        self.request_id = request_id
        super().__init__(f"{self.code_name}: {message}")

    @property
    def code_name(self) -> str:
        return self.code.name

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code_name}, message={self.message!r}, "
            f"field_violations={list(self.field_violations)!r})"
        )


class InvalidArgumentError(MemorydError):
    """INVALID_ARGUMENT: see ``field_violations``."""


class NotFoundError(MemorydError):
    """NOT_FOUND."""


class AlreadyExistsError(MemorydError):
    """ALREADY_EXISTS."""


class FailedPreconditionError(MemorydError):
    """FAILED_PRECONDITION, e.g. an ``if_version`` that no longer matches."""


class PermissionDeniedError(MemorydError):
    """PERMISSION_DENIED."""


class UnauthenticatedError(MemorydError):
    """UNAUTHENTICATED."""


class ResourceExhaustedError(MemorydError):
    """RESOURCE_EXHAUSTED: a quota or limit was reached."""


class UnavailableError(MemorydError):
    """UNAVAILABLE: no daemon answers at the address, or a dependency is down."""


class DeadlineExceededError(MemorydError):
    """DEADLINE_EXCEEDED: the call took longer than its timeout."""


class UnimplementedError(MemorydError):
    """UNIMPLEMENTED: the daemon does not have this RPC (yet, or not enabled)."""


class InternalError(MemorydError):
    """INTERNAL: the daemon failed; the message carries its request id for the logs."""


_BY_CODE: dict[grpc.StatusCode, type[MemorydError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.INTERNAL: InternalError,
}


def make_error(
    code: grpc.StatusCode,
    message: str,
    field_violations: Iterable[FieldViolation] = (),
    *,
    request_id: str = "",
) -> MemorydError:
    """The :class:`MemorydError` subclass for ``code``."""
    cls = _BY_CODE.get(code, MemorydError)
    return cls(code, message, field_violations, request_id=request_id)


def invalid_argument(field: str, description: str) -> MemorydError:
    """A client-side INVALID_ARGUMENT, shaped like the daemon's."""
    return make_error(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"invalid argument: {field}: {description}",
        [FieldViolation(field, description)],
    )


def field_violations_from_status(status: status_pb2.Status) -> list[FieldViolation]:
    """The BadRequest field violations packed in a ``google.rpc.Status``'s details."""
    violations: list[FieldViolation] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            violations.extend(
                FieldViolation(v.field, v.description) for v in bad_request.field_violations
            )
    return violations


def _metadata_value(metadata: Iterable[Any] | None, key: str) -> str | bytes | None:
    for k, v in metadata or ():
        if k == key and isinstance(v, str | bytes):
            return v
    return None


def status_from_trailers(metadata: Iterable[Any] | None) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` in ``grpc-status-details-bin``, or None (absent / garbled)."""
    raw = _metadata_value(metadata, STATUS_DETAILS_KEY)
    if raw is None:
        return None
    status = status_pb2.Status()
    try:
        status.ParseFromString(raw if isinstance(raw, bytes) else raw.encode("latin-1"))
    except Exception:  # a malformed trailer must not hide the original error
        return None
    return status


def _rich_status(error: grpc.RpcError) -> status_pb2.Status | None:
    """The call's google.rpc.Status: via grpcio-status when installed, else by hand."""
    try:
        from grpc_status import rpc_status
    except ImportError:  # pragma: no cover - grpcio-status is optional for the client
        rpc_status = None
    if rpc_status is not None:
        try:
            return rpc_status.from_call(error)
        except Exception:  # code/message mismatch, garbled trailer, not a Call: by hand
            pass
    try:
        metadata = error.trailing_metadata()
    except Exception:
        return None
    return status_from_trailers(metadata)


def from_rpc_error(error: grpc.RpcError) -> MemorydError:
    """Convert a :class:`grpc.RpcError` (a failed call) into a :class:`MemorydError`."""
    code = _call(error, "code") or grpc.StatusCode.UNKNOWN
    message = _call(error, "details") or ""
    status = _rich_status(error)
    violations = field_violations_from_status(status) if status is not None else []
    request_id = _metadata_value(_call(error, "trailing_metadata"), REQUEST_ID_KEY) or ""
    if isinstance(request_id, bytes):
        request_id = request_id.decode("utf-8", "replace")
    if not message and status is not None:
        message = status.message
    return make_error(code, str(message), violations, request_id=request_id)


def _call(error: Any, method: str) -> Any:
    fn = getattr(error, method, None)
    if fn is None:
        return None
    try:
        return fn()
    except Exception:
        return None
