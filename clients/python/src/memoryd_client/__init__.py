"""Python client for memoryd, the agent-memory daemon.

>>> from memoryd_client import MemorydClient
>>> with MemorydClient() as client:  # doctest: +SKIP
...     client.remember("demo", "The user prefers a dark blue colour scheme")
...     best = client.recall("demo", "what colours does the user like?")[0]
...     print(f"{best.score:.3f} {best.memory.content}")
"""

from __future__ import annotations

from memoryd_client.client import DEFAULT_TIMEOUT, MemorydClient
from memoryd_client.errors import (
    AlreadyExistsError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    MemorydError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    from_rpc_error,
)
from memoryd_client.requests import RememberItem
from memoryd_client.target import (
    ADDRESS_ENV,
    DEFAULT_ADDRESS,
    TargetError,
    default_address,
    parse_target,
)

__all__ = [
    "ADDRESS_ENV",
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT",
    "AlreadyExistsError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "FieldViolation",
    "InvalidArgumentError",
    "MemorydClient",
    "MemorydError",
    "NotFoundError",
    "PermissionDeniedError",
    "RememberItem",
    "ResourceExhaustedError",
    "TargetError",
    "UnauthenticatedError",
    "UnavailableError",
    "default_address",
    "from_rpc_error",
    "parse_target",
]
