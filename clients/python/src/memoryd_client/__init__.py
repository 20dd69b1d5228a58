"""Python client for memoryd, the agent-memory daemon.

>>> from memoryd_client import MemorydClient
>>> with MemorydClient() as client:  # doctest: +SKIP
...     client.remember("demo", "The user prefers a dark blue colour scheme")
...     best = client.recall("demo", "what colours does the user like?")[0]
...     print(f"{best.score:.3f} {best.memory.content}")

:class:`AsyncMemorydClient` has the same helpers for asyncio; ``memoryd_client.tools``
turns memory into tools for a model, ``memoryd_client.prompt`` puts it into a prompt.
"""

from __future__ import annotations

from memoryd_client.aio import AsyncMemorydClient
from memoryd_client.client import MemorydClient
from memoryd_client.core import NO_RETRY, RetryPolicy
from memoryd_client.errors import (
    AlreadyExistsError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InternalError,
    InvalidArgumentError,
    MemorydError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    from_rpc_error,
)
from memoryd_client.prompt import MemoryContext, inject_context
from memoryd_client.requests import JsonText, RememberItem
from memoryd_client.results import (
    KeyEntry,
    Memory,
    Message,
    Page,
    Profile,
    Recalled,
    RecallHit,
    Remembered,
    SessionAttachment,
    SessionMessages,
    SessionWindow,
    Snapshot,
    ToolCall,
    WorkingMemory,
)
from memoryd_client.target import (
    ADDRESS_ENV,
    DEFAULT_ADDRESS,
    TargetError,
    default_address,
    parse_target,
)
from memoryd_client.tools import (
    AGENT_CONTROL_TOOLS,
    TOOL_NAMES,
    AsyncMemoryTools,
    MemoryTools,
    ToolContext,
    UnknownToolError,
    tool_definitions,
)
from memoryd_client.transport import API_KEY_ENV, DEFAULT_TIMEOUT, TlsConfig

__all__ = [
    "ADDRESS_ENV",
    "AGENT_CONTROL_TOOLS",
    "API_KEY_ENV",
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "TOOL_NAMES",
    "AlreadyExistsError",
    "AsyncMemoryTools",
    "AsyncMemorydClient",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "FieldViolation",
    "InternalError",
    "InvalidArgumentError",
    "JsonText",
    "KeyEntry",
    "Memory",
    "MemoryContext",
    "MemoryTools",
    "MemorydClient",
    "MemorydError",
    "Message",
    "NotFoundError",
    "Page",
    "PermissionDeniedError",
    "Profile",
    "RecallHit",
    "Recalled",
    "RememberItem",
    "Remembered",
    "ResourceExhaustedError",
    "RetryPolicy",
    "SessionAttachment",
    "SessionMessages",
    "SessionWindow",
    "Snapshot",
    "TargetError",
    "TlsConfig",
    "ToolCall",
    "ToolContext",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownToolError",
    "WorkingMemory",
    "default_address",
    "from_rpc_error",
    "inject_context",
    "parse_target",
    "tool_definitions",
]
